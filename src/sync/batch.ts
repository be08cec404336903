/**
 * Turns fetched executions into one warehouse batch (the transform step of the flow), and the
 * batch's helpers the group writer and its isolation use (pick, drop, count by table).
 */
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

/**
 * The execution a batch entry belongs to: a row's or a note's `prompt_task_id`, or the id itself
 * (`sourcesMerged`). Undefined for an entry that names none.
 */
function executionOf(entry: unknown): number | undefined {
  if (typeof entry === 'number') return entry;
  if (entry !== null && typeof entry === 'object' && 'prompt_task_id' in entry) {
    const id = (entry as { prompt_task_id: unknown }).prompt_task_id;
    return typeof id === 'number' ? id : undefined;
  }
  return undefined;
}

/**
 * Removes, in place, everything the batch holds of the executions `ids`: their rows in every
 * table, their kept children, merged sources and fingerprints, in every list of the batch (by
 * name, so a list the batch gains is covered). What lets a copy of an execution listed again
 * replace the earlier copy whole: two copies' rows are never combined (one copy's extra rank row
 * beside the other's answer, as prepareBatch's per-key de-duplication combined them).
 */
export function dropExecutions(batch: ExecutionBatch, ids: ReadonlySet<number>): void {
  if (ids.size === 0) return;
  const lists = batch as unknown as Record<string, unknown[] | undefined>;
  for (const [name, list] of Object.entries(lists)) {
    if (!Array.isArray(list)) continue;
    lists[name] = list.filter((entry) => {
      const id = executionOf(entry);
      return id === undefined || !ids.has(id);
    });
  }
  const index = executionIds.get(batch);
  for (const id of ids) index?.delete(id);
}

/**
 * The executions the batch names, in the order of their first entry (executions first): what
 * the group writer splits a failed transaction by (isolate.ts).
 */
export function executionIdsOf(batch: ExecutionBatch): number[] {
  const ids = new Set<number>();
  for (const list of Object.values(batch as unknown as Record<string, unknown[] | undefined>)) {
    if (!Array.isArray(list)) continue;
    for (const entry of list) {
      const id = executionOf(entry);
      if (id !== undefined) ids.add(id);
    }
  }
  return [...ids];
}

/**
 * A new batch of what `batch` holds of the executions `ids`: their rows in every table, kept
 * children, merged sources and fingerprints, in every list of the batch (by name, as
 * dropExecutions). An entry that names no execution goes with every part taken.
 */
export function pickExecutions(batch: ExecutionBatch, ids: ReadonlySet<number>): ExecutionBatch {
  const picked: Record<string, unknown[]> = {};
  for (const [name, list] of Object.entries(batch as unknown as Record<string, unknown[] | undefined>)) {
    if (!Array.isArray(list)) continue;
    picked[name] = list.filter((entry) => {
      const id = executionOf(entry);
      return id === undefined || ids.has(id);
    });
  }
  return { ...emptyBatch(), ...picked } as ExecutionBatch;
}

/** The executions each batch built by addToBatch holds: a copy listed again is found at once. */
const executionIds = new WeakMap<ExecutionBatch, Set<number>>();

/**
 * `fingerprint`: the listed item's (fingerprintOf), computed once by the unit that listed it.
 * An execution the batch already holds (listed twice, see runUnit) is replaced whole: the
 * earlier copy's rows, notes and fingerprint leave the batch before this copy's join it.
 */
export function addToBatch(batch: ExecutionBatch, b: ExecutionBundle, fingerprint: string): void {
  const id = b.item.prompt_task_id;
  let ids = executionIds.get(batch);
  if (!ids) executionIds.set(batch, (ids = new Set(batch.executions.map((e) => e.prompt_task_id))));
  if (ids.has(id)) dropExecutions(batch, new Set([id]));
  ids.add(id);
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

/** The batch's rows by warehouse table (a quarantined execution's rows, as sync_rejects keeps them). */
export function rowsByTable(batch: ExecutionBatch): Record<string, unknown[]> {
  return {
    prompt_executions: batch.executions,
    execution_ranks: batch.ranks,
    execution_sources: batch.sources,
    execution_screenshots: batch.screenshots,
    execution_products: batch.products,
    product_cards: batch.cards,
  };
}

/** Rows per table of a batch, for the run's counters. */
export function batchRowCounts(batch: ExecutionBatch): Record<string, number> {
  return Object.fromEntries(Object.entries(rowsByTable(batch)).map(([t, rows]) => [t, rows.length]));
}
