/**
 * TEMP staging tables for COPY + upsert (a bulk load in `upsert` mode), created once per pooled
 * connection, before a bulk transaction opens: `(LIKE geo.<table> INCLUDING DEFAULTS) ON COMMIT
 * DELETE ROWS`, so they have the target's column types, no indexes, and are empty again after
 * every transaction (commit or rollback).
 */
import type pg from 'pg';
import { EXECUTION_BATCH_TABLES } from '../tables.ts';

/** The staging table of a geo table (connection-local). */
export function stagingTable(spec: { table: string }): string {
  return `pg_temp.stage_${spec.table}`;
}

const ready = new WeakSet<pg.ClientBase>();

/** Creates the staging tables on this connection if it has not got them yet (outside a transaction). */
export async function ensureStaging(client: pg.ClientBase): Promise<void> {
  if (ready.has(client)) return;
  await client.query(
    EXECUTION_BATCH_TABLES.map(
      (t) =>
        `CREATE TEMP TABLE IF NOT EXISTS stage_${t} (LIKE geo.${t} INCLUDING DEFAULTS) ON COMMIT DELETE ROWS`,
    ).join(';\n'),
  );
  ready.add(client);
}
