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
  const shape = { perExecution: 5, changeDetection: true, assumedExecutions: 50 };
  const unit = (executions: number, complete: number, o: Partial<StoredUnit> = {}): StoredUnit => ({
    executions,
    complete,
    withoutScreenshot: 0,
    unsupported: 0,
    ...o,
  });
  it.each<[string, StoredUnit | undefined, boolean, { low: number; high: number; unknownUnits: number }]>([
    [
      'a unit never stored: assumed executions, all read; nothing stored, no cross-check',
      undefined,
      true,
      { low: 251, high: 251, unknownUnits: 1 },
    ],
    ['a stored unit with no execution: its page', unit(0, 0), true, { low: 1, high: 1, unknownUnits: 0 }],
    [
      'every child complete: only the unit requests if nothing changed',
      unit(150, 150),
      true,
      { low: 2, high: 752, unknownUnits: 0 },
    ],
    ['incomplete children are read again', unit(10, 4), true, { low: 31, high: 51, unknownUnits: 0 }],
    ['change detection off: everything is read', unit(10, 10), false, { low: 51, high: 51, unknownUnits: 0 }],
    [
      // 10 x (sources + 2 legacy) + 1 products request + 8 screenshots, and the page.
      'stored without a screenshot: none asked; unsupported products: one request',
      unit(10, 10, { withoutScreenshot: 2, unsupported: 10 }),
      true,
      { low: 1, high: 40, unknownUnits: 0 },
    ],
    [
      // Half read: 5 x 3 + 1 products request + 4 screenshots (the unit's shares), and the page.
      'the shares apply to the executions read',
      unit(10, 5, { withoutScreenshot: 2, unsupported: 10 }),
      true,
      { low: 21, high: 40, unknownUnits: 0 },
    ],
  ])('%s', (_n, stored, changeDetection, expected) => {
    const map = new Map(stored ? [[unitKey(u), stored]] : []);
    expect(estimateRequests([u], map, { ...shape, changeDetection })).toEqual(expected);
  });

  it('sums over units; one products request per unsupported platform task and run', () => {
    const v = { task_id: 8, date: '2026-11-20' };
    const map = new Map([[unitKey(u), unit(10, 10)]]);
    expect(estimateRequests([u, v], map, shape)).toEqual({ low: 1 + 251, high: 51 + 251, unknownUnits: 1 });
    const next = { task_id: 7, date: '2026-11-21' };
    const unsupported = unit(10, 10, { unsupported: 10 });
    const both = new Map([
      [unitKey(u), unsupported],
      [unitKey(next), unsupported],
    ]);
    // The second day of task 7 asks no products at all: 1 + 30 + 0 + 10.
    expect(estimateRequests([u, next], both, shape)).toEqual({ low: 2, high: 42 + 41, unknownUnits: 0 });
  });
});
