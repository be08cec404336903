/**
 * What both adapters do to an ExecutionBatch before writing it: deduplicate every collection by
 * its key (the last row wins; an upsert must not meet the same key twice in one statement) and
 * work out which executions' children are replaced.
 */
import type { ExecutionBatch } from '../transform/rows.ts';
import { dedupeBy } from './values.ts';

export interface PreparedBatch extends ExecutionBatch {
  /**
   * prompt_task_ids whose ranks, sources and product cards are replaced by the batch's: every
   * execution of the batch (one given no children ends with none), plus the parent of any child
   * row given without its execution (its given children are then its whole set).
   */
  replaced: number[];
}

export function prepareBatch(batch: ExecutionBatch): PreparedBatch {
  const replaced = new Set<number>();
  for (const e of batch.executions) replaced.add(e.prompt_task_id);
  for (const rows of [batch.ranks, batch.sources, batch.cards]) {
    for (const r of rows) replaced.add(r.prompt_task_id);
  }
  return {
    executions: dedupeBy(batch.executions, (r) => r.prompt_task_id),
    ranks: dedupeBy(batch.ranks, (r) => `${r.prompt_task_id}|${r.ordinal}`),
    sources: dedupeBy(batch.sources, (r) => r.source_id),
    screenshots: dedupeBy(batch.screenshots, (r) => r.prompt_task_id),
    products: dedupeBy(batch.products, (r) => r.prompt_task_id),
    cards: dedupeBy(batch.cards, (r) => `${r.prompt_task_id}|${r.position}`),
    replaced: [...replaced],
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
