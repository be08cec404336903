/** What a test needs of the simulator's world, made sure of whatever day the test runs on. */
import type { World } from '../../src/simulator/index.ts';

/**
 * Makes sure `dates` hold at least `count` executions listed without a screenshot, before any run
 * reads them. The simulator draws 8% of executions without one, from the seed and the calendar
 * day, so a test world of a few dozen executions has none on some days (one day in five for 20
 * executions) and a test that needs one would fail on those days only. When too few are drawn so,
 * the last executions of the dates are made so (the dropScreenshot mutation): the same ones every
 * time it is called on the same day, so calling it again after `mutations.reset()` restores the
 * same world.
 */
export function ensureWithoutScreenshot(
  world: World,
  dates: readonly string[],
  count = 1,
  /** prompt_task_ids that do not count and are not changed (ones the test needs as they are). */
  exclude: ReadonlySet<number> = new Set(),
): void {
  const all = dates
    .flatMap((d) => world.allPlatformTasks().flatMap((t) => [...world.executions(t.task_id, d)]))
    .filter((e) => !exclude.has(e.prompt_task_id));
  let missing = count - all.filter((e) => e.screenshot_url === null).length;
  for (let i = all.length - 1; i >= 0 && missing > 0; i--)
    if (world.mutations.dropScreenshot(all[i]!.prompt_task_id)) missing--;
  if (missing > 0) throw new Error(`${all.length} executions on ${dates.join(', ')}: fewer than ${count}`);
}

/**
 * Makes sure `dates` hold at least `count` executions whose answer is missing (5% are drawn so:
 * one day in ten has none of 48), before any run reads them: the last available ones get none
 * (setAnswer with null), the same ones every time on the same day.
 */
export function ensureMissingAnswer(world: World, dates: readonly string[], count = 1): void {
  const all = dates.flatMap((d) =>
    world.allPlatformTasks().flatMap((t) => [...world.executions(t.task_id, d)]),
  );
  let missing = count - all.filter((e) => e.result_status === 'missing').length;
  for (let i = all.length - 1; i >= 0 && missing > 0; i--) {
    if (all[i]!.result_status !== 'available') continue;
    world.mutations.setAnswer(all[i]!.prompt_task_id, null);
    missing--;
  }
  if (missing > 0) throw new Error(`${all.length} executions on ${dates.join(', ')}: fewer than ${count}`);
}
