import { describe, expect, it } from 'vitest';
import {
  estimateRequests,
  planUnits,
  refreshFromDay,
  scheduledDates,
  unitKey,
  type StoredUnit,
} from '../../src/sync/planner.ts';

describe('planUnits', () => {
  const finished = new Set([
    unitKey({ task_id: 1, date: '2026-11-01' }),
    unitKey({ task_id: 1, date: '2026-11-20' }),
  ]);
  const base = { dates: ['2026-11-20', '2026-11-01'], taskIds: [2, 1], finished, refreshFrom: '2026-11-18' };

  it.each([
    [
      'skips finished units before the window',
      false,
      ['2|2026-11-01', '1|2026-11-20', '2|2026-11-20'],
      ['1|2026-11-01'],
    ],
    ['force re-runs everything', true, ['1|2026-11-01', '2|2026-11-01', '1|2026-11-20', '2|2026-11-20'], []],
  ])('%s', (_n, force, units, skipped) => {
    const plan = planUnits({ ...base, force });
    expect(plan.units.map(unitKey).sort()).toEqual([...units].sort());
    expect(plan.skipped.map(unitKey)).toEqual(skipped);
  });

  it('orders by date then task, and deduplicates', () => {
    const plan = planUnits({
      ...base,
      dates: ['2026-11-20', '2026-11-19', '2026-11-20'],
      taskIds: [2, 1, 2],
      force: true,
    });
    expect(plan.units.map(unitKey)).toEqual(['1|2026-11-19', '2|2026-11-19', '1|2026-11-20', '2|2026-11-20']);
  });
});

describe('look-back window (Asia/Shanghai)', () => {
  it.each([
    ['2026-11-22T01:00:00Z', 3, '2026-11-18', ['2026-11-18', '2026-11-19', '2026-11-20', '2026-11-21']],
    ['2026-11-21T20:00:00Z', 0, '2026-11-21', ['2026-11-21']],
  ])('at %s with %i days', (now, days, from, dates) => {
    expect(refreshFromDay(new Date(now), days)).toBe(from);
    expect(scheduledDates(new Date(now), days)).toEqual(dates);
  });
});

describe('estimateRequests', () => {
  const u = { task_id: 7, date: '2026-11-20' };
  const shape = { perExecution: 5, perUnit: 1, changeDetection: true, assumedExecutions: 50 };
  it.each<[string, StoredUnit | undefined, boolean, { low: number; high: number; unknownUnits: number }]>([
    [
      'a unit never stored: assumed executions, all read',
      undefined,
      true,
      { low: 252, high: 252, unknownUnits: 1 },
    ],
    [
      'a stored unit with no execution: its page and cross-check',
      { executions: 0, complete: 0 },
      true,
      { low: 2, high: 2, unknownUnits: 0 },
    ],
    [
      'every child complete: only the unit requests if nothing changed',
      { executions: 150, complete: 150 },
      true,
      { low: 3, high: 753, unknownUnits: 0 },
    ],
    [
      'incomplete children are read again',
      { executions: 10, complete: 4 },
      true,
      { low: 32, high: 52, unknownUnits: 0 },
    ],
    [
      'change detection off: everything is read',
      { executions: 10, complete: 10 },
      false,
      { low: 52, high: 52, unknownUnits: 0 },
    ],
  ])('%s', (_n, stored, changeDetection, expected) => {
    const map = new Map(stored ? [[unitKey(u), stored]] : []);
    expect(estimateRequests([u], map, { ...shape, changeDetection })).toEqual(expected);
  });

  it('sums over units', () => {
    const v = { task_id: 8, date: '2026-11-20' };
    const map = new Map([[unitKey(u), { executions: 10, complete: 10 }]]);
    expect(estimateRequests([u, v], map, shape)).toEqual({ low: 2 + 252, high: 52 + 252, unknownUnits: 1 });
  });
});
