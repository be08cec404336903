/** A run's reads of its units' stored executions, a day at a time (src/sync/stored-days.ts). */
import { describe, expect, it } from 'vitest';
import type { StoredUnitExecutions } from '../../src/load/warehouse.ts';
import type { Unit } from '../../src/sync/planner.ts';
import { StoredDays } from '../../src/sync/stored-days.ts';

const stored = (...ids: number[]): StoredUnitExecutions => ({
  ids: new Set(ids),
  complete: new Map(ids.map((id) => [id, `f${id}`])),
});
const none = (): StoredUnitExecutions => ({ ids: new Set(), complete: new Map() });
const u = (task_id: number, date: string): Unit => ({ task_id, date });

/** A warehouse of `days` (date -> platform task -> stored executions) that records its reads. */
function warehouse(days: Record<string, Record<number, StoredUnitExecutions>>, failDays = new Set<string>()) {
  const reads: string[] = [];
  return {
    reads,
    unitExecutions: async (task_id: number, date: string) => {
      reads.push(`unit ${task_id} ${date}`);
      return days[date]?.[task_id] ?? none();
    },
    dayExecutions: async (date: string, taskIds: readonly number[], max: number) => {
      reads.push(`day ${date} [${[...taskIds].sort().join(',')}]`);
      if (failDays.delete(date)) throw new Error('connection lost');
      const units = Object.entries(days[date] ?? {}).filter(([task]) => taskIds.includes(Number(task)));
      if (units.reduce((n, [, s]) => n + s.ids.size, 0) > max) return null;
      return new Map(units.map(([task, s]) => [Number(task), s]));
    },
  };
}

describe('StoredDays', () => {
  it('reads a day once for its planned units only; a unit with nothing stored gets nothing', async () => {
    const w = warehouse({ d1: { 1: stored(11, 12), 2: stored(21), 9: stored(91) }, d2: { 1: stored(13) } });
    const plan = [u(1, 'd1'), u(2, 'd1'), u(3, 'd1'), u(1, 'd2')];
    const days = new StoredDays(w, plan);
    const got = await Promise.all(plan.map((x) => days.of(x)));
    expect(got).toEqual([stored(11, 12), stored(21), none(), stored(13)]);
    // Platform task 9 is not planned (finished, or out of scope): not read.
    expect(w.reads).toEqual(['day d1 [1,2,3]', 'day d2 [1]']);
  });

  it('a unit asked for again, or not planned, reads alone (what the run wrote since counts)', async () => {
    const w = warehouse({ d1: { 1: stored(11), 2: stored(21) } });
    const days = new StoredDays(w, [u(1, 'd1')]);
    expect(await days.of(u(1, 'd1'))).toEqual(stored(11));
    expect(await days.of(u(1, 'd1'))).toEqual(stored(11));
    expect(await days.of(u(2, 'd1'))).toEqual(stored(21));
    expect(w.reads).toEqual(['day d1 [1]', 'unit 1 d1', 'unit 2 d1']);
  });

  it('a day above the limit is read unit by unit', async () => {
    const w = warehouse({ d1: { 1: stored(11, 12), 2: stored(21) } });
    const days = new StoredDays(w, [u(1, 'd1'), u(2, 'd1')], 2);
    expect(await days.of(u(1, 'd1'))).toEqual(stored(11, 12));
    expect(await days.of(u(2, 'd1'))).toEqual(stored(21));
    expect(w.reads).toEqual(['day d1 [1,2]', 'unit 1 d1', 'unit 2 d1']);
  });

  it('a failed day read costs each waiting unit a read of its own, not the unit', async () => {
    const w = warehouse({ d1: { 1: stored(11), 2: stored(21) } }, new Set(['d1']));
    const days = new StoredDays(w, [u(1, 'd1'), u(2, 'd1')]);
    const got = await Promise.all([days.of(u(1, 'd1')), days.of(u(2, 'd1'))]);
    expect(got).toEqual([stored(11), stored(21)]);
    expect(w.reads).toEqual(['day d1 [1,2]', 'unit 1 d1', 'unit 2 d1']);
  });
});
