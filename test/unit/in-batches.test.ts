/**
 * inBatches: the days of a refresh or a check, and the stale units of a sync's refresh, grouped in
 * order so each group's executions stay within a bound (an item above it alone).
 */
import { describe, expect, it } from 'vitest';
import { batchDays, inBatches } from '../../src/load/core/rollups.ts';

describe('inBatches', () => {
  const cases: { name: string; sizes: number[]; max: number; groups: number[][] }[] = [
    { name: 'nothing', sizes: [], max: 10, groups: [] },
    { name: 'all within the bound', sizes: [3, 3, 4], max: 10, groups: [[3, 3, 4]] },
    {
      name: 'a new group when the next would pass it',
      sizes: [6, 5, 5, 1],
      max: 10,
      groups: [[6], [5, 5], [1]],
    },
    { name: 'an item above the bound alone', sizes: [2, 25, 2], max: 10, groups: [[2], [25], [2]] },
    { name: 'empty items join the group', sizes: [0, 10, 0], max: 10, groups: [[0, 10, 0]] },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(inBatches(c.sizes, (n) => n, c.max)).toEqual(c.groups);
    });
  }

  it('batchDays: consecutive days, their range and executions', () => {
    const days = ['2026-11-01', '2026-11-02', '2026-11-03'].map((date, i) => ({
      date,
      executions: [4, 5, 3][i]!,
    }));
    expect(batchDays(days, 9)).toEqual([
      { from: '2026-11-01', to: '2026-11-02', days: 2, executions: 9 },
      { from: '2026-11-03', to: '2026-11-03', days: 1, executions: 3 },
    ]);
  });
});
