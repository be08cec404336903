/**
 * The state of units (platform task, day) as the warehouse records it, for `geo-sync state show`:
 * finished (a checkpoint, no later failure), failed (a failure record, no later checkpoint), or
 * never run (a known platform task on a day with neither). "Known" platform tasks are those in
 * geo.platform_tasks, i.e. what the planner planned the last time a run resolved the scope.
 */
import type { UnitRecords } from '../load/warehouse.ts';
import type { Unit } from './planner.ts';
import { unitKey } from './planner.ts';

export type UnitState = 'finished' | 'failed' | 'never run';

export interface UnitStatus extends Unit {
  state: UnitState;
  /** The run that finished or failed the unit last. */
  run_id: string | null;
  /** The failure, for a failed unit. */
  error: string | null;
}

export interface DayStates {
  date: string;
  finished: number;
  failed: number;
  neverRun: number;
}

/** Every unit of `days` x (known tasks and tasks with records), in date then task order. */
export function unitStatuses(
  days: readonly string[],
  knownTaskIds: readonly number[],
  records: UnitRecords,
): UnitStatus[] {
  const checkpoint = new Map(records.checkpoints.map((c) => [unitKey(c), c]));
  const failure = new Map(records.failures.map((f) => [unitKey(f), f]));
  const tasks = new Set(knownTaskIds);
  for (const r of [...records.checkpoints, ...records.failures]) tasks.add(r.task_id);
  const taskIds = [...tasks].sort((a, b) => a - b);
  const out: UnitStatus[] = [];
  for (const date of days) {
    for (const task_id of taskIds) {
      const key = unitKey({ task_id, date });
      const c = checkpoint.get(key);
      const f = failure.get(key);
      // A failure after the checkpoint: the last attempt failed (the older rows are still there).
      if (f && (!c || Date.parse(f.failed_at) > Date.parse(c.finished_at)))
        out.push({ task_id, date, state: 'failed', run_id: f.run_id, error: f.error });
      else if (c) out.push({ task_id, date, state: 'finished', run_id: c.run_id, error: null });
      else out.push({ task_id, date, state: 'never run', run_id: null, error: null });
    }
  }
  return out;
}

export function dayStates(days: readonly string[], units: readonly UnitStatus[]): DayStates[] {
  const byDay = new Map(days.map((date) => [date, { date, finished: 0, failed: 0, neverRun: 0 }]));
  for (const u of units) {
    const d = byDay.get(u.date);
    if (!d) continue;
    if (u.state === 'finished') d.finished++;
    else if (u.state === 'failed') d.failed++;
    else d.neverRun++;
  }
  return [...byDay.values()];
}
