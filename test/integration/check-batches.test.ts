/**
 * `check`'s rollups_match compares the aggregates a batch of days at a time (one query over a
 * year ran DuckDB out of its 128MB): in batches of one day it finds exactly the rows, and the
 * same sample, that one query over the whole range finds, on both warehouses.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runChecks } from '../../src/quality/checks.ts';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.ts';
import { damage } from '../helpers/damage.ts';
import { syncOnce, withWarehouse } from '../helpers/sync.ts';
import { warehouseTargets } from '../helpers/targets.ts';

let sim: RunningSimulator;
let dates: string[];
beforeAll(async () => {
  sim = await startSimulator({ seed: 23, days: 3, executionsPerDay: 20 });
  dates = sim.world.dates();
});
afterAll(async () => {
  await sim?.close();
});

for (const target of warehouseTargets('check-batches')) {
  describe.skipIf(target.skip)(`rollups_match in batches of days (${target.dialect})`, () => {
    let url: string;
    beforeAll(async () => {
      url = await target.create();
      await syncOnce({ baseUrl: sim.url, target: url, dates });
    }, 60_000);
    afterAll(() => target.drop());

    it('finds what one query over the range finds, aggregates of several days and tables wrong', async () => {
      const range = { from: dates[0]!, to: dates.at(-1)! };
      const rollupsMatch = (batch: number) =>
        withWarehouse(url, async (w) => {
          const results = await runChecks(w, { ...range, rollupsBatchExecutions: batch });
          return results.find((r) => r.name === 'rollups_match')!;
        });
      expect((await rollupsMatch(1)).passed).toBe(true);

      // Wrong on the first and the last day, in two tables; and an aggregate row of a day whose
      // executions are gone (a day only the aggregates know).
      const columns =
        'task_id, project_id, customer_id, engine, model, executions, available, missing, with_screenshot, valid_rank_items, citations';
      for (const sql of [
        `UPDATE geo.rollup_executions_daily SET executions = executions + 1 WHERE date = DATE '${range.from}'`,
        `DELETE FROM geo.rollup_brands_daily WHERE date = DATE '${range.to}'`,
        `INSERT INTO geo.rollup_executions_daily (date, week_start, ${columns})
           SELECT DATE '2020-01-06', DATE '2020-01-06', ${columns}
           FROM geo.rollup_executions_daily WHERE date = DATE '${range.to}'`,
      ])
        await damage(url, sql);
      const wide = { from: '2020-01-01', to: range.to };
      const check = (batch: number) =>
        withWarehouse(url, async (w) => {
          const results = await runChecks(w, { ...wide, rollupsBatchExecutions: batch });
          return results.find((r) => r.name === 'rollups_match')!;
        });
      const whole = await check(Number.MAX_SAFE_INTEGER);
      const daily = await check(1);
      expect(whole.passed).toBe(false);
      expect(whole.failing).toBeGreaterThan(5);
      expect(daily.failing).toBe(whole.failing);
      expect(daily.sample).toEqual(whole.sample);
      // The sample starts at the earliest day: the row only the aggregates hold.
      expect(String(daily.sample[0]!.date)).toMatch(/^2020-01-06/);
    });
  });
}
