/** What a test needs of the simulator's world, made sure of whatever day the test runs on. */
import type { World, WirePromptResultItem } from '../../src/simulator/index.ts';

/** Every execution of `dates`, in list order (platform task by platform task). */
export function executionsOn(world: World, dates: readonly string[]): WirePromptResultItem[] {
  return dates.flatMap((d) => world.allPlatformTasks().flatMap((t) => [...world.executions(t.task_id, d)]));
}

/**
 * At least `count` of `all` with `has`: when fewer are drawn so, `make` is tried on the last ones
 * (it returns whether it made one so). The same ones every time on the same day, so calling it
 * again after `mutations.reset()` restores the same world. Throws when `all` is too small.
 */
function makeSure(
  all: readonly WirePromptResultItem[],
  count: number,
  has: (e: WirePromptResultItem) => boolean,
  make: (e: WirePromptResultItem) => boolean,
): void {
  let short = count - all.filter(has).length;
  for (let i = all.length - 1; i >= 0 && short > 0; i--) if (make(all[i]!)) short--;
  if (short > 0) throw new Error(`${all.length} executions: fewer than ${count} could be made so`);
}

/**
 * Makes sure `dates` hold at least `count` executions listed without a screenshot, before any run
 * reads them. The simulator draws 8% of executions without one, from the seed and the calendar
 * day, so a test world of a few dozen executions has none on some days (one day in five for 20
 * executions) and a test that needs one would fail on those days only. The ones made so get the
 * dropScreenshot mutation.
 */
export function ensureWithoutScreenshot(
  world: World,
  dates: readonly string[],
  count = 1,
  /** prompt_task_ids that do not count and are not changed (ones the test needs as they are). */
  exclude: ReadonlySet<number> = new Set(),
): void {
  makeSure(
    executionsOn(world, dates).filter((e) => !exclude.has(e.prompt_task_id)),
    count,
    (e) => e.screenshot_url === null,
    (e) => world.mutations.dropScreenshot(e.prompt_task_id),
  );
}

/**
 * Makes sure `dates` hold at least `count` executions whose answer is missing (5% are drawn so:
 * one day in ten has none of 48), before any run reads them: available ones get none (setAnswer
 * with null). `withRanks`: missing ones that have rank items (a missing answer keeps its ranks),
 * made so from available ones with rank items (one day in four hundred has none of 120).
 */
export function ensureMissingAnswer(
  world: World,
  dates: readonly string[],
  count = 1,
  opts: { withRanks?: boolean } = {},
): void {
  const ranked = (e: WirePromptResultItem) => !opts.withRanks || e.rank_details.length > 0;
  makeSure(
    executionsOn(world, dates),
    count,
    (e) => e.result_status === 'missing' && ranked(e),
    (e) => {
      if (e.result_status !== 'available' || !ranked(e)) return false;
      world.mutations.setAnswer(e.prompt_task_id, null);
      return true;
    },
  );
}

/**
 * The first of `all` that `has`. A world is drawn from its seed and the calendar day, so a chance
 * feature of a small one can be missing on some day: the test then fails saying what it lacked
 * ("this day's world has no ..."), not on an undefined read further on.
 */
export function firstWith<T>(all: Iterable<T>, has: (x: T) => boolean, what: string): T {
  for (const x of all) if (has(x)) return x;
  throw new Error(`this day's world has no ${what}`);
}
