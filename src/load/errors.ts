/** Errors of the load layer that callers branch on (by `code`). */

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
