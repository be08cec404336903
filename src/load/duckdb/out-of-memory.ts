/**
 * DuckDB's `Out of Memory Error` (a statement needed more than the buffer pool's limit and could
 * not spill it) as a DuckDBOutOfMemoryError naming GEO_DUCKDB_MEMORY_LIMIT and the limit in
 * effect. Every DuckDB engine geo-sync opens (the warehouse's, export's) passes its errors through
 * here, so whichever command ran out tells the user the same one line; commands/common.ts prints
 * it (exit 1).
 */
import { DuckDBOutOfMemoryError } from '../errors.ts';

/**
 * DuckDB's error class, or its words where another error carries them (the Appender's
 * `Failed to append: could not allocate block of size 32.0 KiB (954.0 KiB/976.5 KiB used)`).
 */
const OUT_OF_MEMORY = /\bOut of Memory Error\b|\b(could not|failed to) (allocate|pin) \w+ of size .*\bused\)/;

/** Whether `e` is DuckDB's out-of-memory error (its message, or one of its causes'). */
export function isDuckDBOutOfMemory(e: unknown): boolean {
  for (let c = e, depth = 0; c instanceof Error && depth < 8; c = c.cause, depth++) {
    if (c instanceof DuckDBOutOfMemoryError || OUT_OF_MEMORY.test(c.message)) return true;
  }
  return false;
}

/** `e` as a DuckDBOutOfMemoryError when DuckDB ran out of memory at `limit`; otherwise `e` itself. */
export function withMemoryLimit(e: unknown, limit: string): unknown {
  if (e instanceof DuckDBOutOfMemoryError || !isDuckDBOutOfMemory(e)) return e;
  return new DuckDBOutOfMemoryError(limit, { cause: e });
}

/** Runs `fn`; DuckDB's out-of-memory error comes out as a DuckDBOutOfMemoryError of `limit`. */
export async function namingMemoryLimit<T>(limit: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    throw withMemoryLimit(e, limit);
  }
}

/**
 * The DuckDBOutOfMemoryError `e` is or was caused by; or, for DuckDB's own error that reached here
 * without passing an engine that knows its limit, one naming the limit DuckDB reports (its
 * `(121.8 MiB/122.0 MiB used)`). Undefined when `e` is not DuckDB running out of memory.
 */
export function outOfMemoryError(e: unknown): DuckDBOutOfMemoryError | undefined {
  for (let c = e, depth = 0; c instanceof Error && depth < 8; c = c.cause, depth++) {
    if (c instanceof DuckDBOutOfMemoryError) return c;
  }
  if (!isDuckDBOutOfMemory(e)) return undefined;
  const message = e instanceof Error ? e.message : String(e);
  const used = /\/\s*(\d+(?:\.\d+)?)\s*([KMGT]i?B) used\)/.exec(message);
  return new DuckDBOutOfMemoryError(used ? `${used[1]}${used[2]}` : undefined, { cause: e });
}
