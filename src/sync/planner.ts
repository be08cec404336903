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

/** What the warehouse holds of one unit: its stored executions, and how many of those had their
 * children read completely last time (change detection skips those when their item is unchanged). */
export interface StoredUnit {
  executions: number;
  complete: number;
}

export interface RequestShape {
  /** Child requests per execution read (sources, products, screenshot, + legacy enrichments). */
  perExecution: number;
  /** Requests per unit besides its task/results pages (the task/prompts cross-check). */
  perUnit: number;
  /** Whether unchanged executions with complete children are skipped (off with --reread). */
  changeDetection: boolean;
  /** Executions assumed for a unit the warehouse has never stored. */
  assumedExecutions: number;
}

export interface RequestEstimate {
  /** Requests if nothing changed upstream since the stored executions were read. */
  low: number;
  /** Requests if every stored execution changed (what a run without change detection makes). */
  high: number;
  /** Units with nothing stored, estimated at `assumedExecutions` each. */
  unknownUnits: number;
}

/**
 * Requests a plan will make, estimated before any request: per unit one task/results page per
 * 100 executions plus `perUnit`, and `perExecution` per execution read. A unit the warehouse holds
 * counts its stored executions; under change detection the low figure reads only those whose
 * children were incomplete. A unit never stored counts `assumedExecutions`, all read.
 */
export function estimateRequests(
  units: readonly Unit[],
  stored: ReadonlyMap<string, StoredUnit>,
  shape: RequestShape,
): RequestEstimate {
  let low = 0;
  let high = 0;
  let unknownUnits = 0;
  for (const u of units) {
    const s = stored.get(unitKey(u));
    if (!s) unknownUnits++;
    const n = s?.executions ?? shape.assumedExecutions;
    const fixed = Math.max(1, Math.ceil(n / 100)) + shape.perUnit;
    const read = s && shape.changeDetection ? Math.max(0, n - s.complete) : n;
    low += fixed + read * shape.perExecution;
    high += fixed + n * shape.perExecution;
  }
  return { low, high, unknownUnits };
}
