/**
 * The unit's cross-check (task/prompts), asked only where a deletion is at stake.
 *
 * A unit's completion deletes the executions stored for it that its listing no longer holds. A
 * listing that shifted between pages may have skipped a live execution: task/prompts (one full
 * array) guards it. When the listing is whole (as many distinct items as its `total` says) and
 * holds every execution stored for the unit, the completion deletes nothing whatever task/prompts
 * says, so it is not asked: a first read (nothing stored) and a night whose units list every
 * stored execution cost no cross-check. (The cross-check never read what it found missing
 * either: it only kept the completion from deleting.)
 */
import type { ApiPort } from '../extract/port.ts';
import type { Unit } from './planner.ts';

/** The unit's task/prompts listing, as ids, or why it could not be read. */
export type CrossCheck = { ids: Set<number> } | { error: unknown };

/** What task/results listed for the unit. */
export interface Listing {
  /** prompt_task_ids of the items read. */
  seen: ReadonlySet<number>;
  /** prompt_task_ids of items served but quarantined: still listed upstream. */
  rejected: readonly number[];
  /** The `total` its last page reported (null: no page). */
  total: number | null;
}

/** Whether the unit's completion could delete a live execution without the cross-check. */
export function needsCrossCheck(listing: Listing, stored: ReadonlySet<number>): boolean {
  const listed = new Set(listing.seen);
  for (const id of listing.rejected) listed.add(id);
  // Fewer distinct items than the total: the list moved between pages (or an item was
  // quarantined without a usable id), and what it skipped cannot be known from it.
  if (listing.total === null || listed.size < listing.total) return true;
  for (const id of stored) if (!listed.has(id)) return true;
  return false;
}

/**
 * Reads the unit's task/prompts. Only the ids are kept: the whole listing of a unit (~2,000 items
 * a unit on a 100k day, 8 units reading) was what grew the heap from the 10k day to the 100k day
 * (heap snapshots of the bench's memory scenario).
 */
export function readCrossCheck(api: ApiPort, unit: Unit): Promise<CrossCheck> {
  return api.dailyExecutions(unit.task_id, unit.date).then(
    (list): CrossCheck => ({ ids: new Set(list.map((e) => e.prompt_task_id)) }),
    (error: unknown): CrossCheck => ({ error }),
  );
}
