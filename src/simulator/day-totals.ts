/**
 * The totals of a day over every readable platform task (World.dayTotals): ground truth for
 * tests, computed by a loop of hashes, nothing kept, then corrected by the overlay's changes.
 */
import type { Catalog } from './catalog.ts';
import type { ExecRef, ExecutionModel } from './executions.ts';
import { cardCount, hasScreenshot, isMissing, rankCount, screenshotUrl, sourceCount } from './executions.ts';
import type { Overlay } from './mutations.ts';
import { hash2 } from './rng.ts';
import { dayNumber } from './time.ts';
import type { DayTotals } from './world-types.ts';

/** What the totals need of the world. */
export interface CountedWorld {
  readonly catalog: Catalog;
  readonly model: ExecutionModel;
  readonly overlay: Overlay;
  inHistory(day: number): boolean;
  allPlatformTasks(): unknown[];
  resolve(promptTaskId: number): ExecRef | null;
}

export function dayTotalsOf(w: CountedWorld, date: string): DayTotals {
  const day = dayNumber(date);
  const t: DayTotals = {
    platformTasks: w.allPlatformTasks().length,
    platformTasksWithExecutions: 0,
    executions: 0,
    ranks: 0,
    sources: 0,
    productCards: 0,
    screenshots: 0,
    missingResults: 0,
    corruptedExecutions: 0,
  };
  if (Number.isNaN(day) || !w.inHistory(day)) return t;
  const o = w.overlay;
  for (const pt of w.catalog.executing) {
    const n = w.model.count(pt, day);
    const deleted = o.deletedKs(pt.ordinal, day);
    const tdh = w.model.taskDayHash(pt.ordinal, day);
    let seen = 0;
    for (let k = 0; k < n; k++) {
      if (deleted !== undefined && deleted.has(k)) continue;
      const h = hash2(tdh, k);
      seen++;
      t.ranks += rankCount(h, pt);
      t.sources += sourceCount(h, pt.ordinal, k);
      t.productCards += cardCount(h, pt);
      if (hasScreenshot(h)) t.screenshots++;
      if (isMissing(h)) t.missingResults++;
    }
    t.executions += seen;
    if (seen > 0) t.platformTasksWithExecutions++;
  }
  // Overlays are small: correct the totals by walking them, not the day.
  for (const [id, answer] of o.answers) {
    const ref = w.resolve(id);
    if (!ref || ref.day !== day) continue;
    const was = isMissing(ref.h);
    if (was && answer !== null) t.missingResults--;
    if (!was && answer === null) t.missingResults++;
  }
  // Screenshots taken late or dropped (resolve marks the reference with them).
  for (const id of [...o.lateScreenshots, ...o.noScreenshots]) {
    const ref = w.resolve(id);
    if (ref && ref.day === day)
      t.screenshots += Number(screenshotUrl(ref) !== null) - Number(hasScreenshot(ref.h));
  }
  for (const id of o.droppedRank) {
    const ref = w.resolve(id);
    if (ref && ref.day === day && rankCount(ref.h, ref.pt) > 0) t.ranks--;
  }
  for (const [id, removed] of o.removedSources) {
    const ref = w.resolve(id);
    if (ref && ref.day === day) t.sources -= removed.size;
  }
  for (const id of o.corrupted) {
    const ref = w.resolve(id);
    if (ref && ref.day === day) t.corruptedExecutions++;
  }
  return t;
}
