/** The state of a unit from its records: table-driven. */
import { describe, expect, it } from 'vitest';
import { dayStates, unitStatuses, type UnitState } from '../../src/sync/state.ts';

const cp = (finished_at: string) => ({
  task_id: 1,
  date: '2026-11-01',
  run_id: 'c',
  finished_at,
  executions: 3,
});
const fail = (failed_at: string) => ({
  task_id: 1,
  date: '2026-11-01',
  run_id: 'f',
  failed_at,
  error: 'boom',
});
const T1 = '2026-11-02T04:30:00+08:00';
const T2 = '2026-11-03T04:30:00+08:00';

describe('unitStatuses', () => {
  const cases: [string, Parameters<typeof unitStatuses>[2], UnitState, string | null][] = [
    ['no record', { checkpoints: [], failures: [] }, 'never run', null],
    ['a checkpoint', { checkpoints: [cp(T1)], failures: [] }, 'finished', 'c'],
    ['a failure', { checkpoints: [], failures: [fail(T1)] }, 'failed', 'f'],
    ['a failure after the checkpoint', { checkpoints: [cp(T1)], failures: [fail(T2)] }, 'failed', 'f'],
    ['a checkpoint after the failure', { checkpoints: [cp(T2)], failures: [fail(T1)] }, 'finished', 'c'],
  ];
  for (const [name, records, state, run] of cases) {
    it(name, () => {
      const [u] = unitStatuses(['2026-11-01'], [1], records);
      expect(u).toMatchObject({ task_id: 1, date: '2026-11-01', state, run_id: run });
    });
  }

  it('covers known tasks and tasks seen only in records; counts per day', () => {
    const units = unitStatuses(['2026-11-01', '2026-11-02'], [2], { checkpoints: [cp(T1)], failures: [] });
    expect(units.map((u) => [u.task_id, u.date, u.state])).toEqual([
      [1, '2026-11-01', 'finished'],
      [2, '2026-11-01', 'never run'],
      [1, '2026-11-02', 'never run'],
      [2, '2026-11-02', 'never run'],
    ]);
    expect(dayStates(['2026-11-01', '2026-11-02'], units)).toEqual([
      { date: '2026-11-01', finished: 1, failed: 0, neverRun: 1 },
      { date: '2026-11-02', finished: 0, failed: 0, neverRun: 2 },
    ]);
  });
});
