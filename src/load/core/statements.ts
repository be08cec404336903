/**
 * SQL generated from the table description (../tables.ts): identifiers and placeholders only,
 * every value is a `$n` parameter (cast to its column's type, as the dialect spells it) or
 * arrives through a driver's bulk load.
 */
import type { Json } from '../../transform/rows.ts';
import { ident, nonKeyColumns, qualified, type TableSpec } from '../tables.ts';
import { jsonText } from '../values.ts';
import type { Driver, Param } from './driver.ts';

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

/** `rowCount` VALUES tuples of the spec's columns, one CAST($n AS type) per value, numbered from $1. */
function valuesTuples<R>(driver: Pick<Driver, 'types'>, spec: TableSpec<R>, rowCount: number): string {
  let n = 0;
  const tuple = () => `(${spec.columns.map((c) => `CAST($${++n} AS ${driver.types[c.kind]})`).join(', ')})`;
  return Array.from({ length: rowCount }, tuple).join(', ');
}

/** Multi-row VALUES, one CAST($n AS type) per value [upserting]. */
export function insertValuesSql<R>(
  driver: Pick<Driver, 'types'>,
  spec: TableSpec<R>,
  rowCount: number,
  upsert: boolean,
): string {
  const tuples = valuesTuples(driver, spec, rowCount);
  return (
    `INSERT INTO ${qualified(spec)} (${columnList(spec)}) VALUES ${tuples}` +
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
 * `UPDATE geo.t SET <non-key columns> [, synced_at] FROM (VALUES ...) v WHERE <key>`: `rowCount`
 * rows by key in one statement; parameters as insertValuesSql's. Keys must be distinct (with two
 * rows of one key, which one applies is up to the database).
 */
export function updateValuesSql<R>(
  driver: Pick<Driver, 'types'>,
  spec: TableSpec<R>,
  rowCount: number,
): string {
  const tuples = valuesTuples(driver, spec, rowCount);
  const set = nonKeyColumns(spec).map((c) => `${ident(c.name)} = v.${ident(c.name)}`);
  if (spec.synced) set.push('synced_at = now()');
  const where = spec.key.map((k) => `${qualified(spec)}.${ident(k)} = v.${ident(k)}`).join(' AND ');
  return `UPDATE ${qualified(spec)} SET ${set.join(', ')} FROM (VALUES ${tuples}) AS v (${columnList(spec)}) WHERE ${where}`;
}

/** The parameters of insertValuesSql / updateByKeySql, row after row (JSON as its text). */
export function valuesParams<R>(spec: TableSpec<R>, rows: readonly R[]): Param[] {
  const out: Param[] = [];
  for (const r of rows) {
    for (const c of spec.columns) {
      const v = r[c.name];
      out.push(c.kind === 'json' ? jsonText(v as Json) : ((v ?? null) as Param));
    }
  }
  return out;
}

/** Rows per multi-row statement: at most 500, and under PostgreSQL's 65535 parameters. */
export function chunked<T>(rows: readonly T[], columnsPerRow: number): T[][] {
  const size = Math.max(1, Math.min(500, Math.floor(65535 / columnsPerRow)));
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += size) out.push(rows.slice(i, i + size));
  return out;
}
