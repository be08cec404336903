/**
 * Statements that move staged rows into geo tables, generated from the TableSpecs (identifiers
 * only: every value arrives through COPY or a parameter).
 */
import { ident, nonKeyColumns, type TableSpec } from '../tables.ts';
import { stagingTable } from './staging.ts';

/**
 * `INSERT INTO geo.t (...) SELECT ... FROM stage ON CONFLICT (key) DO UPDATE SET every other
 * column = EXCLUDED, synced_at = now()`.
 */
export function upsertFromStagingSql<R>(spec: TableSpec<R>): string {
  const cols = spec.columns.map((c) => ident(c.name)).join(', ');
  const key = spec.key.map(ident).join(', ');
  const set = nonKeyColumns(spec)
    .map((c) => `${ident(c.name)} = EXCLUDED.${ident(c.name)}`)
    .concat('synced_at = now()')
    .join(', ');
  return (
    `INSERT INTO geo.${spec.table} (${cols}) SELECT ${cols} FROM ${stagingTable(spec)} ` +
    `ON CONFLICT (${key}) DO UPDATE SET ${set}`
  );
}

/** Multi-row parameterized INSERTs stay under PostgreSQL's 65535 parameters per statement. */
export function chunksFor<T>(rows: readonly T[], columnsPerRow: number): T[][] {
  const size = Math.max(1, Math.min(1000, Math.floor(65535 / columnsPerRow)));
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += size) out.push(rows.slice(i, i + size));
  return out;
}
