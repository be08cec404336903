/**
 * A run killed with kill -9 once stayed `running` in geo.sync_runs for ever. The next
 * run that takes the warehouse lock exclusive marks it `interrupted`, saying who found it and
 * when; a run that holds the lock (here a worker's, shared) is never marked. The real CLI against
 * the simulator, on both warehouses.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.ts';
import { openWarehouse } from '../../src/load/index.ts';
import { runCli, startCli } from '../helpers/cli.ts';
import { withWarehouse } from '../helpers/sync.ts';
import { warehouseTargets, type WarehouseTarget } from '../helpers/targets.ts';

const FOUND =
  /^interrupted: found still running at \d{4}-\d\d-\d\dT[\d:.]+Z by geo-sync sync pid \d+ on .+, which took the warehouse lock; its process had ended without recording its end \(killed, or its machine stopped\)$/;

for (const t of warehouseTargets('interrupted-runs')) {
  describe.skipIf(t.skip)(`runs left running on ${t.dialect}`, () => {
    let sim: RunningSimulator;
    const targets: WarehouseTarget[] = [];
    beforeAll(async () => {
      // Slow answers: the killed run is surely still reading when it is killed.
      sim = await startSimulator({ seed: 31, days: 2, executionsPerDay: 16, faults: { latencyMs: 30 } });
    });
    afterAll(async () => {
      await sim?.close();
      for (const target of targets) await target.drop();
    });

    async function fresh(): Promise<Record<string, string>> {
      const target = warehouseTargets(`interrupted-${targets.length}`).find((x) => x.dialect === t.dialect)!;
      targets.push(target);
      return {
        GEO_BASE_URL: sim.url,
        GEO_API_KEY: 'sim-key',
        GEO_WAREHOUSE: await target.create(),
        GEO_REQUESTS_PER_SECOND: '10000',
        GEO_ENRICH_DIAGNOSIS: 'false',
        GEO_ENRICH_FINANCE: 'false',
        // Commits as it reads (no linger), so its first "unit done" comes while it still reads.
        GEO_WRITE_LINGER_MS: '0',
      };
    }

    const staleUnits = (env: Record<string, string>) =>
      withWarehouse(env.GEO_WAREHOUSE!, async (w) =>
        Number((await w.query('SELECT count(*) AS n FROM geo.rollup_stale_units'))[0]!.n),
      );

    const runs = (env: Record<string, string>) =>
      withWarehouse(env.GEO_WAREHOUSE!, (w) =>
        w.query(
          `SELECT run_id, status, CAST(finished_at AS VARCHAR) AS finished_at, error
           FROM geo.sync_runs ORDER BY started_at`,
        ),
      );

    it('a run killed with kill -9 is marked interrupted by the next run that takes the lock', async () => {
      const env = await fresh();
      const [first, second] = sim.world.dates();
      const killed = startCli(['backfill', '--from', first!, '--to', second!, '--no-progress'], env);
      await killed.waitForLog(/"msg":"unit done"/);
      killed.child.kill('SIGKILL');
      expect((await killed.done).signal).toBe('SIGKILL');
      const [left] = await runs(env);
      expect(left).toMatchObject({ status: 'running', finished_at: null, error: null });

      const next = await runCli(['sync', '--date', first!, '--no-progress'], env);
      expect(next.code, next.stderr.slice(-2000)).toBe(0);
      expect(next.stderr).toContain(
        `"runs":["${String(left!.run_id)}"],"msg":"runs left running by a process that ended (kill -9?): marked interrupted"`,
      );
      const after = await runs(env);
      expect(after).toHaveLength(2);
      expect(after[0]).toMatchObject({ run_id: left!.run_id, status: 'interrupted', finished_at: null });
      expect(after[0]!.error).toMatch(FOUND);
      expect(after[1]).toMatchObject({ status: 'success', error: null });
      // The next run refreshed every unit the killed one left stale (it never reached its end's
      // refresh), those of the other day too: nothing stale, the aggregates equal the rows.
      expect(await staleUnits(env)).toBe(0);
      const check = await runCli(['check', '--from', first!, '--to', second!], env);
      expect(check.stdout, check.stderr.slice(-2000)).toMatch(/ok\s+rollups_match/);
      // Nothing to mark the next time.
      const again = await runCli(['sync', '--date', first!, '--no-progress'], env);
      expect(again.code).toBe(0);
      expect(again.stderr).not.toContain('marked interrupted');
    });

    it.skipIf(t.dialect !== 'postgres')(
      'a run whose holder still holds the lock (a worker, shared) is never marked',
      async () => {
        const env = await fresh();
        const worker = await openWarehouse(env.GEO_WAREHOUSE!, { migrate: true });
        const live = {
          run_id: 'live-worker-attempt',
          kind: 'backfill' as const,
          args: { job: 'j', attempt: 1 },
          started_at: new Date().toISOString(),
          finished_at: null,
          status: 'running' as const,
          rows: {},
          requests: 0,
          retries: 0,
          rate_limited: 0,
          rejects: 0,
          units_total: 1,
          units_done: 0,
          units_failed: 0,
          error: null,
          unreadable: null,
          text_values_changed: 0,
          executions_read: 0,
          executions_unchanged: 0,
        };
        try {
          expect(await worker.tryLock('geo-sync worker (test)', 'shared')).toEqual({ acquired: true });
          await worker.insertRun(live);
          const refused = await runCli(['sync', '--date', sim.world.dates()[0]!, '--no-progress'], env);
          expect(refused.code, refused.stderr.slice(-2000)).toBe(4);
          expect((await runs(env)).map((r) => r.status)).toEqual(['running']);
          // The worker stops without finishing its row (as kill -9 would): the next run marks it.
          await worker.unlock();
          const next = await runCli(['sync', '--date', sim.world.dates()[0]!, '--no-progress'], env);
          expect(next.code, next.stderr.slice(-2000)).toBe(0);
          const after = await runs(env);
          expect(after[0]).toMatchObject({ run_id: live.run_id, status: 'interrupted' });
          expect(after[0]!.error).toMatch(FOUND);
        } finally {
          await worker.close();
        }
      },
    );
  });
}
