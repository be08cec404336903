/**
 * Which refusals end a run. A 401 (the key deleted mid-run) is fatal: no new unit starts, and
 * the run returns (and so releases its lock) only once nothing of it is still running. A 403 on
 * one platform task the key sees listed is about that task's data, not the key: that unit fails,
 * the others finish, the run is partial.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { UnauthorizedError } from '../../src/api/errors.ts';
import { createApi } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import type { ApiPort } from '../../src/extract/port.ts';
import { openWarehouse } from '../../src/load/index.ts';
import { silentLogger } from '../../src/log.ts';
import { startSimulator, type FaultOptions, type RunningSimulator } from '../../src/simulator/index.ts';
import { runSync } from '../../src/sync/run.ts';
import { syncOnce, withWarehouse } from '../helpers/sync.ts';
import { warehouseTargets } from '../helpers/targets.ts';

for (const t of warehouseTargets('fatal-errors')) {
  describe.skipIf(t.skip)(`refusals during a run on ${t.dialect}`, () => {
    const sims: RunningSimulator[] = [];
    afterAll(async () => {
      for (const s of sims) await s.close();
      await t.drop();
    });

    async function sim(faults: FaultOptions) {
      const s = await startSimulator({ seed: 21, days: 2, executionsPerDay: 40, faults });
      sims.push(s);
      return s;
    }

    it('a 403 on one platform task fails that unit only; the run is partial', async () => {
      const probe = await sim({});
      const date = probe.world.dates()[0]!;
      const forbidden = probe.world
        .allPlatformTasks()
        .find((p) => [...probe.world.executions(p.task_id, date)].length > 0)!.task_id;
      const s = await sim({ forbiddenTaskIds: [forbidden] });
      const target = await t.create();
      const summary = await syncOnce({ baseUrl: s.url, target, dates: [date] });

      expect(summary.status).toBe('partial');
      expect(summary.error).toBeNull();
      expect(summary.failedUnits.map((f) => f.unit)).toEqual([{ task_id: forbidden, date }]);
      expect(summary.failedUnits[0]!.error).toMatch(/forbidden \(403\)/);
      expect(summary.counters.unitsDone).toBe(summary.counters.unitsTotal - 1);
      expect(summary.counters.unitsDone).toBeGreaterThan(0);
      const rows = await withWarehouse(target, (w) =>
        w.query('SELECT task_id FROM geo.sync_checkpoints WHERE task_id = $1', [forbidden]),
      );
      expect(rows).toEqual([]);
    });

    it('a 401: no new unit starts, and the run returns only once its running units have stopped', async () => {
      const s = await sim({});
      const target = await t.create();
      const config = loadConfig({
        env: {},
        overrides: { baseUrl: s.url, apiKey: 'sim-key', warehouse: target, requestsPerSecond: 10_000 },
      });
      const api = createApi(config, silentLogger);
      const warehouse = await openWarehouse(target, { migrate: true });
      // Units read through the real client, except: the first unit's list is refused with 401
      // (the key deleted), and the second is still reading (held until released) meanwhile.
      const started: number[] = [];
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      let secondDone = false;
      const port: ApiPort = {
        ...api.port,
        resultPages: (task_id, date) => {
          started.push(task_id);
          const n = started.length;
          return (async function* () {
            if (n === 1) {
              await new Promise((r) => setTimeout(r, 50));
              throw new UnauthorizedError({
                endpoint: 'GET /api/v2/geo/task/results',
                params: { task_id, date },
              });
            }
            if (n === 2) {
              await held;
              secondDone = true;
            }
            yield* api.port.resultPages(task_id, date);
          })();
        },
      };
      try {
        const running = runSync(
          {
            api: port,
            warehouse,
            logger: silentLogger,
            config,
            apiStats: () => ({ requests: 0, retries: 0, rateLimited: 0 }),
          },
          { kind: 'sync', dates: s.world.dates(), customers: [], force: true, args: {}, unitConcurrency: 2 },
        );
        let returned = false;
        void running.then(() => (returned = true));
        // Both units under way, then time for the first one's refusal to arrive (after 50 ms).
        while (started.length < 2) await new Promise((r) => setTimeout(r, 10));
        await new Promise((r) => setTimeout(r, 300));
        expect(returned).toBe(false); // the second unit is still reading: the run waits for it
        release();
        const summary = await running;
        expect(secondDone).toBe(true);
        expect(summary.status).toBe('failed');
        expect(summary.error).toMatch(/unauthorized \(401\)/);
        await new Promise((r) => setTimeout(r, 200));
        expect(started).toHaveLength(2); // no unit started after the refusal
        expect(summary.counters.unitsTotal).toBeGreaterThan(2);
      } finally {
        await warehouse.close();
        await api.close();
      }
    });
  });
}
