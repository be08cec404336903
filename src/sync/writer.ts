/**
 * Group commit. Every unit of a run hands its rows and, at its end, its completion to one
 * writer; the writer commits everything pending in ONE transaction while the units keep
 * fetching, then takes what accumulated meanwhile. Transactions per run adapt to the
 * warehouse's commit latency instead of being two per unit (rows, then checkpoint), which on
 * DuckDB cost more than the rows themselves when units are small. A unit's checkpoint is
 * committed in the same transaction as its last rows, or after them, never before them, and never
 * at all when any of its rows failed to commit, unless they were quarantined (below).
 *
 * Lingering. A transaction has a fixed cost (on DuckDB about 17 ms of CPU: the stored
 * executions looked up, an appender flushed per table, the stale units marked, the commit)
 * whatever it carries. Committing as soon as anything was pending, a run whose API answers in
 * 50 ms had its writer busy all the time with transactions of a few executions: 500 of them
 * for 1,064 executions, where a run at latency 0 needed 28, and the process spent 2.2x the CPU
 * it spends with the linger. So, given `linger`, the writer waits before a transaction that
 * would carry less than a full one (`fullTransaction` executions) until the oldest thing
 * pending has waited `ms`, then commits all of it. Units go on reading meanwhile; a full
 * transaction, a unit held by backpressure (too much pending) or a drain() ends the wait.
 *
 * A transaction that fails because of the values of some of its rows (Isolation) does not fail
 * its units: its executions are written again in halves until each execution whose rows fail
 * alone is found (isolate.ts); that execution is quarantined and left out (its stored rows, if
 * any, stay as they were), the others are stored, and the completions follow in a transaction of
 * their own. Any other failure fails every unit with rows in the transaction, and nothing is
 * retried.
 */
import type { UnitCompletion } from '../load/warehouse.ts';
import type { ExecutionBatch } from '../transform/rows.ts';
import { batchRowCounts, dropExecutions, emptyBatch, executionIdsOf, pickExecutions } from './batch.ts';
import { isolateFailures, type DataFailure } from './isolate.ts';
import { unitKey } from './planner.ts';

export type CommitFn = (batch: ExecutionBatch, completions: readonly UnitCompletion[]) => Promise<void>;

interface PendingCompletion {
  completion: UnitCompletion;
  key: string;
  /** When it was handed over (performance.now()), for the linger. */
  at: number;
  resolve: () => void;
  reject: (e: unknown) => void;
}

/**
 * One unit's rows as handed over by add(): committed whole, never split across transactions
 * (unless a transaction that holds them fails because of some rows' values: see Isolation).
 */
interface PendingPart {
  key: string;
  /** When it was handed over (performance.now()), for the linger. */
  at: number;
  task_id: number;
  date: string;
  batch: ExecutionBatch;
}

/** An execution left out of the warehouse because its rows failed to write alone. */
export interface NotStored {
  task_id: number;
  date: string;
  prompt_task_id: number;
  /** Its rows as the failed transaction carried them. */
  rows: ExecutionBatch;
  /** What the database said (Warehouse.dataError). */
  reason: string;
}

/**
 * How the writer tells and handles a transaction that failed because of some rows' values
 * (RunContext wires it to the warehouse and the quarantine). Without it, such a failure fails
 * every unit of the transaction, like any other.
 */
export interface Isolation {
  /** Warehouse.dataError: what the database said when the rows' values caused `error`, else null. */
  dataError(error: unknown): string | null;
  /** Quarantines an execution whose rows failed to write alone (it is left out). */
  quarantine(execution: NotStored): void;
}

/** How long a transaction that is not full may wait for more (see Lingering). */
export interface Linger {
  /** The longest the oldest pending part or completion waits; 0 commits at once. */
  ms: number;
  /** Executions pending that make a full transaction, committed without waiting. */
  fullTransaction: number;
}

/**
 * The bounds a run gives its writer, from its config: a transaction of `batchSize` executions is
 * full (it does not linger), and four times that may be pending before a unit waits for the
 * writer, which is also the most one transaction takes. When the writer is what bounds a run,
 * its transactions are that large. The load bench drives the writer with the same bounds.
 */
export function writerLimits(config: { batchSize: number; writeLingerMs: number }): {
  maxPendingExecutions: number;
  linger: Linger;
} {
  const full = Math.max(1, config.batchSize);
  return { maxPendingExecutions: full * 4, linger: { ms: config.writeLingerMs, fullTransaction: full } };
}

export class GroupWriter {
  /** Oldest first. Kept apart (not merged on arrival) so a transaction can take some of them. */
  private parts: PendingPart[] = [];
  private pendingExecutions = 0;
  private completions: PendingCompletion[] = [];
  private flushing: Promise<void> | null = null;
  /** Units with rows in a transaction that failed: their completion must never be written. */
  private readonly failedUnits = new Map<string, unknown>();
  /** Ends the linger under way, if any. */
  private wake: (() => void) | null = null;
  /** drain() calls under way: nothing lingers meanwhile. */
  private draining = 0;
  /** add() calls held by backpressure: nothing lingers meanwhile either. */
  private held = 0;
  transactions = 0;

  constructor(
    private readonly commit: CommitFn,
    /** Executions pending before add() waits for the writer (backpressure bounds memory). */
    private readonly maxPendingExecutions: number,
    /** Rows committed per table, accumulated as transactions commit. */
    readonly rows: Record<string, number> = {},
    /**
     * Executions one transaction takes, in whole handed-over batches (at least one). A
     * transaction used to take everything pending: with many units adding while it was busy,
     * that reached 1,783 executions on the bench's 100k day against a bound of 800, and grows
     * with the number of units reading at once. The warehouse converts and holds a transaction's
     * rows all at once, and PostgreSQL holds its locks until it ends. (The bench's peak RSS did
     * not move measurably either way: its largest transactions were rare.)
     */
    private readonly maxTransactionExecutions = maxPendingExecutions,
    /** Isolates the rows of a transaction that failed because of their values (see Isolation). */
    private readonly isolation?: Isolation,
    /** Without it, a transaction starts as soon as anything is pending. */
    private readonly linger: Linger = { ms: 0, fullTransaction: 1 },
  ) {}

  /** Queues rows of one unit; waits only when too much is pending. */
  async add(task_id: number, date: string, batch: ExecutionBatch): Promise<void> {
    this.parts.push({ key: unitKey({ task_id, date }), task_id, date, batch, at: performance.now() });
    this.pendingExecutions += batch.executions.length;
    if (this.pendingExecutions >= this.linger.fullTransaction) this.wake?.();
    this.kick();
    if (!(this.pendingExecutions >= this.maxPendingExecutions && this.flushing)) return;
    // Held by backpressure until the writer is idle again: nothing lingers while a unit waits.
    // (A small tail pending after the transaction that took this unit's rows held it up to
    // linger.ms: the memory bench's day of 10,000 executions took 14.0 s against 10.3 s.)
    this.held++;
    this.wake?.();
    try {
      while (this.pendingExecutions >= this.maxPendingExecutions && this.flushing) await this.flushing;
    } finally {
      this.held--;
    }
  }

  /** Resolves once the unit's completion is committed (with or after all its rows). */
  complete(completion: UnitCompletion): Promise<void> {
    const key = unitKey(completion);
    return new Promise<void>((resolve, reject) => {
      this.completions.push({ completion, key, resolve, reject, at: performance.now() });
      this.kick();
    });
  }

  /** Waits until everything queued so far is committed (or has failed), without lingering. */
  async drain(): Promise<void> {
    this.draining++;
    this.wake?.();
    try {
      while (this.flushing) await this.flushing;
    } finally {
      this.draining--;
    }
  }

  private kick(): void {
    this.flushing ??= this.loop().finally(() => {
      this.flushing = null;
      // Work that arrived as the loop ended.
      if (this.parts.length > 0 || this.completions.length > 0) this.kick();
    });
  }

  /** The oldest parts, up to the transaction bound (always at least one). */
  private take(): PendingPart[] {
    const taken: PendingPart[] = [];
    let executions = 0;
    while (this.parts.length > 0) {
      const next = this.parts[0]!.batch.executions.length;
      if (taken.length > 0 && executions + next > this.maxTransactionExecutions) break;
      taken.push(this.parts.shift()!);
      executions += next;
    }
    this.pendingExecutions -= executions;
    return taken;
  }

  private async loop(): Promise<void> {
    while (this.parts.length > 0 || this.completions.length > 0) {
      for (let left = this.lingerLeft(); left > 0; left = this.lingerLeft()) await this.lingerFor(left);
      const taken = this.take();
      const batch = merged(taken);
      const units = new Set(taken.map((p) => p.key));
      // A checkpoint goes with its unit's last rows: not while rows of its unit are still queued.
      const queued = new Set(this.parts.map((p) => p.key));
      const ready = this.completions.filter((c) => !queued.has(c.key));
      this.completions = this.completions.filter((c) => queued.has(c.key));

      const refused = ready.filter((c) => this.failedUnits.has(c.key));
      const accepted = ready.filter((c) => !this.failedUnits.has(c.key));
      for (const c of refused) c.reject(this.failedUnits.get(c.key));
      try {
        await this.write(batch, accepted);
        for (const c of accepted) c.resolve();
      } catch (e) {
        const reason = this.isolation?.dataError(e) ?? null;
        if (reason === null) this.fail(units, accepted, e);
        else await this.isolate(taken, batch, accepted, { error: e, reason });
      }
    }
  }

  /**
   * How long the next transaction should still wait, ms (see Lingering): 0 when a full one is
   * pending, a drain() is under way, an add() is held by backpressure, or the oldest pending
   * part or completion has waited `linger.ms`. Synchronous, so that without a wait the loop
   * takes its parts at once, before add() judges the backpressure.
   */
  private lingerLeft(): number {
    if (this.draining > 0 || this.held > 0 || this.pendingExecutions >= this.linger.fullTransaction) return 0;
    const oldest = Math.min(this.parts[0]?.at ?? Infinity, this.completions[0]?.at ?? Infinity);
    // A monotonic clock: a wall clock set back would stretch the wait.
    return Math.max(0, oldest + this.linger.ms - performance.now());
  }

  /** Resolves after `ms`, or at once when woken (more pending, a drain). */
  private lingerFor(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => this.wake?.(), ms);
      this.wake = () => {
        clearTimeout(timer);
        this.wake = null;
        resolve();
      };
    });
  }

  /** One transaction: `batch`'s rows, then the completions; counted once committed. */
  private async write(batch: ExecutionBatch, completions: readonly PendingCompletion[]): Promise<void> {
    await this.commit(
      batch,
      completions.map((c) => c.completion),
    );
    this.transactions++;
    for (const [t, n] of Object.entries(batchRowCounts(batch))) this.rows[t] = (this.rows[t] ?? 0) + n;
  }

  /** The units' rows may be missing: their completions are refused, now and when they come. */
  private fail(units: Iterable<string>, completions: Iterable<PendingCompletion>, error: unknown): void {
    for (const u of units) this.failedUnits.set(u, error);
    for (const c of completions) c.reject(error);
  }

  /**
   * After a transaction failed because of some rows' values (`failure`): its executions are
   * written again in halves, each execution whose rows fail alone quarantined and left out
   * (isolate.ts); then the completions, in a transaction after every row of their units that
   * could be written (a checkpoint still never commits before its unit's rows). A completion
   * that fails alone with a data error fails its unit only. Any other failure on the way fails
   * every unit of the transaction, as it would have at once.
   */
  private async isolate(
    taken: readonly PendingPart[],
    batch: ExecutionBatch,
    accepted: readonly PendingCompletion[],
    failure: DataFailure,
  ): Promise<void> {
    const isolation = this.isolation!;
    const dataError = (e: unknown) => isolation.dataError(e);
    // The unit of each execution (of the later part, as merged() takes a copy listed twice).
    const partOf = new Map<number, PendingPart>();
    for (const part of taken) for (const id of executionIdsOf(part.batch)) partOf.set(id, part);
    const ids = executionIdsOf(batch);
    const unsettled = new Set(accepted);
    try {
      await isolateFailures(ids, {
        write: (part) => this.write(pickExecutions(batch, new Set(part)), []),
        dataError,
        failed: (id, f) => {
          const part = partOf.get(id)!;
          const rows = pickExecutions(batch, new Set([id]));
          isolation.quarantine({
            task_id: part.task_id,
            date: part.date,
            prompt_task_id: id,
            rows,
            reason: f.reason,
          });
        },
        // With completions in it, the failure may have been a completion's: rows tried alone first.
        ...(accepted.length === 0 ? { failure } : {}),
      });
      await isolateFailures(accepted, {
        write: async (completions) => {
          await this.write(emptyBatch(), completions);
          for (const c of completions) {
            unsettled.delete(c);
            c.resolve();
          }
        },
        dataError,
        failed: (c, f) => {
          unsettled.delete(c);
          this.fail([c.key], [c], f.error);
        },
        ...(ids.length === 0 ? { failure } : {}),
      });
    } catch (e) {
      this.fail(
        taken.map((p) => p.key),
        unsettled,
        e,
      );
    }
  }
}

/**
 * One batch of the parts' rows (the part itself when there is one): every list of every part, by
 * name, so a list the batch gains is never left out of a transaction that holds several parts.
 * An execution in two parts (listed twice by its unit) is taken whole from the later part: the
 * earlier part's copy leaves the batch first, so the two copies' rows are never combined.
 */
export function merged(parts: readonly Pick<PendingPart, 'batch'>[]): ExecutionBatch {
  if (parts.length === 1) return parts[0]!.batch;
  const m: Record<string, unknown[]> = { ...emptyBatch() };
  const ids = new Set<number>();
  for (const { batch } of parts) {
    const again = new Set(batch.executions.map((e) => e.prompt_task_id).filter((id) => ids.has(id)));
    dropExecutions(m as unknown as ExecutionBatch, again);
    for (const e of batch.executions) ids.add(e.prompt_task_id);
    for (const [key, list] of Object.entries(batch) as [string, unknown[] | undefined][]) {
      if (list?.length) (m[key] ??= []).push(...list);
    }
  }
  return m as unknown as ExecutionBatch;
}
