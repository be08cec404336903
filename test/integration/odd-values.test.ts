/**
 * The simulator's `oddValues` fault over real sockets, through the real command line, into both
 * warehouses: answers hold rank numbers as "-", "３", 3.5 and 1e400, integers past INTEGER,
 * instants past 9999, money NUMERIC(18,4) would round, cards and reports holding 1e400, text past
 * a btree entry (src/simulator/odd-values.ts). The sync fails no unit: every listed execution
 * is stored or quarantined (stored + quarantined = listed), every deduction too, rank numbers
 * that are no integer are stored NULL with the value sent kept, and it exits 3 (records were
 * quarantined, README's exit codes); `verify` finds every stored execution as the API serves it.
 * The same sync again (--force) fails nothing and leaves the rows the first stored as they were.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.ts';
import { runCli } from '../helpers/cli.ts';
import { dumpData } from '../helpers/dump.ts';
import { withWarehouse } from '../helpers/sync.ts';
import { warehouseTargets } from '../helpers/targets.ts';

const RESULTS = 'GET /api/v2/geo/task/results';
const DEDUCTIONS = 'GET /api/v2/finance/deduction/details';

for (const t of warehouseTargets('odd-values')) {
  describe.skipIf(t.skip)(`odd values on ${t.dialect}`, () => {
    let sim: RunningSimulator;
    let target: string;

    beforeAll(async () => {
      // 240 a day: an execution whose `hours` is past INTEGER (one in 25, chosen by its
      // prompt_task_id, which the calendar day moves) on the day synced, whatever the day: at 80
      // one day in 20 had none, and nothing quarantined from task/results (0 of 3,000 days at 240).
      sim = await startSimulator({
        seed: 29,
        days: 3,
        executionsPerDay: 240,
        diagnosisStepMs: 1,
        faults: { oddValues: true },
      });
      target = await t.create();
    });

    afterAll(async () => {
      await sim?.close();
      await t.drop();
    });

    const counts = (sql: string, params: string[] = []) =>
      withWarehouse(target, async (w) => Number((await w.query(sql, params))[0]!.n));

    it('stores or quarantines every record, fails no unit, exits 3; a second run changes nothing stored', async () => {
      const day = sim.world.dates()[0]!;
      const env = {
        GEO_BASE_URL: sim.url,
        GEO_API_KEY: 'sim-key',
        GEO_WAREHOUSE: target,
        GEO_REQUESTS_PER_SECOND: '10000',
        GEO_CONCURRENCY: '16',
        GEO_LOG_LEVEL: 'warn',
      };
      const first = await runCli(['sync', '--date', day, '--no-progress'], env);
      expect(first.code, first.stdout + first.stderr).toBe(3);
      expect(first.stdout).toMatch(/units: \d+ done, 0 failed/);
      expect(first.stdout).toMatch(/rank numbers: \d+ stored as NULL/);
      // One warning for the run, not one per value.
      expect(
        first.stderr.match(/stored as NULL, the value sent kept in execution_ranks.raw_values/g),
      ).toHaveLength(1);

      const listed = sim.world.dayTotals(day).executions;
      const stored = await counts('SELECT count(*) AS n FROM geo.prompt_executions');
      const quarantined = await counts('SELECT count(*) AS n FROM geo.sync_rejects WHERE endpoint = $1', [
        RESULTS,
      ]);
      expect(quarantined).toBeGreaterThan(0);
      expect(stored + quarantined).toBe(listed);
      expect(await counts('SELECT count(*) AS n FROM geo.deductions')).toBe(
        sim.world.deductions().length -
          (await counts('SELECT count(*) AS n FROM geo.sync_rejects WHERE endpoint = $1', [DEDUCTIONS])),
      );
      // Children refused whole (a screenshot status past INTEGER, a products total, legacy times
      // past 9999) are quarantined; their executions are stored.
      expect(
        await counts(`SELECT count(*) AS n FROM geo.sync_rejects WHERE reason LIKE 'invalid_child:%'`),
      ).toBeGreaterThan(0);
      // No rank number is NaN or out of its column; those that were no integer are NULL, kept raw.
      expect(
        await counts('SELECT count(*) AS n FROM geo.execution_ranks WHERE raw_values IS NOT NULL'),
      ).toBeGreaterThan(0);
      expect(
        await counts(
          `SELECT count(*) AS n FROM geo.execution_ranks WHERE raw_values IS NOT NULL
           AND position IS NOT NULL AND visibility IS NOT NULL AND score IS NOT NULL`,
        ),
      ).toBe(0);
      const [run] = await withWarehouse(target, (w) =>
        w.query(`SELECT status, units_failed FROM geo.sync_runs`),
      );
      expect(run).toMatchObject({ status: 'partial', units_failed: 0 });

      // verify reads every stored execution again and finds what it stored (raw_values included).
      const check = await runCli(['verify', '--date', day, '--sample', '1000'], env);
      expect(check.code, check.stdout + check.stderr).toBe(0);
      expect(check.stdout).toMatch(/verified (\d+) of \1 sampled stored executions: 0 differences/);

      const before = await dumpData(target);
      const second = await runCli(['sync', '--date', day, '--force', '--no-progress'], env);
      expect(second.code, second.stdout + second.stderr).toBe(3);
      expect(second.stdout).toMatch(/units: \d+ done, 0 failed/);
      expect(await dumpData(target)).toEqual(before);
    });
  });
}
