/** A run's reads of its units' stored executions, a day at a time (src/sync/stored-days.ts). */
import { describe, expect, it } from 'vitest';
import type { StoredUnitExecutions } from '../../src/load/warehouse.ts';
import { StoredDays } from '../../src/sync/stored-days.ts';

const stored = (...ids: number[]): StoredUnitExecutions => ({
  ids: new Set(ids),
  complete: new Map(ids.map((id) => [id, `f${id}`])),
});
const none = (): StoredUnitExecutions => ({ ids: new Set(), complete: new Map() });

/** A warehouse of `days` (date -> platform task -> stored executions) that counts its reads. */
function warehouse(days: Record<string, Record<number, StoredUnitExecutions>>, failDays = new Set<string>()) {
  const reads: string[] = [];
  return {
    reads,
    unitExecutions: async (task_id: number, date: string) => {
      reads.push(`unit ${task_id} ${date}`);
      return days[date]?.[task_id] ?? none();
    },
    dayExecutions: async (date: string, max: number) => {
      reads.push(`day ${date}`);
      if (failDays.has(date)) {
        failDays.delete(date);
        throw new Error('connection lost');
      }
      const units = Object.entries(days[date] ?? {});
      if (units.reduce((n, [, s]) => n + s.ids.size, 0) > max) return null;
      return new Map(units.map(([task, s]) => [Number(task), s]));
    },
  };
}

describe('StoredDays', () => {
  it('reads a day once for all its units; a unit with nothing stored gets nothing', async () => {
    const w = warehouse({ d1: { 1: stored(11, 12), 2: stored(21) }, d2: { 1: stored(13) } });
    const days = new StoredDays(w);
    const got = await Promise.all([
      days.of({ task_id: 1, date: 'd1' }),
      days.of({ task_id: 2, date: 'd1' }),
      days.of({ task_id: 3, date: 'd1' }),
      days.of({ task_id: 1, date: 'd2' }),
    ]);
    expect(got).toEqual([stored(11, 12), stored(21), none(), stored(13)]);
    expect(w.reads).toEqual(['day d1', 'day d2']);
  });

  it('a unit asked for again reads alone (what the run wrote since counts)', async () => {
    const w = warehouse({ d1: { 1: stored(11) } });
    const days = new StoredDays(w);
    expect(await days.of({ task_id: 1, date: 'd1' })).toEqual(stored(11));
    expect(await days.of({ task_id: 1, date: 'd1' })).toEqual(stored(11));
    expect(w.reads).toEqual(['day d1', 'unit 1 d1']);
  });

  it('a day above the limit is read unit by unit', async () => {
    const w = warehouse({ d1: { 1: stored(11, 12), 2: stored(21) } });
    const days = new StoredDays(w, 2);
    expect(await days.of({ task_id: 1, date: 'd1' })).toEqual(stored(11, 12));
    expect(await days.of({ task_id: 2, date: 'd1' })).toEqual(stored(21));
    expect(w.reads).toEqual(['day d1', 'unit 1 d1', 'unit 2 d1']);
  });

  it('a failed read fails the units waiting for it; the next unit of the day reads it again', async () => {
    const w = warehouse({ d1: { 1: stored(11), 2: stored(21) } }, new Set(['d1']));
    const days = new StoredDays(w);
    await expect(days.of({ task_id: 1, date: 'd1' })).rejects.toThrow('connection lost');
    expect(await days.of({ task_id: 2, date: 'd1' })).toEqual(stored(21));
    expect(w.reads).toEqual(['day d1', 'day d1']);
  });
});
