/**
 * writeExecutionBatch, PostgreSQL: ONE transaction on one pooled connection.
 * - executions, screenshots, product summaries and sources: COPY into TEMP staging, then
 *   INSERT ... SELECT ... ON CONFLICT DO UPDATE (a source whose source_id moved to another
 *   execution is updated in place);
 * - ranks, sources and product cards of every replaced execution that already existed are
 *   deleted first; ranks and cards are then COPied straight into their tables.
 *
 * Why this shape (measured on batches of 200 executions into a growing warehouse):
 * - Executions new to the warehouse (the upsert says which: xmax = 0 marks a fresh insert) have
 *   no children to delete, so a first sync deletes nothing. Deleting by prompt_task_id for them
 *   anyway cost more than the COPY itself: until autoanalyze has run, the planner has no
 *   statistics for a fresh table and scans it whole for every batch.
 * - After that delete no rank or card key of the batch can exist (rows are deduplicated first),
 *   so staging them and merging with ON CONFLICT would only copy them once more.
 * - Sources are keyed by source_id alone, so they go through ON CONFLICT, which probes the
 *   primary key the insert has to probe anyway (cheaper than a separate delete by source_id).
 *
 * `completions` close units in the same transaction (complete-unit.ts), after the rows.
 */
import type pg from 'pg';
import type { UnitCompletion } from '../warehouse.ts';
import { closeUnit } from './complete-unit.ts';
import type { ExecutionBatch, PromptExecutionRow } from '../../transform/rows.ts';
import { isEmptyBatch, prepareBatch } from '../batch.ts';
import {
  EXECUTION_PRODUCTS,
  EXECUTION_RANKS,
  EXECUTION_SCREENSHOTS,
  EXECUTION_SOURCES,
  PRODUCT_CARDS,
  PROMPT_EXECUTIONS,
  qualified,
  type TableSpec,
} from '../tables.ts';
import { copyRows } from './copy.ts';
import { upsertFromStagingSql } from './merge.ts';
import { withTransaction } from './pool.ts';
import { ensureStaging, stagingTable } from './staging.ts';

const UPSERT = {
  /** Returns, per execution, whether it existed before (updated rather than inserted). */
  executions: `${upsertFromStagingSql(PROMPT_EXECUTIONS)} RETURNING prompt_task_id, (xmax <> 0) AS existed`,
  screenshots: upsertFromStagingSql(EXECUTION_SCREENSHOTS),
  products: upsertFromStagingSql(EXECUTION_PRODUCTS),
  sources: upsertFromStagingSql(EXECUTION_SOURCES),
};

const DELETE_CHILDREN = [EXECUTION_RANKS, EXECUTION_SOURCES, PRODUCT_CARDS].map(
  (t) => `DELETE FROM geo.${t.table} WHERE prompt_task_id = ANY($1::bigint[])`,
);

export async function writeExecutionBatch(
  pool: pg.Pool,
  batch: ExecutionBatch,
  completions: readonly UnitCompletion[] = [],
): Promise<void> {
  if (isEmptyBatch(batch) && completions.length === 0) return;
  const b = prepareBatch(batch);
  await withTransaction(
    pool,
    async (client) => {
      const existed = await upsertExecutions(client, b.executions);
      await upsertStaged(client, EXECUTION_SCREENSHOTS, b.screenshots, UPSERT.screenshots);
      await upsertStaged(client, EXECUTION_PRODUCTS, b.products, UPSERT.products);
      // Children can exist only for executions stored before, or for parents named by child rows
      // that came without their execution.
      const inBatch = new Set(b.executions.map((e) => e.prompt_task_id));
      const clear = [...existed, ...b.replaced.filter((id) => !inBatch.has(id))];
      if (clear.length > 0) {
        for (const sql of DELETE_CHILDREN) await client.query(sql, [clear]);
      }
      await copyRows(client, qualified(EXECUTION_RANKS), EXECUTION_RANKS, b.ranks);
      await upsertStaged(client, EXECUTION_SOURCES, b.sources, UPSERT.sources);
      await copyRows(client, qualified(PRODUCT_CARDS), PRODUCT_CARDS, b.cards);
      for (const unit of completions) await closeUnit(client, unit);
    },
    { prepare: ensureStaging },
  );
}

/** Upserts the executions; returns the prompt_task_ids that were already stored. */
async function upsertExecutions(
  client: pg.ClientBase,
  rows: readonly PromptExecutionRow[],
): Promise<number[]> {
  if (rows.length === 0) return [];
  await copyRows(client, stagingTable(PROMPT_EXECUTIONS), PROMPT_EXECUTIONS, rows);
  const r = await client.query<{ prompt_task_id: number; existed: boolean }>(UPSERT.executions);
  return r.rows.filter((row) => row.existed).map((row) => row.prompt_task_id);
}

async function upsertStaged<R>(
  client: pg.ClientBase,
  spec: TableSpec<R>,
  rows: readonly R[],
  upsert: string,
) {
  if (rows.length === 0) return;
  await copyRows(client, stagingTable(spec), spec, rows);
  await client.query(upsert);
}
