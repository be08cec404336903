/**
 * When a run refreshes the aggregates of the units its writes marked stale (RollupRefresher):
 * after enough executions or enough time since the last refresh, always at the end, and a
 * failure during the run is logged and left to the next refresh, never thrown at the writer.
 */
import { describe, expect, it } from 'vitest';
import type { StaleRefresh } from '../../src/load/warehouse.ts';
import { silentLogger } from '../../src/log.ts';
import { RollupRefresher } from '../../src/sync/rollup-refresh.ts';

function harness(fail = false) {
  let now = 0;
  const calls: number[] = [];
  const warehouse = {
    refreshStaleRollups: async (): Promise<StaleRefresh> => {
      calls.push(now);
      if (fail) throw new Error('the warehouse refused');
      return { units: 2, executions: 10, batches: 1 };
    },
  };
  const r = new RollupRefresher(warehouse, silentLogger, () => now, { executions: 100, ms: 1_000 });
  return { r, calls, at: (t: number) => (now = t) };
}

describe('RollupRefresher', () => {
  const cases: { name: string; writes: [at: number, executions: number][]; refreshedAt: number[] }[] = [
    { name: 'nothing written: no refresh during the run', writes: [[5_000, 0]], refreshedAt: [] },
    {
      name: 'below both bounds: none',
      writes: [
        [10, 50],
        [20, 49],
      ],
      refreshedAt: [],
    },
    {
      name: 'the executions bound, then counted again from zero',
      writes: [
        [10, 60],
        [20, 40],
        [30, 99],
        [40, 1],
      ],
      refreshedAt: [20, 40],
    },
    {
      name: 'the time bound, with something written',
      writes: [
        [500, 1],
        [1_000, 1],
        [1_500, 1],
        [2_000, 1],
      ],
      refreshedAt: [1_000, 2_000],
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const { r, calls, at } = harness();
      for (const [t, n] of c.writes) {
        at(t);
        await r.wrote(n);
      }
      expect(calls).toEqual(c.refreshedAt);
    });
  }

  it('finish refreshes whatever is left and returns the run totals', async () => {
    const { r, calls, at } = harness();
    at(10);
    await r.wrote(100);
    at(20);
    expect(await r.finish()).toEqual({ units: 4, executions: 20, batches: 2 });
    expect(calls).toEqual([10, 20]);
  });

  it('a refresh that fails during the run is not the writer’s failure; at the end it is thrown', async () => {
    const { r, calls } = harness(true);
    await expect(r.wrote(100)).resolves.toBeUndefined();
    expect(calls).toHaveLength(1);
    await expect(r.finish()).rejects.toThrow('the warehouse refused');
  });
});
