/**
 * What the warehouse core (core/execution-batch.ts) does to an ExecutionBatch before writing it,
 * for both dialects: deduplicate every collection by its key (the last row wins; an upsert must
 * not meet the same key twice in one statement) and work out, per child table, which
 * executions' rows are replaced.
 */
import type { ChildCollection, ExecutionBatch } from '../transform/rows.ts';
import { dedupeBy } from './values.ts';

/** prompt_task_ids whose stored rows of each child table the batch replaces. */
export interface ReplacedChildren {
  ranks: number[];
  sources: number[];
  /**
   * The batch's executions and the parents of its screenshot rows: an execution read again
   * without a screenshot (gone upstream, or listed without one) keeps none.
   */
  screenshots: number[];
  /** product_cards. */
  cards: number[];
}

export interface PreparedBatch extends Required<ExecutionBatch> {
  replaced: ReplacedChildren;
  /** The batch's executions whose stored created_at/updated_at stay as they are (kept `times`). */
  timesKept: number[];
  /** Every prompt_task_id the batch names: its executions and the parents of its child rows. */
  keys: number[];
}

/**
 * Replaced are every execution of the batch (one given no children ends with none), plus the
 * parent of any child row given without its execution (its given children are then its whole
 * set), minus the children the batch keeps (`kept`): for those, nothing is written or deleted;
 * and minus merged sources (`sourcesMerged`): written, but nothing of them deleted.
 */
export function prepareBatch(batch: ExecutionBatch): PreparedBatch {
  const named = new Set<number>();
  for (const e of batch.executions) named.add(e.prompt_task_id);
  for (const rows of [batch.ranks, batch.sources, batch.cards]) {
    for (const r of rows) named.add(r.prompt_task_id);
  }
  const kept: Record<ChildCollection, Set<number>> = {
    sources: new Set(),
    screenshot: new Set(),
    products: new Set(),
    times: new Set(),
  };
  for (const k of batch.kept ?? []) kept[k.child].add(k.prompt_task_id);
  const merged = new Set(batch.sourcesMerged ?? []);
  const unless = (child: ChildCollection) => (r: { prompt_task_id: number }) =>
    !kept[child].has(r.prompt_task_id);
  const screenshots = batch.screenshots.filter(unless('screenshot'));
  const products = batch.products.filter(unless('products'));
  const keys = new Set(named);
  for (const r of [...screenshots, ...products]) keys.add(r.prompt_task_id);
  return {
    executions: dedupeBy(batch.executions, (r) => r.prompt_task_id),
    ranks: dedupeBy(batch.ranks, (r) => `${r.prompt_task_id}|${r.ordinal}`),
    sources: dedupeBy(batch.sources.filter(unless('sources')), (r) => r.source_id),
    screenshots: dedupeBy(screenshots, (r) => r.prompt_task_id),
    products: dedupeBy(products, (r) => r.prompt_task_id),
    cards: dedupeBy(batch.cards.filter(unless('products')), (r) => `${r.prompt_task_id}|${r.position}`),
    kept: batch.kept ?? [],
    sourcesMerged: [...merged],
    fingerprints: batch.fingerprints ?? [],
    timesKept: [...new Set(batch.executions.map((e) => e.prompt_task_id))].filter((id) => kept.times.has(id)),
    replaced: {
      ranks: [...named],
      screenshots: [...new Set([...batch.executions, ...screenshots].map((r) => r.prompt_task_id))].filter(
        (id) => !kept.screenshot.has(id),
      ),
      sources: [...named].filter((id) => !kept.sources.has(id) && !merged.has(id)),
      cards: [...named].filter((id) => !kept.products.has(id)),
    },
    keys: [...keys],
  };
}

export function isEmptyBatch(batch: ExecutionBatch): boolean {
  return (
    batch.executions.length === 0 &&
    batch.ranks.length === 0 &&
    batch.sources.length === 0 &&
    batch.screenshots.length === 0 &&
    batch.products.length === 0 &&
    batch.cards.length === 0
  );
}
