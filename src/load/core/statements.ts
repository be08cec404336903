/**
 * SQL generated from the table description (../tables.ts): identifiers and placeholders only,
 * every value is a `$n` parameter (cast to its column's type, as the dialect spells it) or
 * arrives through a driver's bulk load.
 */
import type { Json } from '../../transform/rows.ts';
import { DIALECT_SQL } from '../dialect-sql.ts';
import { ident, nonKeyColumns, qualified, type ColumnKind, type TableSpec } from '../tables.ts';
import { jsonText } from '../values.ts';
import type { ColumnValues, Driver, Param } from './driver.ts';

/** The spec's columns, comma-separated. */
export function columnList(spec: { readonly columns: readonly { readonly name: string }[] }): string {
  return spec.columns.map((c) => ident(c.name)).join(', ');
}

/** ` ON CONFLICT (key) DO UPDATE SET <other columns> = excluded.., synced_at = now()`. */
export function onConflictUpdate<R>(spec: TableSpec<R>): string {
  const set = nonKeyColumns(spec).map((c) => `${ident(c.name)} = excluded.${ident(c.name)}`);
  if (spec.synced) set.push('synced_at = now()');
  return ` ON CONFLICT (${spec.key.map(ident).join(', ')}) DO UPDATE SET ${set.join(', ')}`;
}

/** `INSERT INTO geo.t (...) SELECT <select> FROM <source>` [upserting]: a bulk load's last step. */
export function insertSelectSql<R>(
  spec: TableSpec<R>,
  select: string,
  source: string,
  upsert: boolean,
): string {
  return (
    `INSERT INTO ${qualified(spec)} (${columnList(spec)}) SELECT ${select} FROM ${source}` +
    (upsert ? onConflictUpdate(spec) : '')
  );
}

/**
 * Many rows in one statement, as one list parameter per column (columnValues), each cast to its
 * column's type and unnested: `SELECT unnest(CAST($1 AS BIGINT[])) AS a, unnest(...) AS b` (both
 * databases unnest the lists of one SELECT side by side). Not a multi-row VALUES, whose text grows
 * with the rows: DuckDB parsed and planned 180 rows of 3 columns in 10-12 ms against 4 ms as lists
 * (500 rows: 31 against 6 ms), and the text of the lists is the same for any number of rows, so a
 * statement met again is kept prepared (duckdb/session.ts: one of at most 16 columns).
 */
function unnestedColumns<R>(driver: Pick<Driver, 'types' | 'dialect'>, spec: TableSpec<R>): string {
  const sql = DIALECT_SQL[driver.dialect];
  return spec.columns
    .map((c, i) => {
      const list = sql.columnList(i + 1, driver.types[LIST_BOUND[c.kind]], driver.types[c.kind]);
      return `unnest(${list}) AS ${ident(c.name)}`;
    })
    .join(', ');
}

/** Rows as lists (unnestedColumns) [upserting]; parameters: columnValues. */
export function insertListsSql<R>(
  driver: Pick<Driver, 'types' | 'dialect'>,
  spec: TableSpec<R>,
  upsert: boolean,
): string {
  return (
    `INSERT INTO ${qualified(spec)} (${columnList(spec)}) SELECT ${unnestedColumns(driver, spec)}` +
    (upsert ? onConflictUpdate(spec) : '')
  );
}

/** `UPDATE geo.t SET <non-key columns> [, synced_at] WHERE <key>`; parameters in spec column order. */
export function updateByKeySql<R>(driver: Pick<Driver, 'types'>, spec: TableSpec<R>): string {
  const placeholder = (name: string) => {
    const i = spec.columns.findIndex((c) => c.name === name);
    return `CAST($${i + 1} AS ${driver.types[spec.columns[i]!.kind]})`;
  };
  const set = nonKeyColumns(spec).map((c) => `${ident(c.name)} = ${placeholder(c.name)}`);
  if (spec.synced) set.push('synced_at = now()');
  const where = spec.key.map((k) => `${ident(k)} = ${placeholder(k)}`).join(' AND ');
  return `UPDATE ${qualified(spec)} SET ${set.join(', ')} WHERE ${where}`;
}

/**
 * `UPDATE geo.t SET <non-key columns> [, synced_at] FROM (<rows as lists>) v WHERE <key>`: many
 * rows by key in one statement; parameters: columnValues. Keys must be distinct (with two rows
 * of one key, which one applies is up to the database).
 */
export function updateListsSql<R>(driver: Pick<Driver, 'types' | 'dialect'>, spec: TableSpec<R>): string {
  const set = nonKeyColumns(spec).map((c) => `${ident(c.name)} = v.${ident(c.name)}`);
  if (spec.synced) set.push('synced_at = now()');
  const where = spec.key.map((k) => `${qualified(spec)}.${ident(k)} = v.${ident(k)}`).join(' AND ');
  return `UPDATE ${qualified(spec)} SET ${set.join(', ')} FROM (SELECT ${unnestedColumns(driver, spec)}) AS v WHERE ${where}`;
}

/**
 * The kind of column each kind's list is bound as (ColumnValues.items): whole numbers as BIGINT,
 * numbers as DOUBLE, booleans, and every other kind as its text, as a scalar parameter carries it.
 */
const LIST_BOUND: Readonly<Record<ColumnKind, ColumnValues['items']>> = {
  bigint: 'bigint',
  integer: 'bigint',
  double: 'double',
  boolean: 'boolean',
  text: 'text',
  date: 'text',
  timestamptz: 'text',
  money: 'text',
  json: 'text',
};

/**
 * A value as a statement's parameter carries it: JSON as its text, undefined as NULL, and a
 * negative zero as 0 (as PostgreSQL reads its text, `0`; DuckDB would keep -0.0 in a DOUBLE list).
 */
function paramValue(kind: ColumnKind, v: unknown): null | number | boolean | string {
  if (kind === 'json') return jsonText(v as Json);
  if (v === 0) return 0;
  return (v ?? null) as null | number | boolean | string;
}

/** The parameters of insertListsSql / updateListsSql: one list per column, in spec order. */
export function columnValues<R>(spec: TableSpec<R>, rows: readonly R[]): ColumnValues[] {
  return spec.columns.map((c) => ({
    items: LIST_BOUND[c.kind],
    values: rows.map((r) => paramValue(c.kind, r[c.name])),
  }));
}

/** The parameters of updateByKeySql: the row's values in spec order. */
export function rowParams<R>(spec: TableSpec<R>, row: R): Param[] {
  return spec.columns.map((c) => paramValue(c.kind, row[c.name]));
}

/**
 * Rows per statement of lists, bounded so that a statement's parameters stay small whatever a
 * caller hands over (a year of finance deductions): 10,000 rows, or 500 (as many as the multi-row
 * VALUES took) of a table with a JSON column, whose values may be whole reports (site diagnoses).
 */
const LIST_ROWS = 10_000;
const LIST_ROWS_WITH_JSON = 500;

/** The rows in statements of at most that many each. */
export function inListChunks<R>(spec: TableSpec<R>, rows: readonly R[]): R[][] {
  const size = spec.columns.some((c) => c.kind === 'json') ? LIST_ROWS_WITH_JSON : LIST_ROWS;
  const out: R[][] = [];
  for (let i = 0; i < rows.length; i += size) out.push(rows.slice(i, i + size));
  return out;
}
