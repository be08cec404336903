/**
 * A run's reads of its units' stored executions (change detection's fingerprints, the
 * cross-check's ids), one read per day for all the day's units instead of one per unit. On DuckDB a
 * statement costs a few milliseconds however little it returns, and it holds the database while
 * the writer waits: a nightly run of 4 days x 52 platform tasks spent more on these reads than on
 * its rows.
 *
 * What a unit gets is what one read at its start would give: the day is read when its first unit
 * starts, and no unit of the day writes before its read is in (runUnit awaits it before the first
 * page's items). A day of more than MAX_DAY_EXECUTIONS stored executions, and a unit asked for
 * again in the run, are read unit by unit, as are a distributed worker's (one unit a job).
 */
import type { StoredUnitExecutions, Warehouse } from '../load/warehouse.ts';
import { unitKey, type Unit } from './planner.ts';

/** Stored executions of a day above which its units are read one by one (memory stays bounded). */
export const MAX_DAY_EXECUTIONS = 50_000;

export class StoredDays {
  private readonly days = new Map<string, Promise<Map<number, StoredUnitExecutions> | null>>();
  private readonly taken = new Set<string>();

  constructor(
    private readonly warehouse: Pick<Warehouse, 'unitExecutions' | 'dayExecutions'>,
    private readonly maxDayExecutions = MAX_DAY_EXECUTIONS,
  ) {}

  async of(unit: Unit): Promise<StoredUnitExecutions> {
    const key = unitKey(unit);
    if (this.taken.has(key)) return this.warehouse.unitExecutions(unit.task_id, unit.date);
    this.taken.add(key);
    let day = this.days.get(unit.date);
    if (!day) {
      day = this.warehouse.dayExecutions(unit.date, this.maxDayExecutions);
      this.days.set(unit.date, day);
      // A failed read fails the units that wait for it, and the next unit of the day reads again.
      day.catch(() => this.days.delete(unit.date));
    }
    const units = await day;
    if (!units) return this.warehouse.unitExecutions(unit.task_id, unit.date);
    const stored = units.get(unit.task_id) ?? { ids: new Set<number>(), complete: new Map<number, string>() };
    units.delete(unit.task_id); // given once: what the run holds shrinks as its units start
    return stored;
  }
}
