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
 * What the warehouse holds of one unit: its stored executions, how many of those had their
 * children read completely last time (change detection skips those when their item is unchanged),
 * and how many need no screenshot request or no products request (shortcuts.ts).
 */
export interface StoredUnit {
  executions: number;
  complete: number;
  /** Stored without a screenshot URL: read without a screenshot request. */
  withoutScreenshot: number;
  /** Products stored as unsupported: one request per platform task and run answers them all. */
  unsupported: number;
}

export interface RequestShape {
  /** Child requests per execution read at most (sources, products, screenshot, + legacy enrichments). */
  perExecution: number;
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
 * 100 executions, and per execution read its child requests. A unit the warehouse holds counts
 * its stored executions; under change detection the low figure reads only those whose children
 * were incomplete. Of the executions read, those stored without a screenshot URL ask none, and
 * those whose products were stored as unsupported ask one products request per platform task
 * and run (a share of the unit's, when only some are read). A unit never stored counts
 * `assumedExecutions`, all read at `perExecution` (what they are is not known before asking).
 * The task/prompts cross-check is counted nowhere: it is asked only where a stored execution is
 * no longer listed (or the listing shifted), which is not known before the run.
 */
export function estimateRequests(
  units: readonly Unit[],
  stored: ReadonlyMap<string, StoredUnit>,
  shape: RequestShape,
): RequestEstimate {
  let low = 0;
  let high = 0;
  let unknownUnits = 0;
  // Platform tasks whose one products request is already counted, per figure.
  const askedLow = new Set<number>();
  const askedHigh = new Set<number>();
  for (const u of units) {
    const s = stored.get(unitKey(u));
    if (!s) unknownUnits++;
    const n = s?.executions ?? shape.assumedExecutions;
    const pages = Math.max(1, Math.ceil(n / 100));
    if (!s) {
      low += pages + n * shape.perExecution;
      high += pages + n * shape.perExecution;
      continue;
    }
    const read = shape.changeDetection ? Math.max(0, n - s.complete) : n;
    low += pages + childRequests(u.task_id, read, s, shape, askedLow);
    high += pages + childRequests(u.task_id, n, s, shape, askedHigh);
  }
  return { low, high, unknownUnits };
}

/** Child requests of `read` of a stored unit's executions, its shares applied to them. */
function childRequests(
  task_id: number,
  read: number,
  s: StoredUnit,
  shape: RequestShape,
  asked: Set<number>,
): number {
  if (read === 0) return 0;
  const share = (k: number) => Math.round((read * k) / s.executions);
  const unsupported = share(s.unsupported);
  let products = read - unsupported;
  if (unsupported > 0 && !asked.has(task_id)) {
    products++;
    asked.add(task_id);
  }
  const screenshots = read - share(s.withoutScreenshot);
  return read * (shape.perExecution - 2) + products + screenshots;
}
