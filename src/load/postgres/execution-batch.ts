/**
 * writeExecutionBatch, PostgreSQL: ONE transaction on one pooled connection.
 * - executions, screenshots, product summaries: COPY into TEMP staging, then
 *   INSERT ... SELECT ... ON CONFLICT DO UPDATE;
 * - ranks, sources, product cards: the replaced executions' rows are deleted (and any source
 *   whose source_id the batch carries, so a source that moved to another execution is moved),
 *   then the batch's rows are inserted.
 */
import type pg from 'pg';
import type { ExecutionBatch } from '../../transform/rows.ts';
import { isEmptyBatch, prepareBatch } from '../batch.ts';
import {
  EXECUTION_PRODUCTS,
  EXECUTION_RANKS,
  EXECUTION_SCREENSHOTS,
  EXECUTION_SOURCES,
  PRODUCT_CARDS,
  PROMPT_EXECUTIONS,
  type TableSpec,
} from '../tables.ts';
import { copyRows } from './copy.ts';
import { insertFromStagingSql, upsertFromStagingSql } from './merge.ts';
import { withTransaction } from './pool.ts';
import { ensureStaging, stagingTable } from './staging.ts';

const DIRECT = process.env.GEO_PG_DIRECT === '1';

const UPSERT = {
  executions: upsertFromStagingSql(PROMPT_EXECUTIONS),
  screenshots: upsertFromStagingSql(EXECUTION_SCREENSHOTS),
  products: upsertFromStagingSql(EXECUTION_PRODUCTS),
};
const INSERT = {
  ranks: insertFromStagingSql(EXECUTION_RANKS),
  sources: insertFromStagingSql(EXECUTION_SOURCES),
  cards: insertFromStagingSql(PRODUCT_CARDS),
};

const DELETE_CHILDREN = `
DELETE FROM geo.execution_ranks WHERE prompt_task_id = ANY($1::bigint[]);
DELETE FROM geo.product_cards WHERE prompt_task_id = ANY($1::bigint[]);`;

export async function writeExecutionBatch(pool: pg.Pool, batch: ExecutionBatch): Promise<void> {
  if (isEmptyBatch(batch)) return;
  const b = prepareBatch(batch);
  await withTransaction(
    pool,
    async (client) => {
      await stageAndRun(client, PROMPT_EXECUTIONS, b.executions, UPSERT.executions);
      await stageAndRun(client, EXECUTION_SCREENSHOTS, b.screenshots, UPSERT.screenshots);
      await stageAndRun(client, EXECUTION_PRODUCTS, b.products, UPSERT.products);
      for (const t of ['execution_ranks', 'product_cards']) {
        await client.query(`DELETE FROM geo.${t} WHERE prompt_task_id = ANY($1::bigint[])`, [b.replaced]);
      }
      await client.query(
        'DELETE FROM geo.execution_sources WHERE prompt_task_id = ANY($1::bigint[]) OR source_id = ANY($2::bigint[])',
        [b.replaced, b.sources.map((s) => s.source_id)],
      );
      if (DIRECT) {
        await copyRows(client, 'geo.execution_ranks', EXECUTION_RANKS, b.ranks);
        await copyRows(client, 'geo.execution_sources', EXECUTION_SOURCES, b.sources);
        await copyRows(client, 'geo.product_cards', PRODUCT_CARDS, b.cards);
      } else {
        await stageAndRun(client, EXECUTION_RANKS, b.ranks, INSERT.ranks);
        await stageAndRun(client, EXECUTION_SOURCES, b.sources, INSERT.sources);
        await stageAndRun(client, PRODUCT_CARDS, b.cards, INSERT.cards);
      }
    },
    { prepare: ensureStaging },
  );
}

async function stageAndRun<R>(client: pg.ClientBase, spec: TableSpec<R>, rows: readonly R[], merge: string) {
  if (rows.length === 0) return;
  await copyRows(client, stagingTable(spec), spec, rows);
  await client.query(merge);
}

export { DELETE_CHILDREN };
