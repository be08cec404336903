/** Turns fetched executions into one warehouse batch (the transform step of the flow). */
import type { ExecutionBundle, ExecutionChild } from '../extract/execution.ts';
import { toCardRows, toProductsRow, toScreenshotRow, toSourceRow } from '../transform/children.ts';
import { toExecutionRow, toRankRows } from '../transform/executions.ts';
import type { ChildCollection, ExecutionBatch } from '../transform/rows.ts';

export function emptyBatch(): ExecutionBatch {
  return { executions: [], ranks: [], sources: [], screenshots: [], products: [], cards: [] };
}

/**
 * What a child that could not be read keeps of the stored data: legacy sources enrich the source
 * rows; legacy task/detail gives the execution's created_at/updated_at.
 */
const KEEPS: Record<ExecutionChild, ChildCollection> = {
  sources: 'sources',
  legacySources: 'sources',
  screenshot: 'screenshot',
  products: 'products',
  detail: 'times',
};

/** `fingerprint`: the listed item's (fingerprintOf), computed once by the unit that listed it. */
export function addToBatch(batch: ExecutionBatch, b: ExecutionBundle, fingerprint: string): void {
  const id = b.item.prompt_task_id;
  for (const u of b.unread) {
    (batch.kept ??= []).push({ prompt_task_id: id, child: KEEPS[u.child] });
  }
  batch.executions.push(toExecutionRow(b.item, b.detail));
  batch.ranks.push(...toRankRows(id, b.item.rank_details));
  for (const s of b.sources) batch.sources.push(toSourceRow(s, b.legacySources?.get(s.source_id) ?? null));
  // An execution without a screenshot answers the 2.7 object with an empty URL: no row for it.
  if (b.screenshot && b.screenshot.screenshot_url !== '')
    batch.screenshots.push(toScreenshotRow(b.screenshot));
  batch.products.push(toProductsRow(id, { ...b.products }));
  batch.cards.push(...toCardRows(id, b.products.cards));
  // Written whatever the run's change detection: a later run with it on can then skip this one.
  (batch.fingerprints ??= []).push({
    prompt_task_id: id,
    fingerprint,
    children_complete: b.unread.length === 0 && b.partial.length === 0 && !b.goneUpstream,
  });
}

/** Rows per table of a batch, for the run's counters. */
export function batchRowCounts(batch: ExecutionBatch): Record<string, number> {
  return {
    prompt_executions: batch.executions.length,
    execution_ranks: batch.ranks.length,
    execution_sources: batch.sources.length,
    execution_screenshots: batch.screenshots.length,
    execution_products: batch.products.length,
    product_cards: batch.cards.length,
  };
}
