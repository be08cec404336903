/**
 * TEMP staging tables for COPY + upsert (the safe path of execution-batch.ts: executions,
 * screenshots, product summaries, sources), created once per pooled connection:
 * `(LIKE geo.<table> INCLUDING DEFAULTS) ON COMMIT DELETE ROWS`, so they have the target's
 * column types, no indexes, and are empty again after every transaction (commit or rollback).
 */
import type pg from 'pg';
import {
  EXECUTION_PRODUCTS,
  EXECUTION_SCREENSHOTS,
  EXECUTION_SOURCES,
  PROMPT_EXECUTIONS,
} from '../tables.ts';

const STAGED = [PROMPT_EXECUTIONS, EXECUTION_SCREENSHOTS, EXECUTION_PRODUCTS, EXECUTION_SOURCES].map(
  (t) => t.table,
);

/** The staging table of a geo table (connection-local). */
export function stagingTable(spec: { table: string }): string {
  return `pg_temp.stage_${spec.table}`;
}

const ready = new WeakSet<pg.ClientBase>();

/** Creates the staging tables on this connection if it has not got them yet (outside a transaction). */
export async function ensureStaging(client: pg.ClientBase): Promise<void> {
  if (ready.has(client)) return;
  await client.query(
    STAGED.map(
      (t) =>
        `CREATE TEMP TABLE IF NOT EXISTS stage_${t} (LIKE geo.${t} INCLUDING DEFAULTS) ON COMMIT DELETE ROWS`,
    ).join(';\n'),
  );
  ready.add(client);
}
