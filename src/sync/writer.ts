/**
 * Group commit. Every unit of a run hands its rows and, at its end, its completion to one
 * writer; the writer commits everything pending in ONE transaction while the units keep
 * fetching, then takes what accumulated meanwhile. Transactions per run adapt to the
 * warehouse's commit latency instead of being two per unit (rows, then checkpoint), which on
 * DuckDB cost more than the rows themselves when units are small. A unit's checkpoint is
 * committed in the same transaction as its last rows, never before them, and never at all when
 * any of its rows failed to commit.
 */
import type { UnitCompletion } from '../load/warehouse.ts';
import type { ExecutionBatch } from '../transform/rows.ts';
import { batchRowCounts, emptyBatch } from './batch.ts';
import { unitKey } from './planner.ts';

export type CommitFn = (batch: ExecutionBatch, completions: readonly UnitCompletion[]) => Promise<void>;

interface PendingCompletion {
  completion: UnitCompletion;
  key: string;
  resolve: () => void;
  reject: (e: unknown) => void;
}

export class GroupWriter {
  private pending = emptyBatch();
  private pendingUnits = new Set<string>();
  private completions: PendingCompletion[] = [];
  private flushing: Promise<void> | null = null;
  /** Units with rows in a transaction that failed: their completion must never be written. */
  private readonly failedUnits = new Map<string, unknown>();
  transactions = 0;

  constructor(
    private readonly commit: CommitFn,
    /** Executions pending before add() waits for the writer (backpressure bounds memory). */
    private readonly maxPendingExecutions: number,
    /** Rows committed per table, accumulated as transactions commit. */
    readonly rows: Record<string, number> = {},
  ) {}

  /** Queues rows of one unit; waits only when too much is pending. */
  async add(task_id: number, date: string, batch: ExecutionBatch): Promise<void> {
    const p = this.pending;
    p.executions.push(...batch.executions);
    p.ranks.push(...batch.ranks);
    p.sources.push(...batch.sources);
    p.screenshots.push(...batch.screenshots);
    p.products.push(...batch.products);
    p.cards.push(...batch.cards);
    if (batch.kept?.length) (p.kept ??= []).push(...batch.kept);
    this.pendingUnits.add(unitKey({ task_id, date }));
    this.kick();
    while (this.pending.executions.length >= this.maxPendingExecutions && this.flushing) await this.flushing;
  }

  /** Resolves once the unit's completion is committed (with or after all its rows). */
  complete(completion: UnitCompletion): Promise<void> {
    const key = unitKey(completion);
    return new Promise<void>((resolve, reject) => {
      this.completions.push({ completion, key, resolve, reject });
      this.kick();
    });
  }

  /** Waits until everything queued so far is committed (or has failed). */
  async drain(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  private kick(): void {
    this.flushing ??= this.loop().finally(() => {
      this.flushing = null;
      // Work that arrived as the loop ended.
      if (this.pending.executions.length > 0 || this.completions.length > 0) this.kick();
    });
  }

  private async loop(): Promise<void> {
    while (this.pending.executions.length > 0 || this.completions.length > 0) {
      const batch = this.pending;
      const units = this.pendingUnits;
      const taken = this.completions;
      this.pending = emptyBatch();
      this.pendingUnits = new Set();
      this.completions = [];

      const refused = taken.filter((c) => this.failedUnits.has(c.key));
      const accepted = taken.filter((c) => !this.failedUnits.has(c.key));
      for (const c of refused) c.reject(this.failedUnits.get(c.key));
      try {
        await this.commit(
          batch,
          accepted.map((c) => c.completion),
        );
        this.transactions++;
        for (const [t, n] of Object.entries(batchRowCounts(batch))) this.rows[t] = (this.rows[t] ?? 0) + n;
        for (const c of accepted) c.resolve();
      } catch (e) {
        for (const u of units) this.failedUnits.set(u, e);
        for (const c of accepted) c.reject(e);
      }
    }
  }
}
