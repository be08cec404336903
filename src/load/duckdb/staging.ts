/**
 * The staging bulk path, DuckDB (upserts, and plain inserts with a value the direct path,
 * direct.ts, does not convert): a per-connection TEMP table without keys or indexes, re-created
 * and filled with the Appender (appendDataChunk, 2048 rows a chunk), then merged into its geo
 * table by one INSERT ... SELECT (../core/statements.ts).
 *
 * Days, instants, money and JSON are staged as VARCHAR and CAST in the merge: the CAST parses
 * an ISO offset (`+08:00`) into the right instant, whereas the Appender's row-by-row VARCHAR
 * append into a TIMESTAMPTZ column drops the offset (2026-11-21T08:00:00+08:00 would be stored
 * as 08:00 UTC). Rows are deduplicated before staging (../batch.ts), so merges meet each key once.
 */
import {
  BIGINT,
  BOOLEAN,
  DOUBLE,
  DuckDBDataChunk,
  INTEGER,
  VARCHAR,
  type DuckDBConnection,
  type DuckDBType,
  type DuckDBValue,
} from './node-api.ts';
import type { Json } from '../../transform/rows.ts';
import { ident, type AnyTableSpec, type ColumnKind, type TableSpec } from '../tables.ts';
import { jsonText } from '../values.ts';
import { closeAppender, setChunkColumns } from './direct.ts';
import { convertingColumn } from './errors.ts';

const STAGED_TYPE: Record<ColumnKind, DuckDBType> = {
  bigint: BIGINT,
  integer: INTEGER,
  double: DOUBLE,
  boolean: BOOLEAN,
  text: VARCHAR,
  date: VARCHAR,
  timestamptz: VARCHAR,
  money: VARCHAR,
  json: VARCHAR,
};

/** The geo column type of each kind (sql/duckdb/001_init.sql). */
export const SQL_TYPE: Record<ColumnKind, string> = {
  bigint: 'BIGINT',
  integer: 'INTEGER',
  double: 'DOUBLE',
  boolean: 'BOOLEAN',
  text: 'VARCHAR',
  date: 'DATE',
  timestamptz: 'TIMESTAMPTZ',
  money: 'DECIMAL(18, 4)',
  json: 'JSON',
};

const CHUNK_ROWS = 2048;

export function stagingName(spec: { table: string }): string {
  return `stage_${spec.table}`;
}

/** The connection-local staging table of a geo table. */
export function stagingTable(spec: { table: string }): string {
  return `temp.main.${stagingName(spec)}`;
}

/**
 * Empties a staging table by re-creating it. DuckDB never gives back the space of rows deleted
 * from a TEMP table (DELETE and TRUNCATE alike): clearing with DELETE made memory grow with
 * every row a run ever staged (~200 MB after 1M rows), DROP/CREATE returns it.
 */
export function recreateStagingSql(spec: AnyTableSpec): string {
  return `CREATE OR REPLACE TEMP TABLE ${stagingName(spec)} (${stagingColumns(spec)})`;
}

function stagingColumns(spec: AnyTableSpec): string {
  return spec.columns.map((c) => `${ident(c.name)} ${STAGED_TYPE[c.kind].toString()}`).join(', ');
}

/** The staged columns as the geo table's types, for INSERT ... SELECT. */
export function selectStaged(spec: AnyTableSpec): string {
  return spec.columns
    .map((c) =>
      STAGED_TYPE[c.kind] === VARCHAR && c.kind !== 'text'
        ? `CAST(${ident(c.name)} AS ${SQL_TYPE[c.kind]}) AS ${ident(c.name)}`
        : ident(c.name),
    )
    .join(', ');
}

function stagedValue(kind: ColumnKind, value: unknown): DuckDBValue {
  if (value === null || value === undefined) return null;
  switch (kind) {
    case 'bigint':
      return BigInt(value as number);
    case 'json':
      return jsonText(value as Json);
    case 'integer':
    case 'double':
    case 'boolean':
      return value as number | boolean;
    default:
      return String(value);
  }
}

/**
 * Appends `rows` to the spec's staging table. A value its staged type cannot hold (NaN into
 * BIGINT) fails as a ValueConversionError naming the table and column (errors.ts).
 */
export async function appendStaged<R>(
  connection: DuckDBConnection,
  spec: TableSpec<R>,
  rows: readonly R[],
): Promise<void> {
  if (rows.length === 0) return;
  const types = spec.columns.map((c) => STAGED_TYPE[c.kind]);
  const appender = await connection.createAppender(stagingName(spec), 'main', 'temp');
  let flushed = false;
  try {
    for (let start = 0; start < rows.length; start += CHUNK_ROWS) {
      const part = rows.slice(start, start + CHUNK_ROWS);
      const chunk = DuckDBDataChunk.create(types, part.length);
      const columns = spec.columns.map((c) =>
        convertingColumn(spec.table, c.name, () => part.map((r) => stagedValue(c.kind, r[c.name]))),
      );
      setChunkColumns(
        chunk,
        spec.table,
        spec.columns.map((c) => c.name),
        columns,
      );
      appender.appendDataChunk(chunk);
    }
    appender.flushSync();
    flushed = true;
  } finally {
    closeAppender(appender, flushed);
  }
}
