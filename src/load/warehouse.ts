/**
 * The one Warehouse interface, implemented once by load/core over the drivers of load/postgres
 * and load/duckdb. Callers (the sync) never see SQL dialects; every write is idempotent by the
 * API's own keys.
 */
import type {
  BalanceSnapshotRow,
  CheckpointRow,
  DeductionRow,
  ExecutionBatch,
  Json,
  MonitoringTaskConfigRow,
  MonitoringTaskRow,
  PlatformTaskPromptsRow,
  PlatformTaskRow,
  RejectRow,
  SiteDiagnosisRow,
  SyncRunRow,
  UnitFailureRow,
} from '../transform/rows.ts';

export type { UnitFailureRow };

export type Dialect = 'postgres' | 'duckdb';

/** The tables of schema `geo` that hold API data, in the order a summary lists them. */
export const DATA_TABLES = [
  'monitoring_tasks',
  'platform_tasks',
  'prompt_executions',
  'execution_ranks',
  'execution_sources',
  'execution_screenshots',
  'execution_products',
  'product_cards',
  'site_diagnoses',
  'balance_snapshots',
  'deductions',
] as const;
export type DataTable = (typeof DATA_TABLES)[number];

/** The tables built from an execution: what its own endpoints give, and what `verify` compares. */
export const VERIFIED_TABLES = [
  'prompt_executions',
  'execution_ranks',
  'execution_sources',
  'execution_screenshots',
  'execution_products',
  'product_cards',
] as const;
export type VerifiedTable = (typeof VERIFIED_TABLES)[number];

export interface MigrateResult {
  applied: string[];
  alreadyApplied: string[];
  /** One line per thing a migration did beyond its schema (e.g. filling the aggregates). */
  notes: string[];
}

/** Closing a unit: which executions of (task_id, date) the API returned this time. */
export interface UnitCompletion {
  task_id: number;
  date: string;
  /** Every prompt_task_id the API listed for the unit (including quarantined ones). */
  seenPromptTaskIds: number[];
  /**
   * Whether the unit's executions that are not in `seenPromptTaskIds` are deleted. False when the
   * walk cannot trust its listing to be whole (e.g. offset paging shifted under it): then nothing
   * is deleted and only the checkpoint is recorded. @default true
   */
  deleteUnlisted?: boolean;
  checkpoint: CheckpointRow;
}

/** What the warehouse records about the units of some days (`geo-sync state`). */
export interface UnitRecords {
  checkpoints: CheckpointRow[];
  failures: UnitFailureRow[];
}

/** What forgetUnits removed. */
export interface ForgottenUnits {
  /** The units whose checkpoint was deleted, oldest day first, then by task. */
  checkpoints: { task_id: number; date: string }[];
  /** Failure records deleted with them. */
  failures: number;
  /** Change-detection fingerprints of the units' executions deleted with them. */
  fingerprints: number;
}

/**
 * An ownership check run inside a write transaction, just before COMMIT: `sql` must return a row
 * while the writer still owns what it writes for (and should lock that row FOR SHARE, so the
 * ownership cannot change until the transaction ends). No row: the transaction rolls back with a
 * FenceLostError and `onLost` is told.
 */
export interface Fence {
  /** What is owned, for messages: `the warehouse lock`, `job <id>`. */
  what: string;
  sql: string;
  params: readonly (string | number | null)[];
  onLost?: (error: Error) => void;
  /** Set on the warehouse lock's fence: a view that carries it checks it instead of the live one. */
  lock?: true;
}

/**
 * `exclusive`: sync, backfill, state reset (one at a time, and no worker at work). `shared`:
 * distributed workers, any number at once, while no exclusive holder is.
 */
export type LockMode = 'exclusive' | 'shared';

export interface LockResult {
  acquired: boolean;
  /** Who holds it when not acquired (pid@host since time), if known. */
  holder?: string | undefined;
}

/**
 * What a write that stores API data reports: the text and JSON values the text rule (text.ts)
 * changed (U+0000 dropped, lone surrogates as U+FFFD), for the run summary and geo.sync_runs.
 */
export interface Written {
  textValuesChanged: number;
}

/** What `--dry-run` counts of a stored unit (Warehouse.storedUnits). */
export interface StoredUnitCounts {
  executions: number;
  /** Executions whose children were read completely last time. */
  complete: number;
  /** Executions stored without a screenshot URL (null or empty): no screenshot request. */
  withoutScreenshot: number;
  /** Executions whose stored products say the platform is unsupported. */
  unsupported: number;
}

/** A unit's stored executions (Warehouse.unitExecutions). */
export interface StoredUnitExecutions {
  /** Every execution stored for the unit (task_id, date). */
  ids: Set<number>;
  /** Fingerprints of the stored executions whose children were read completely. */
  complete: Map<number, string>;
}

/** What Warehouse.refreshStaleRollups did. */
export interface StaleRefresh {
  /** Units whose aggregates it recomputed. */
  units: number;
  /** Their executions (as counted when planned). */
  executions: number;
  /** Transactions. */
  batches: number;
}

export interface Warehouse {
  readonly dialect: Dialect;
  /** A description safe to log (no password). */
  readonly description: string;

  /** Applies missing migrations and (re)creates views; safe twice and from two processes. */
  migrate(): Promise<MigrateResult>;
  /**
   * What `migrate` has to do, without doing it or writing anything: the migrations not applied
   * yet (`001_init`, ...), and `views` when the views or the data dictionary changed.
   */
  pendingMigrations(): Promise<string[]>;

  upsertMonitoringTasks(rows: readonly MonitoringTaskRow[]): Promise<Written>;
  /** Sets the legacy configuration columns of existing monitoring tasks. */
  updateMonitoringTaskConfig(rows: readonly MonitoringTaskConfigRow[]): Promise<Written>;
  upsertPlatformTasks(rows: readonly PlatformTaskRow[]): Promise<Written>;
  updatePlatformTaskPrompts(rows: readonly PlatformTaskPromptsRow[]): Promise<Written>;

  /**
   * One transaction: upsert executions, replace their children (see ExecutionBatch), then close
   * the given units (as completeUnit does). A unit's checkpoint thus commits with its last rows.
   */
  writeExecutionBatch(batch: ExecutionBatch, completions?: readonly UnitCompletion[]): Promise<Written>;

  /**
   * One transaction: delete the unit's executions (and their children) that the API no longer
   * lists, then record the checkpoint. Called after every batch of the unit is committed, so a
   * checkpoint never exists without its rows.
   */
  completeUnit(unit: UnitCompletion): Promise<void>;
  /**
   * Change detection: the fingerprints of the unit's stored executions whose children were read
   * completely, by prompt_task_id (an execution no longer stored has none).
   */
  completeFingerprints(task_id: number, date: string): Promise<Map<number, string>>;
  /**
   * One read of the unit's stored executions: every prompt_task_id (what its completion could
   * delete, which decides whether the cross-check is asked) and, among them, the fingerprints of those read completely (change detection).
   */
  unitExecutions(task_id: number, date: string): Promise<StoredUnitExecutions>;
  /**
   * unitExecutions of the units of a day's platform tasks `taskIds` in one read, by platform task
   * (a unit with nothing stored has no entry); null when they hold more than `max` executions
   * (read each unit alone then, to bound memory).
   */
  dayExecutions(
    date: string,
    taskIds: readonly number[],
    max: number,
  ): Promise<Map<number, StoredUnitExecutions> | null>;
  /**
   * `--dry-run`: per stored unit of `dates` (key `task_id|date`), its executions, how many of
   * them have complete children, are stored without a screenshot URL, and with products of an
   * unsupported platform.
   */
  storedUnits(dates: readonly string[]): Promise<Map<string, StoredUnitCounts>>;
  /**
   * `verify`: up to `n` stored executions chosen at random (dated `from`..`to` when given; not
   * those whose children were last read incompletely, which the next run reads again), with
   * the stored screenshot_url (whether the item named a screenshot).
   */
  sampleExecutions(
    n: number,
    range?: { from: string; to: string },
  ): Promise<{ prompt_task_id: number; screenshot_url: string | null }[]>;
  /** `verify`: the stored rows of `table` that belong to the executions `ids`, every column. */
  executionRows(table: VerifiedTable, ids: readonly number[]): Promise<Record<string, unknown>[]>;
  /**
   * `rollups refresh`: the days of `from`..`to` (every day without a range) that hold executions
   * or aggregate rows, ascending, with their executions: what a refresh has to recompute.
   */
  rollupDays(range?: { from: string; to: string }): Promise<{ date: string; executions: number }[]>;
  /**
   * One transaction: the per-day aggregates of every unit of `from`..`to` recomputed from the
   * execution tables (rows of days without executions deleted).
   */
  refreshRollups(from: string, to: string): Promise<void>;
  /**
   * The units the writes marked stale (geo.rollup_stale_units) refreshed: each batch of whole
   * units (at most a bounded number of executions) one fenced transaction. What it refreshed.
   */
  refreshStaleRollups(): Promise<StaleRefresh>;
  /** After refreshing many days: the planner's statistics of the aggregate tables (PostgreSQL). */
  analyzeRollups(): Promise<void>;
  /**
   * After a run: the tables it grew by a large share made ready for readers (PostgreSQL: VACUUM
   * (ANALYZE) of each, outside a transaction; DuckDB needs nothing). The tables tidied.
   */
  tidyGrownTables(): Promise<string[]>;
  /** Finished units among the given dates, as `${task_id}|${date}` keys. */
  finishedUnits(dates: readonly string[]): Promise<Set<string>>;
  /** Records failed units (the latest failure per unit is kept). */
  recordUnitFailures(rows: readonly UnitFailureRow[]): Promise<void>;
  /** Checkpoints and failure records of the units dated `from`..`to` (inclusive). */
  unitRecords(from: string, to: string): Promise<UnitRecords>;
  /**
   * One transaction: deletes the checkpoints and failure records of the units dated
   * `from`..`to` (of the given platform tasks only, when any are given), and the change-detection
   * fingerprints of their executions, so the next run re-reads them, every child included. Their
   * rows stay until then.
   */
  forgetUnits(from: string, to: string, taskIds?: readonly number[]): Promise<ForgottenUnits>;
  /** Every platform task the warehouse knows (geo.platform_tasks), ascending. */
  platformTaskIds(): Promise<number[]>;

  upsertSiteDiagnoses(rows: readonly SiteDiagnosisRow[]): Promise<Written>;
  insertBalanceSnapshot(row: BalanceSnapshotRow): Promise<Written>;
  upsertDeductions(rows: readonly DeductionRow[]): Promise<Written>;
  /** The day (YYYY-MM-DD, Asia/Shanghai) of the newest deduction stored, or null. */
  latestDeductionDay(): Promise<string | null>;

  insertRun(run: SyncRunRow): Promise<void>;
  updateRun(run: SyncRunRow): Promise<void>;
  listRuns(limit: number): Promise<SyncRunRow[]>;
  /**
   * Marks every run still `running` as `interrupted`, its `error` saying `note` (who found it,
   * when); returns their run IDs. Only for the holder of the exclusive lock: every run, worker
   * attempt and enqueue writes and finishes its row while it holds the lock, so one still
   * `running` then was ended without recording it (kill -9, a machine stopped). Fenced by the
   * lock: if it was lost meanwhile, nothing is marked.
   */
  interruptAbandonedRuns(note: string): Promise<string[]>;
  insertRejects(rows: readonly RejectRow[]): Promise<Written>;

  /**
   * When a write failed because of the values of the rows it carried (PostgreSQL: SQLSTATE class
   * 22, class 23 but the duplicate key the batch merge handles, 54000; DuckDB: its conversion,
   * out-of-range, invalid-input and constraint errors, and values the driver could not convert),
   * the database's message, naming the table and column where it does: the sync then finds the
   * record that fails and quarantines it alone (sync/isolate.ts). Null for every other failure
   * (a lost connection, fence or lock, an interruption): those are never retried record by record.
   */
  dataError(error: unknown): string | null;

  /** Row count per data table. */
  counts(): Promise<Record<DataTable, number>>;
  /** Read-only query for reports; `$1`-style parameters. */
  query(sql: string, params?: readonly Json[]): Promise<Record<string, unknown>[]>;

  /**
   * The no-overlap lock: one geo-sync sync per warehouse at a time, or any number of workers
   * (shared), so two runs never write, complete or delete the same units at once. While it is held, every write transaction checks at commit time that it
   * still is (PostgreSQL: the lock's connection still holds it and nobody took it over since).
   */
  tryLock(holder: string, mode?: LockMode): Promise<LockResult>;
  unlock(): Promise<void>;
  /**
   * Checks, without taking the lock, that it can be held: PostgreSQL's lock needs a session of its
   * own, and a connection pooler in transaction mode on its URL (GEO_LOCK_URL, else the
   * warehouse's) is refused with a UsageError naming GEO_LOCK_URL. Long-running commands
   * (`schedule`, `worker`) call it at start; tryLock checks the same on its first connection.
   */
  prepareLock(): Promise<void>;
  /**
   * Calls `listener` (once) if the lock held is lost without unlock(): PostgreSQL's lock
   * dies with its connection. Returns the unsubscribe. Absent where a lock cannot be lost.
   */
  onLockLost?(listener: (cause: unknown) => void): () => void;

  /**
   * The same warehouse, whose write transactions (rows, deletions, checkpoints, unit failures)
   * also check `fence` before they commit (the quarantine too). The run log is not fenced: a run
   * that lost its ownership still records what happened to it. close() of the view is a no-op.
   */
  withFence(fence: Fence): Warehouse;
  /**
   * The commit-time check of the warehouse lock as this process holds it now, to pin with
   * withFence: it keeps checking this holding (its connection, its generation) even if the lock
   * is lost and taken again meanwhile, when the live check would pass for the new holding. A
   * check that never passes when the lock is not held; null where the lock cannot be lost
   * (DuckDB's file).
   */
  heldLockFence(): Fence | null;

  close(): Promise<void>;
}
