import { describe, expect, it } from 'vitest';
import { planUnits, refreshFromDay, scheduledDates, unitKey } from '../../src/sync/planner.ts';

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
