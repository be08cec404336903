/**
 * writeExecutionBatch, DuckDB. Staging (outside the transaction; the tables are private to this
 * connection and emptied first): every collection and the replaced prompt_task_ids are appended.
 * Then ONE transaction merges: executions, screenshots and product summaries by
 * INSERT ... ON CONFLICT DO UPDATE; ranks, sources and cards by DELETE + INSERT (the replaced
 * executions' rows, and any source whose source_id is staged, are deleted first, so the plain
 * INSERT cannot meet an existing key and no index has to be probed twice).
 */
import type { ExecutionBatch } from '../../transform/rows.ts';
import { isEmptyBatch, prepareBatch } from '../batch.ts';
import {
  EXECUTION_PRODUCTS,
  EXECUTION_RANKS,
  EXECUTION_SCREENSHOTS,
  EXECUTION_SOURCES,
  PRODUCT_CARDS,
  PROMPT_EXECUTIONS,
} from '../tables.ts';
import type { Session } from './session.ts';
import { appendStaged, idList, stagingTable } from './staging.ts';
import { mergeStagedSql } from './statements.ts';

const REPLACED = idList('replaced');

/** The staging tables this module uses (created once per connection by the warehouse). */
export const BATCH_STAGING = [
  PROMPT_EXECUTIONS,
  EXECUTION_RANKS,
  EXECUTION_SOURCES,
  EXECUTION_SCREENSHOTS,
  EXECUTION_PRODUCTS,
  PRODUCT_CARDS,
  REPLACED,
] as const;

const CLEAR_STAGING = BATCH_STAGING.map((t) => `DELETE FROM ${stagingTable(t)}`).join(';\n');

const replacedIds = `SELECT prompt_task_id FROM ${stagingTable(REPLACED)}`;

const V1 = process.env.GEO_DUCK_V1 === '1';
const V2 = process.env.GEO_DUCK_V2 === '1';
const parentMerge = (spec: typeof PROMPT_EXECUTIONS | typeof EXECUTION_SCREENSHOTS | typeof EXECUTION_PRODUCTS) =>
  V1
    ? `DELETE FROM geo.${spec.table} WHERE prompt_task_id IN (SELECT prompt_task_id FROM ${stagingTable(spec)});\n` +
      mergeStagedSql(spec as never, { upsert: false })
    : mergeStagedSql(spec as never);
const MERGE_V = [
  parentMerge(PROMPT_EXECUTIONS),
  `DELETE FROM geo.execution_ranks WHERE prompt_task_id IN (${replacedIds})`,
  `DELETE FROM geo.execution_sources WHERE prompt_task_id IN (${replacedIds})
     OR source_id IN (SELECT source_id FROM ${stagingTable(EXECUTION_SOURCES)})`,
  `DELETE FROM geo.product_cards WHERE prompt_task_id IN (${replacedIds})`,
  ...(V2 ? [] : [
  mergeStagedSql(EXECUTION_RANKS, { upsert: false }),
  mergeStagedSql(EXECUTION_SOURCES, { upsert: false }),
  mergeStagedSql(PRODUCT_CARDS, { upsert: false })]),
  parentMerge(EXECUTION_SCREENSHOTS),
  parentMerge(EXECUTION_PRODUCTS),
].join(';\n');

const MERGE = [
  mergeStagedSql(PROMPT_EXECUTIONS),
  `DELETE FROM geo.execution_ranks WHERE prompt_task_id IN (${replacedIds})`,
  `DELETE FROM geo.execution_sources WHERE prompt_task_id IN (${replacedIds})
     OR source_id IN (SELECT source_id FROM ${stagingTable(EXECUTION_SOURCES)})`,
  `DELETE FROM geo.product_cards WHERE prompt_task_id IN (${replacedIds})`,
  mergeStagedSql(EXECUTION_RANKS, { upsert: false }),
  mergeStagedSql(EXECUTION_SOURCES, { upsert: false }),
  mergeStagedSql(PRODUCT_CARDS, { upsert: false }),
  mergeStagedSql(EXECUTION_SCREENSHOTS),
  mergeStagedSql(EXECUTION_PRODUCTS),
].join(';\n');

export async function writeExecutionBatch(session: Session, batch: ExecutionBatch): Promise<void> {
  if (isEmptyBatch(batch)) return;
  const b = prepareBatch(batch);
  await session.exclusive(async () => {
    const c = session.connection;
    await session.run(CLEAR_STAGING);
    await appendStaged(c, PROMPT_EXECUTIONS, b.executions);
    await appendStaged(c, EXECUTION_RANKS, b.ranks);
    await appendStaged(c, EXECUTION_SOURCES, b.sources);
    await appendStaged(c, EXECUTION_SCREENSHOTS, b.screenshots);
    await appendStaged(c, EXECUTION_PRODUCTS, b.products);
    await appendStaged(c, PRODUCT_CARDS, b.cards);
    await appendStaged(
      c,
      REPLACED,
      b.replaced.map((id) => ({ prompt_task_id: id })),
    );
    if (V1 || V2) {
      await session.transaction(async () => {
        await session.run(MERGE_V);
        if (V2) {
          const { appendTo } = await import('./staging.ts');
          await appendTo(c, 'execution_ranks', EXECUTION_RANKS, b.ranks);
          await appendTo(c, 'execution_sources', EXECUTION_SOURCES, b.sources);
          await appendTo(c, 'product_cards', PRODUCT_CARDS, b.cards);
        }
      });
      return;
    }
    await session.transaction(() => session.run(MERGE));
  });
}
