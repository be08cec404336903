/** Turns fetched executions into one warehouse batch (the transform step of the flow). */
import type { ExecutionBundle, ExecutionChild, ExecutionChildren } from '../extract/execution.ts';
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

/**
 * The rows of an execution's children: what a run writes (addToBatch) and what `verify` compares
 * the stored rows with, built in this one place so the two cannot drift apart.
 */
export function childRows(
  id: number,
  c: ExecutionChildren,
): Pick<ExecutionBatch, 'sources' | 'screenshots' | 'products' | 'cards'> {
  return {
    sources: c.sources.map((s) => toSourceRow(s, c.legacySources?.get(s.source_id) ?? null)),
    // An execution without a screenshot answers the 2.7 object with an empty URL: no row for it.
    screenshots: c.screenshot && c.screenshot.screenshot_url !== '' ? [toScreenshotRow(c.screenshot)] : [],
    products: [toProductsRow(id, { ...c.products })],
    cards: toCardRows(id, c.products.cards),
  };
}

/** `fingerprint`: the listed item's (fingerprintOf), computed once by the unit that listed it. */
export function addToBatch(batch: ExecutionBatch, b: ExecutionBundle, fingerprint: string): void {
  const id = b.item.prompt_task_id;
  for (const u of b.unread) {
    (batch.kept ??= []).push({ prompt_task_id: id, child: KEEPS[u.child] });
  }
  // A list read incompletely costs no stored row: sources (keyed by source_id) are merged; cards
  // (keyed by their position in the list, which a missing item shifts) and sources whose legacy
  // enrichment is incomplete are kept as stored. The execution is read again next time.
  for (const p of b.partial) {
    if (p === 'sources') (batch.sourcesMerged ??= []).push(id);
    else (batch.kept ??= []).push({ prompt_task_id: id, child: KEEPS[p] });
  }
  batch.executions.push(toExecutionRow(b.item, b.detail));
  batch.ranks.push(...toRankRows(id, b.item.rank_details));
  const rows = childRows(id, b);
  batch.sources.push(...rows.sources);
  batch.screenshots.push(...rows.screenshots);
  batch.products.push(...rows.products);
  batch.cards.push(...rows.cards);
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
