/**
 * The planner: which units (platform task, date) a run does. `sync`, `backfill` and `schedule`
 * all use it. A finished unit is skipped unless it falls in the look-back window (answers can be
 * saved late, so recent days are always re-read) or `force` is set.
 */
import { addDays, daysBetween, shanghaiYesterday } from '../transform/time.ts';

export interface Unit {
  task_id: number;
  date: string;
}

export const unitKey = (u: Unit): string => `${u.task_id}|${u.date}`;

export interface PlanInput {
  dates: readonly string[];
  taskIds: readonly number[];
  finished: ReadonlySet<string>;
  /** Units dated on or after this day are re-run even when finished. */
  refreshFrom: string;
  force: boolean;
}

export interface Plan {
  units: Unit[];
  skipped: Unit[];
}

/** Units in date order (oldest first), then by task, so a backfill fills history in order. */
export function planUnits(input: PlanInput): Plan {
  const units: Unit[] = [];
  const skipped: Unit[] = [];
  const tasks = [...new Set(input.taskIds)].sort((a, b) => a - b);
  for (const date of [...new Set(input.dates)].sort()) {
    for (const task_id of tasks) {
      const u = { task_id, date };
      if (!input.force && date < input.refreshFrom && input.finished.has(unitKey(u))) skipped.push(u);
      else units.push(u);
    }
  }
  return { units, skipped };
}

/** The first day of the look-back window: yesterday minus `lookbackDays` (Asia/Shanghai). */
export function refreshFromDay(now: Date, lookbackDays: number): string {
  return addDays(shanghaiYesterday(now), -lookbackDays);
}

/** The dates a scheduled run covers: the look-back window through yesterday. */
export function scheduledDates(now: Date, lookbackDays: number): string[] {
  return daysBetween(refreshFromDay(now, lookbackDays), shanghaiYesterday(now));
}

/**
 * Requests a plan will make, estimated from what is known before any execution is read:
 * per unit one task/results page per 100 executions (+1 task/prompts cross-check), per execution
 * the sources, products and screenshot (+ legacy enrichment), from an average per unit.
 */
export function estimateRequests(
  units: number,
  opts: { executionsPerUnit: number; perExecution: number; perUnit: number },
): number {
  const pages = Math.max(1, Math.ceil(opts.executionsPerUnit / 100));
  return Math.round(units * (pages + opts.perUnit + opts.executionsPerUnit * opts.perExecution));
}
