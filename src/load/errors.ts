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
