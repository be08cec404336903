/**
 * Which DuckDB errors the values of the rows written caused (Driver.dataError), and the
 * primary-key violation the batch merge takes as its cue for its safe path (isDuplicateKey).
 *
 * DuckDB names the kind of its own errors at the head of the message: `Conversion Error:` (a
 * value its column type refuses: an invalid date, a number out of range in a CAST), `Out of Range
 * Error:`, `Invalid Input Error:` and `Constraint Error:` (NOT NULL, CHECK, foreign key) are the
 * values' doing. The Appender reports constraint failures at flush as `Failed to append: NOT NULL
 * constraint failed: ...` or `... CHECK constraint failed ...`, without the kind. A duplicate key
 * is no data error here: the batch merge handles it.
 *
 * Values the driver converts in JS before DuckDB sees them (the Appender paths, direct.ts and
 * staging.ts) fail there, with BigInt()'s RangeError for NaN or a fraction into BIGINT, or
 * @duckdb/node-api's vector errors (`number out of int32 range`, `number is not an integer`,
 * `bigint out of int64 range`), which name neither table nor column: the driver throws them as a
 * ValueConversionError naming both.
 */

/** A primary-key violation: of INSERT (`Constraint Error: Duplicate key ...`) or of the Appender's flush. */
const DUPLICATE_KEY = /(Constraint Error|Failed to append): Duplicate key/;
const ENGINE_DATA = /^(Conversion|Out of Range|Invalid Input|Constraint) Error: /;
const APPEND_CONSTRAINT = /^Failed to append: (NOT NULL|CHECK) constraint failed/;

/** A row's value the driver could not convert to its column's type (see the header). */
export class ValueConversionError extends Error {
  readonly code = 'VALUE_CONVERSION';

  constructor(
    readonly table: string,
    readonly column: string,
    cause: unknown,
  ) {
    super(`${cause instanceof Error ? cause.message : String(cause)} (${table}.${column})`, { cause });
    this.name = 'ValueConversionError';
  }
}

/**
 * Runs `fill`, which converts the values of `table`.`column`; a failure becomes a
 * ValueConversionError naming them. Wraps a whole column's loop, so rows pay nothing for it.
 */
export function convertingColumn<T>(table: string, column: string, fill: () => T): T {
  try {
    return fill();
  } catch (e) {
    throw new ValueConversionError(table, column, e);
  }
}

export function duckdbIsDuplicateKey(error: unknown): boolean {
  return error instanceof Error && DUPLICATE_KEY.test(error.message);
}

/** The database's message (its first line: DuckDB appends the statement), or null: see the header. */
export function duckdbDataError(error: unknown): string | null {
  if (error instanceof ValueConversionError) return error.message;
  if (!(error instanceof Error) || duckdbIsDuplicateKey(error)) return null;
  const message = error.message;
  if (!ENGINE_DATA.test(message) && !APPEND_CONSTRAINT.test(message)) return null;
  return message.split('\n', 1)[0]!.trim();
}
