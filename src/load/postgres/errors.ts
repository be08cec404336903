/**
 * Which PostgreSQL errors the values of the rows written caused (Driver.dataError), by SQLSTATE:
 * class 22, data exception (invalid text representation such as `NaN` for a BIGINT, numeric value
 * out of range, datetime field overflow, ...); class 23, integrity constraint violation (NOT NULL,
 * CHECK, foreign key), but not unique_violation, which the batch merge already takes as its cue
 * for the safe path (core/execution-batch.ts); and 54000, program limit exceeded (an index row too
 * large: a text of several KiB in an indexed column). Anything else, a lost connection, a
 * cancelled statement, a serialization failure, a lost fence or an interruption, is not.
 */
import pg from 'pg';

/** PostgreSQL's unique_violation. */
const UNIQUE_VIOLATION = '23505';
const PROGRAM_LIMIT_EXCEEDED = '54000';

/** A primary-key (unique) violation: the batch merge's cue for its safe path (Driver.isDuplicateKey). */
export function pgIsDuplicateKey(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === UNIQUE_VIOLATION;
}

/** `COPY stage_x_1a2b3c4d, line 3, column visibility: "NaN"`: the table and the column. */
const COPY_CONTEXT = /^COPY (\S+), line \d+(?:, column ([^:]+))?/;
/** A staging table's name (staging.ts) stands for its geo table. */
const STAGING_NAME = /^(?:pg_temp\.)?stage_(.+)_[0-9a-f]{8}$/;

function isDataState(code: string | undefined): boolean {
  if (!code) return false;
  if (code.startsWith('22')) return true;
  if (code.startsWith('23')) return code !== UNIQUE_VIOLATION;
  return code === PROGRAM_LIMIT_EXCEEDED;
}

/** Where PostgreSQL says the value was: `table.column`, `table`, or nothing. */
function placeOf(e: pg.DatabaseError): string | undefined {
  const copy = e.where ? COPY_CONTEXT.exec(e.where) : null;
  const named = e.table ?? copy?.[1];
  const table = named ? (STAGING_NAME.exec(named)?.[1] ?? named) : undefined;
  const column = e.column ?? copy?.[2];
  if (table && column) return `${table}.${column}`;
  return table ?? column;
}

/** The database's message, with the table and column it names, or null: see the header. */
export function pgDataError(error: unknown): string | null {
  if (!(error instanceof pg.DatabaseError) || !isDataState(error.code)) return null;
  const place = placeOf(error);
  return place ? `${error.message} (${place})` : error.message;
}
