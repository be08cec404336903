/** Errors of the load layer that callers branch on (by `code`). */
import { sizeInBytes } from './duckdb/size.ts';

/**
 * The warehouse is in use by another process: a DuckDB file that another process has open
 * (DuckDB allows one writer per file), still so after the open retried for a while. `holder`
 * is what that process recorded in its lock file when it holds the sync lock (the same text
 * tryLock reports), otherwise what DuckDB says about it (its PID).
 */
export class WarehouseLockedError extends Error {
  readonly code = 'WAREHOUSE_LOCKED';
  readonly holder: string | undefined;

  constructor(message: string, holder: string | undefined, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'WarehouseLockedError';
    this.holder = holder;
  }
}

/**
 * A write was refused at commit time because its writer no longer owns what it writes for: the
 * warehouse lock was lost or taken over, or the distributed job was expired and handed to
 * another worker. The transaction was rolled back; nothing of it is in the warehouse.
 */
export class FenceLostError extends Error {
  readonly code = 'FENCE_LOST';
  readonly retryable = false;
  /** What was lost: `the warehouse lock`, `job <id>`. */
  readonly what: string;

  constructor(what: string, options?: { cause?: unknown }) {
    super(`write refused: this process no longer owns ${what} (another writer may have taken over)`, options);
    this.name = 'FenceLostError';
    this.what = what;
  }
}

export const isFenceLost = (e: unknown): e is FenceLostError =>
  e instanceof FenceLostError || (e instanceof Error && (e as { code?: unknown }).code === 'FENCE_LOST');

/**
 * A migration (or the views' replacement) could not lock the tables it alters: other sessions
 * held them through every try (PostgreSQL: each try waits `lock_timeout`, then lets the queries
 * queued behind its lock request run). Nothing of that step was applied; the steps before it
 * stay applied. Retryable: `geo-sync migrate` (or the next run) tries again.
 */
export class MigrationLockTimeoutError extends Error {
  readonly code = 'MIGRATION_LOCK_TIMEOUT';
  readonly retryable = true;
  /** The migration that waited (`013_execution_counts_index`), or `views`. */
  readonly step: string;

  constructor(step: string, wait: { timeoutMs: number; attempts: number }, options?: { cause?: unknown }) {
    const what =
      step === 'views' ? 'the BI views could not be replaced' : `migration ${step} was not applied`;
    super(
      `${what}: other sessions held its tables through ${wait.attempts} tries of ${wait.timeoutMs / 1000} s ` +
        '(a long BI query, an export, a sync; pg_stat_activity lists them). Nothing of it changed. ' +
        'Run `geo-sync migrate` again once they end, or stop them first',
      options,
    );
    this.name = 'MigrationLockTimeoutError';
    this.step = step;
  }
}

/**
 * DuckDB needed more memory than its limit allows and could not spill it to disk (DuckDB's
 * `Out of Memory Error`). The message is one line naming the setting to raise and a value to try;
 * `limit` is the limit the engine ran with (DuckDB's syntax, e.g. 128MB).
 * Not retried: the same statement runs out again at the same limit.
 */
export class DuckDBOutOfMemoryError extends Error {
  readonly code = 'DUCKDB_OUT_OF_MEMORY';
  readonly retryable = false;
  readonly limit: string | undefined;

  /** `limit` undefined: not known where the error was caught. */
  constructor(limit: string | undefined, options?: { cause?: unknown }) {
    super(
      `DuckDB ran out of memory at its limit${limit ? ` of ${limit}` : ''} (GEO_DUCKDB_MEMORY_LIMIT): ` +
        `raise it, e.g. GEO_DUCKDB_MEMORY_LIMIT=${suggestedMemoryLimit(limit ?? '')}`,
      options,
    );
    this.name = 'DuckDBOutOfMemoryError';
    this.limit = limit;
  }
}

/** A limit worth trying after `limit` ran out: twice it, at least 1GB, in whole GB. */
export function suggestedMemoryLimit(limit: string): string {
  const bytes = sizeInBytes(limit) ?? 0;
  return `${Math.max(1, Math.ceil((2 * bytes) / 1e9))}GB`;
}
