/**
 * SQL of the DuckDB adapter, generated from the TableSpecs: identifiers and placeholders only,
 * every value is a `$n` parameter or comes from a staging table.
 */
import type { DuckDBValue } from '@duckdb/node-api';
import type { Json } from '../../transform/rows.ts';
import { ident, nonKeyColumns, type TableSpec } from '../tables.ts';
import { jsonText } from '../values.ts';
import { SQL_TYPE, selectStaged, stagingTable } from './staging.ts';

export interface WriteOptions {
  /** ON CONFLICT (key) DO UPDATE every other column; false: a plain INSERT. @default true */
  readonly upsert?: boolean;
  /** The table has `synced_at`, set to now() on update. @default true */
  readonly synced?: boolean;
}

function conflictClause<R>(spec: TableSpec<R>, opts: WriteOptions): string {
  if (opts.upsert === false) return '';
  const set = nonKeyColumns(spec).map((c) => `${ident(c.name)} = excluded.${ident(c.name)}`);
  if (opts.synced !== false) set.push('synced_at = now()');
  return ` ON CONFLICT (${spec.key.map(ident).join(', ')}) DO UPDATE SET ${set.join(', ')}`;
}

function columnList<R>(spec: TableSpec<R>): string {
  return spec.columns.map((c) => ident(c.name)).join(', ');
}

/** INSERT INTO geo.t (...) SELECT ... FROM the staging table [ON CONFLICT ... DO UPDATE]. */
export function mergeStagedSql<R>(spec: TableSpec<R>, opts: WriteOptions = {}): string {
  return (
    `INSERT INTO geo.${spec.table} (${columnList(spec)}) ` +
    `SELECT ${selectStaged(spec)} FROM ${stagingTable(spec)}${conflictClause(spec, opts)}`
  );
}

/** Multi-row VALUES, one CAST($n AS type) per value. */
export function insertValuesSql<R>(spec: TableSpec<R>, rowCount: number, opts: WriteOptions = {}): string {
  let n = 0;
  const tuple = () => `(${spec.columns.map((c) => `CAST($${++n} AS ${SQL_TYPE[c.kind]})`).join(', ')})`;
  const tuples = Array.from({ length: rowCount }, tuple).join(', ');
  return `INSERT INTO geo.${spec.table} (${columnList(spec)}) VALUES ${tuples}${conflictClause(spec, opts)}`;
}

/** The parameters of insertValuesSql, row after row. */
export function valuesParams<R>(spec: TableSpec<R>, rows: readonly R[]): DuckDBValue[] {
  const out: DuckDBValue[] = [];
  for (const r of rows) {
    for (const c of spec.columns) {
      const v = r[c.name];
      out.push(c.kind === 'json' ? jsonText(v as Json) : ((v ?? null) as DuckDBValue));
    }
  }
  return out;
}

/** Rows per multi-row statement. */
export function chunked<T>(rows: readonly T[], size = 500): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += size) out.push(rows.slice(i, i + size));
  return out;
}
