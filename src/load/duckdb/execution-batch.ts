/**
 * writeExecutionBatch, DuckDB. Staging (outside the transaction; the tables are private to this
 * connection and emptied first): every collection, the prompt_task_ids whose ranks, sources and
 * cards are replaced, and every prompt_task_id the batch names. Then ONE transaction merges,
 * and closes the `completions` units after the rows (complete-unit.ts).
 *
 * The merge first notes which of the batch's prompt_task_ids may have rows stored already: the
 * executions that exist (before this batch makes them all exist) and any named without their
 * execution. Only those rows are deleted, so a first sync deletes nothing: every DELETE here is
 * a scan of its table (DuckDB does not use an ART index for `IN (subquery)`).
 *
 * Fast path: delete those rows, then plain INSERTs everywhere. On-conflict upserts cost DuckDB
 * several times a plain insert (measured: 28 ms against 6 ms for 2,000 sources), and after the
 * delete no key can exist, unless upstream moved a source_id to another execution (or a child
 * row was stored without its execution). Then the INSERT fails on the primary key, the
 * transaction is rolled back and the batch is merged again on the safe path: upserts with
 * ON CONFLICT DO UPDATE for executions, screenshots, product summaries and sources.
 */
import type { ExecutionBatch } from '../../transform/rows.ts';
import type { UnitCompletion } from '../warehouse.ts';
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
import type { Session } from './session.ts';
import { appendStaged, idList, recreateStagingSql, stagingTable } from './staging.ts';
import { mergeStagedSql } from './statements.ts';
import { closeStagedUnits, stageUnits } from './complete-unit.ts';

/** prompt_task_ids whose ranks, sources and cards the batch replaces (per table: `kept` children differ). */
const REPLACED_RANKS = idList('replaced_ranks');
const REPLACED_SOURCES = idList('replaced_sources');
const REPLACED_CARDS = idList('replaced_cards');
/** Every prompt_task_id the batch names. */
const KEYS = idList('keys');
/** The ones that may have rows stored already. */
const CLEARED = idList('cleared');

/** The staging tables this module uses (created once per connection by the warehouse). */
export const BATCH_STAGING = [
  PROMPT_EXECUTIONS,
  EXECUTION_RANKS,
  EXECUTION_SOURCES,
  EXECUTION_SCREENSHOTS,
  EXECUTION_PRODUCTS,
  PRODUCT_CARDS,
  REPLACED_RANKS,
  REPLACED_SOURCES,
  REPLACED_CARDS,
  KEYS,
  CLEARED,
] as const;

const CLEAR_STAGING = BATCH_STAGING.map((t) => recreateStagingSql(t)).join(';\n');

const ids = (t: { table: string }) => `SELECT prompt_task_id FROM ${stagingTable(t)}`;

const COLLECT_CLEARED = `INSERT INTO ${stagingTable(CLEARED)}
  SELECT prompt_task_id FROM geo.prompt_executions WHERE prompt_task_id IN (${ids(KEYS)})
  UNION
  SELECT prompt_task_id FROM ${stagingTable(KEYS)} WHERE prompt_task_id NOT IN (${ids(PROMPT_EXECUTIONS)})`;

/** Deletes the stored rows of `table` among the cleared ids within `scope`. */
const deleteCleared = (table: { table: string }, scope: { table: string }) =>
  `DELETE FROM geo.${table.table} WHERE prompt_task_id IN
     (SELECT c.prompt_task_id FROM ${stagingTable(CLEARED)} c JOIN ${stagingTable(scope)} s USING (prompt_task_id))`;

const FAST_MERGE = [
  COLLECT_CLEARED,
  deleteCleared(PROMPT_EXECUTIONS, PROMPT_EXECUTIONS),
  deleteCleared(EXECUTION_SCREENSHOTS, EXECUTION_SCREENSHOTS),
  deleteCleared(EXECUTION_PRODUCTS, EXECUTION_PRODUCTS),
  deleteCleared(EXECUTION_RANKS, REPLACED_RANKS),
  deleteCleared(EXECUTION_SOURCES, REPLACED_SOURCES),
  deleteCleared(PRODUCT_CARDS, REPLACED_CARDS),
  ...[
    PROMPT_EXECUTIONS,
    EXECUTION_SCREENSHOTS,
    EXECUTION_PRODUCTS,
    EXECUTION_RANKS,
    EXECUTION_SOURCES,
    PRODUCT_CARDS,
  ].map((t) => mergeStagedSql(t as TableSpec<never>, { upsert: false })),
].join(';\n');

/** The safe path deletes by the replaced ids themselves, whatever is stored. */
const deleteReplaced = (table: { table: string }, replaced: { table: string }) =>
  `DELETE FROM geo.${table.table} WHERE prompt_task_id IN (${ids(replaced)})`;

const SAFE_MERGE = [
  mergeStagedSql(PROMPT_EXECUTIONS),
  mergeStagedSql(EXECUTION_SCREENSHOTS),
  mergeStagedSql(EXECUTION_PRODUCTS),
  deleteReplaced(EXECUTION_RANKS, REPLACED_RANKS),
  deleteReplaced(EXECUTION_SOURCES, REPLACED_SOURCES),
  deleteReplaced(PRODUCT_CARDS, REPLACED_CARDS),
  mergeStagedSql(EXECUTION_RANKS, { upsert: false }),
  mergeStagedSql(EXECUTION_SOURCES),
  mergeStagedSql(PRODUCT_CARDS, { upsert: false }),
].join(';\n');

const DUPLICATE_KEY = /Constraint Error: Duplicate key/;

export async function writeExecutionBatch(
  session: Session,
  batch: ExecutionBatch,
  completions: readonly UnitCompletion[] = [],
): Promise<void> {
  if (isEmptyBatch(batch) && completions.length === 0) return;
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
    await appendStaged(c, REPLACED_RANKS, idRows(b.replaced.ranks));
    await appendStaged(c, REPLACED_SOURCES, idRows(b.replaced.sources));
    await appendStaged(c, REPLACED_CARDS, idRows(b.replaced.cards));
    await appendStaged(c, KEYS, idRows(b.keys));
    await stageUnits(session, completions);
    const merge = (sql: string) =>
      session.transaction(async () => {
        if (!isEmptyBatch(batch)) await session.run(sql);
        await closeStagedUnits(session, completions);
      });
    try {
      await merge(FAST_MERGE);
    } catch (e) {
      if (!(e instanceof Error && DUPLICATE_KEY.test(e.message))) throw e;
      await merge(SAFE_MERGE);
    }
  });
}

function idRows(ids: Iterable<number>): { prompt_task_id: number }[] {
  return Array.from(ids, (id) => ({ prompt_task_id: id }));
}
