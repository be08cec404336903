/** What a run hands to its parts: the API port, the warehouse, logger, options and counters. */
import type { Logger } from 'pino';
import { isInterruption } from '../abort.ts';
import { isGeoApiError } from '../api/errors.ts';
import { endpointId, type EndpointId } from '../api/endpoints.ts';
import type { RejectedRecord } from '../api/client.ts';
import { unitKey, type Unit } from './planner.ts';
import type { Config } from '../config.ts';
import type { ApiPort } from '../extract/port.ts';
import { ReadShortcuts } from '../extract/shortcuts.ts';
import type { StoredUnitExecutions, Warehouse, Written } from '../load/warehouse.ts';
import { cutBelow, jsonDepthExceeds, MAX_STORED_JSON_DEPTH } from '../json-text.ts';
import type { RankDetail } from '../api/schemas/hierarchical.ts';
import { rankRawValues } from '../api/schemas/rank-number.ts';
import type { Json, RejectRow } from '../transform/rows.ts';
import { rowsByTable } from './batch.ts';
import { isolateFailures } from './isolate.ts';
import { Slots } from './slots.ts';
import type { StoredDays } from './stored-days.ts';
import { GroupWriter, writerLimits } from './writer.ts';
import { RollupRefresher } from './rollup-refresh.ts';

export interface RunCounters {
  rows: Record<string, number>;
  rejects: number;
  goneExecutions: number;
  failedExecutions: number;
  unitsTotal: number;
  unitsDone: number;
  unitsFailed: number;
  unitsSkipped: number;
  diagnosesNotStarted: number;
  crossCheckMismatches: number;
  /** Children of listed executions that answered 404 (reject reason `child_not_found`). */
  childrenNotFound: number;
  /** Children whose response did not match the spec and was quarantined (reason `invalid_child`). */
  childrenInvalid: number;
  /** Units whose task/results and task/prompts lists disagreed: nothing deleted for them. */
  unitsListMismatch: number;
  /** Text and JSON values stored changed by the text rule (load/text.ts). */
  textValuesChanged: number;
  /** Listed executions whose children were requested. */
  executionsRead: number;
  /** Listed executions left as stored: fingerprint unchanged, children complete last time. */
  executionsUnchanged: number;
  /** Listings of an execution its unit had listed already (paging shifted): the last copy kept. */
  executionsListedTwice: number;
  /**
   * Rank numbers (position, visibility, score) stored as NULL with the value the API sent kept in
   * execution_ranks.raw_values: no integer of their column (a dash, a fraction, text). Counted as
   * read (an execution listed twice counts each copy read).
   */
  rankValuesKeptRaw: number;
  /**
   * Requests not made because they could bring nothing (the API's rate bounds a run): task/prompts of units whose
   * listing is complete and lists every stored execution, prompt/products of platform tasks that
   * answered `unsupported` this run, prompt/screenshot of executions listed without one.
   */
  notAsked: { crossChecks: number; products: number; screenshots: number };
  /**
   * Executions left out because their rows failed to write alone (a value the warehouse refuses):
   * quarantined with reason `write_failed: ...`, their units completed (isolate.ts).
   */
  executionsNotStored: number;
  /** Rows of the other tables (monitoring and platform tasks, diagnoses, ...) left out the same way. */
  recordsNotStored: number;
}

export function newCounters(): RunCounters {
  return {
    rows: {},
    rejects: 0,
    goneExecutions: 0,
    failedExecutions: 0,
    unitsTotal: 0,
    unitsDone: 0,
    unitsFailed: 0,
    unitsSkipped: 0,
    diagnosesNotStarted: 0,
    crossCheckMismatches: 0,
    childrenNotFound: 0,
    childrenInvalid: 0,
    unitsListMismatch: 0,
    textValuesChanged: 0,
    executionsRead: 0,
    executionsUnchanged: 0,
    executionsListedTwice: 0,
    rankValuesKeptRaw: 0,
    notAsked: { crossChecks: 0, products: 0, screenshots: 0 },
    executionsNotStored: 0,
    recordsNotStored: 0,
  };
}

/** What a quarantined row's record came from: the endpoint that answered it, and its parameters. */
export interface RecordOrigin {
  endpoint: EndpointId;
  params: Record<string, unknown>;
}

/** The reason of a record quarantined because the warehouse refused its rows. */
export const writeFailedReason = (databaseMessage: string) => `write_failed: ${databaseMessage}`;

/**
 * A row as the quarantine keeps it (JSON): a number JSON cannot hold (NaN, Infinity) or a bigint
 * as its text, so the value the warehouse refused stays visible instead of becoming null.
 */
function rawRow(row: unknown): unknown {
  if (row === null || typeof row !== 'object' || Array.isArray(row)) return row;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) {
    out[k] = (typeof v === 'number' && !Number.isFinite(v)) || typeof v === 'bigint' ? String(v) : v;
  }
  return out;
}

/** Executions one unit keeps in flight: two pages' worth keeps the queue busy across pages. */
export function executionWindow(batchSize: number): number {
  return Math.max(200, batchSize);
}

export class RunContext {
  readonly counters = newCounters();
  private pendingRejects: RejectRow[] = [];
  /** prompt_task_ids of quarantined task/results items, per unit key: still listed upstream. */
  private readonly rejectedByUnit = new Map<string, number[]>();

  /**
   * Executions in flight over all units at once: two units' windows, whatever the number of units
   * the headroom lets read in parallel.
   */
  readonly executionSlots: Slots;

  /** One group-commit writer per run: every unit's rows and completions go through it. */
  readonly writer: GroupWriter;
  /** Refreshes the aggregates of the units the writer marked stale (during the run and at its end). */
  readonly rollups: RollupRefresher;

  /**
   * Set by a run over whole days (runSync): its units' stored executions read a day at a time
   * (stored-days.ts). Unset (a distributed worker's job, one unit): each unit reads its own.
   */
  storedDays: StoredDays | null = null;

  /** The unit's stored executions, as one read at its start gives them. */
  storedExecutions(unit: Unit): Promise<StoredUnitExecutions> {
    return this.storedDays?.of(unit) ?? this.warehouse.unitExecutions(unit.task_id, unit.date);
  }

  /** Child requests whose answer the run already knows (shortcuts.ts), counted in `notAsked`. */
  readonly shortcuts = new ReadShortcuts(this.counters.notAsked);

  constructor(
    readonly runId: string,
    readonly api: ApiPort,
    readonly warehouse: Warehouse,
    readonly logger: Logger,
    readonly config: Config,
    readonly signal: AbortSignal | undefined,
    readonly now: () => Date,
  ) {
    this.executionSlots = new Slots(2 * executionWindow(config.batchSize));
    const { maxPendingExecutions: pending, linger } = writerLimits(config);
    this.rollups = new RollupRefresher(warehouse, logger);
    this.writer = new GroupWriter(
      async (batch, completions) => {
        // Stopped for a reason other than an interruption (the lock was lost): another run may
        // be writing now, so nothing more is committed. An interruption still lets read units
        // commit.
        if (signal?.aborted && !isInterruption(signal.reason)) throw signal.reason;
        // Rejects first, in their own statement: a checkpoint is never committed before the
        // quarantine rows of its unit. Their own failure is none of the batch's rows: never
        // taken for a data error of those (which would be isolated).
        await this.flushRejects().catch((e: unknown) => {
          throw warehouse.dataError(e) === null
            ? e
            : new Error(`quarantined records could not be written: ${(e as Error).message}`, { cause: e });
        });
        this.wrote(await warehouse.writeExecutionBatch(batch, completions));
        await this.rollups.wrote(batch.executions.length);
      },
      pending,
      this.counters.rows,
      pending,
      {
        dataError: (e) => warehouse.dataError(e),
        quarantine: (x) => {
          this.counters.executionsNotStored++;
          this.logger.error(
            { task_id: x.task_id, date: x.date, prompt_task_id: x.prompt_task_id, reason: x.reason },
            'execution not stored: its rows failed to write (quarantined; the other executions were stored)',
          );
          this.reject({
            endpoint: endpointId('taskResults'),
            params: { task_id: x.task_id, date: x.date, prompt_task_id: x.prompt_task_id },
            reason: writeFailedReason(x.reason),
            raw: Object.fromEntries(
              Object.entries(rowsByTable(x.rows)).map(([table, rows]) => [table, rows.map(rawRow)]),
            ) as Json,
          });
        },
      },
      linger,
    );
  }

  /**
   * Writes small-table rows with `write` (one warehouse call, one transaction). When that fails
   * because of some rows' values (Warehouse.dataError), the rows are written again in halves
   * (isolate.ts) and each row whose write fails alone is quarantined as coming from `origin`
   * (reason `write_failed: ...`) and counted; the others are stored. Any other failure is thrown
   * as it comes. Returns the rows stored.
   */
  async writeRecords<R>(
    rows: readonly R[],
    write: (rows: readonly R[]) => Promise<Written>,
    origin: (row: R) => RecordOrigin,
  ): Promise<number> {
    if (rows.length === 0) return 0;
    try {
      this.wrote(await write(rows));
      return rows.length;
    } catch (e) {
      const reason = this.warehouse.dataError(e);
      if (reason === null) throw e;
      let stored = 0;
      await isolateFailures(rows, {
        write: async (part) => {
          this.wrote(await write(part));
          stored += part.length;
        },
        dataError: (error) => this.warehouse.dataError(error),
        failed: (row, f) => {
          this.counters.recordsNotStored++;
          const { endpoint, params } = origin(row);
          this.logger.error(
            { endpoint, params, reason: f.reason },
            'record not stored: its row failed to write',
          );
          this.reject({ endpoint, params, reason: writeFailedReason(f.reason), raw: rawRow(row) });
        },
        failure: { error: e, reason },
      });
      return stored;
    }
  }

  /** Counts what a warehouse write reports (the text rule's changes). */
  wrote(w: Written): void {
    this.counters.textValuesChanged += w.textValuesChanged;
  }

  addRows(table: string, n: number): void {
    this.counters.rows[table] = (this.counters.rows[table] ?? 0) + n;
  }

  /** The client's reject sink: quarantine with endpoint, parameters, reason and raw payload. */
  reject(r: RejectedRecord): void {
    this.counters.rejects++;
    this.pendingRejects.push({
      run_id: this.runId,
      endpoint: r.endpoint,
      params: r.params as Json,
      reason: r.reason,
      // Kept as JSON: a payload nested deeper than a JSON column takes is kept cut at that depth.
      raw: (jsonDepthExceeds(r.raw, MAX_STORED_JSON_DEPTH)
        ? cutBelow(r.raw, MAX_STORED_JSON_DEPTH)
        : (r.raw ?? null)) as Json,
      seen_at: this.now().toISOString(),
    });
    this.logger.warn({ endpoint: r.endpoint, params: r.params, reason: r.reason }, 'record quarantined');
    const raw = r.raw as { prompt_task_id?: unknown } | null;
    // Quarantined items of a unit's lists are still listed upstream: never deleted as unlisted.
    const listed = r.endpoint.endsWith('/geo/task/results') || r.endpoint.endsWith('/geo/task/prompts');
    if (listed && raw && typeof raw.prompt_task_id === 'number') {
      const key = unitKey({ task_id: Number(r.params.task_id), date: String(r.params.date) });
      const list = this.rejectedByUnit.get(key) ?? [];
      list.push(raw.prompt_task_id);
      this.rejectedByUnit.set(key, list);
    }
  }

  #keyCheck: Promise<unknown> | null = null;

  /**
   * After a 403 inside a unit: the key's own refusal (auth/user answers 401/403), or null when
   * the key is fine and the 403 was about that task's data. Concurrent askers share one request.
   */
  keyRefusal(): Promise<unknown> {
    this.#keyCheck ??= this.api
      .checkKey()
      .then(
        () => null,
        (e: unknown) =>
          isGeoApiError(e) && (e.code === 'UNAUTHORIZED' || e.code === 'FORBIDDEN') ? e : null,
      )
      .finally(() => {
        this.#keyCheck = null;
      });
    return this.#keyCheck;
  }

  /** A few of the rank numbers kept raw, for the run's one warning about them. */
  private readonly rawRankSamples: { prompt_task_id: number; field: string; sent: unknown }[] = [];

  /** Counts an execution's rank numbers stored as NULL with their raw value kept (rank-number.ts). */
  noteRankRawValues(promptTaskId: number, ranks: readonly RankDetail[]): void {
    for (const r of ranks) {
      const raw = rankRawValues(r);
      if (!raw) continue;
      for (const [field, sent] of Object.entries(raw)) {
        this.counters.rankValuesKeptRaw++;
        if (this.rawRankSamples.length < 5)
          this.rawRankSamples.push({ prompt_task_id: promptTaskId, field, sent });
      }
    }
  }

  /**
   * One warning per run (never one per value: a server that sends "-" does so in every answer)
   * when rank numbers were stored as NULL with their raw value kept, with a few examples.
   */
  warnRankRawValues(): void {
    if (this.counters.rankValuesKeptRaw === 0) return;
    this.logger.warn(
      { rankValuesKeptRaw: this.counters.rankValuesKeptRaw, examples: this.rawRankSamples },
      'rank numbers that are no integer of their column were stored as NULL, the value sent kept in execution_ranks.raw_values',
    );
  }

  rejectedIdsOf(unitKey: string): number[] {
    return this.rejectedByUnit.get(unitKey) ?? [];
  }

  async flushRejects(): Promise<void> {
    if (this.pendingRejects.length === 0) return;
    const rows = this.pendingRejects;
    this.pendingRejects = [];
    this.wrote(await this.warehouse.insertRejects(rows));
  }
}
