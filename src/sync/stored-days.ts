/**
 * A run's reads of its units' stored executions (change detection's fingerprints, the
 * cross-check's ids), one read per day for the day's planned units instead of one per unit. On
 * DuckDB a statement costs a few milliseconds however little it returns, and it holds the
 * database while the writer waits: a nightly run of 4 days x 52 platform tasks spent more on
 * these reads than on its rows.
 *
 * The day is read when its first planned unit asks. With change detection on, every unit awaits
 * its read before it handles the listing's first items, so no unit of the day has written when
 * the read lands, and each unit gets what a read at its own start would give. With it off
 * (`--reread`), a unit awaits the read only after its listing, so the read may hold rows units of
 * the day wrote before it; a unit's own rows are all listed (seen), so its deletion rule and its
 * cross-check decide as before. A day of more than MAX_DAY_EXECUTIONS stored executions, a day
 * whose read failed and a unit asked for again are read unit by unit, as are a distributed
 * worker's (one unit a job). The run holds a day until its last planned unit took its part.
 */
import type { StoredUnitExecutions, Warehouse } from '../load/warehouse.ts';
import type { Unit } from './planner.ts';

/** Stored executions of a day above which its units are read one by one (memory stays bounded). */
export const MAX_DAY_EXECUTIONS = 50_000;

type DayRead = Promise<Map<number, StoredUnitExecutions> | null>;

export class StoredDays {
  /** Per day: the planned platform tasks that have not yet taken their part. */
  private readonly waiting = new Map<string, Set<number>>();
  private readonly days = new Map<string, DayRead>();

  constructor(
    private readonly warehouse: Pick<Warehouse, 'unitExecutions' | 'dayExecutions'>,
    planned: readonly Unit[],
    private readonly maxDayExecutions = MAX_DAY_EXECUTIONS,
  ) {
    for (const u of planned) {
      let tasks = this.waiting.get(u.date);
      if (!tasks) this.waiting.set(u.date, (tasks = new Set()));
      tasks.add(u.task_id);
    }
  }

  async of(unit: Unit): Promise<StoredUnitExecutions> {
    const tasks = this.waiting.get(unit.date);
    // Not planned, or asked for again: read alone (what the run wrote since counts).
    if (!tasks?.delete(unit.task_id)) return this.warehouse.unitExecutions(unit.task_id, unit.date);
    let day = this.days.get(unit.date);
    if (!day) {
      day = this.warehouse.dayExecutions(unit.date, [...tasks, unit.task_id], this.maxDayExecutions);
      this.days.set(unit.date, day);
    }
    if (tasks.size === 0) {
      // The day's last planned unit: nothing of it is kept once this unit has its part.
      this.waiting.delete(unit.date);
      this.days.delete(unit.date);
    }
    // A failed day read (a connection lost) costs each waiting unit its own read, not the unit.
    const units = await day.catch(() => null);
    if (!units) return this.warehouse.unitExecutions(unit.task_id, unit.date);
    const stored = units.get(unit.task_id) ?? { ids: new Set<number>(), complete: new Map<number, string>() };
    units.delete(unit.task_id); // given once: what the run holds shrinks as its units start
    return stored;
  }
}
