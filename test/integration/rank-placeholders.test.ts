/**
 * A server that writes "-" for a rank's visibility and score (a quarter of a day's executions, as
 * one did) must cost no unit and no execution: each is stored with those numbers NULL and the
 * "-" kept in execution_ranks.raw_values, nothing quarantined, the run a success; the next run
 * finds them unchanged. (Before, `Number("-")` was NaN, every unit holding one failed its write on
 * both warehouses, every run again, and nothing was quarantined.) Through the real client over
 * sockets, a proxy in front of the simulator playing that server, into both warehouses.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.ts';
import { SyncMetrics } from '../../src/sync/metrics.ts';
import { formatSummary } from '../../src/sync/summary.ts';
import { startProxy, type RunningProxy } from '../helpers/proxy.ts';
import { syncOnce, withWarehouse } from '../helpers/sync.ts';
import { warehouseTargets } from '../helpers/targets.ts';

type Item = { prompt_task_id: number; rank_details: Record<string, unknown>[] };

/** Every fourth execution's ranks lose their visibility and score to "-". */
const dashed = (id: number) => id % 4 === 0;

function dashRanks(url: URL, body: string): string | undefined {
  if (url.pathname !== '/api/v2/geo/task/results') return undefined;
  const answer = JSON.parse(body) as { data?: { data?: Item[] } };
  for (const item of answer.data?.data ?? []) {
    if (!dashed(item.prompt_task_id)) continue;
    for (const r of item.rank_details) Object.assign(r, { visibility: '-', score: '-' });
  }
  return JSON.stringify(answer);
}

for (const t of warehouseTargets('rank-placeholders')) {
  describe.skipIf(t.skip)(`"-" as a rank number on ${t.dialect}`, () => {
    let sim: RunningSimulator;
    let proxy: RunningProxy;
    let target: string;

    beforeAll(async () => {
      sim = await startSimulator({ seed: 41, days: 3, executionsPerDay: 60, diagnosisStepMs: 1 });
      proxy = await startProxy(sim.url, { rewrite: dashRanks });
      target = await t.create();
    });

    afterAll(async () => {
      await proxy?.close();
      await sim?.close();
      await t.drop();
    });

    it('stores every execution, the dashes as NULL with the raw value kept, and fails no unit', async () => {
      const date = sim.world.dates()[0]!;
      const listed = sim.world.allPlatformTasks().flatMap((p) => [...sim.world.executions(p.task_id, date)]);
      const dashedRanks = listed
        .filter((e) => dashed(e.prompt_task_id))
        .reduce((n, e) => n + e.rank_details.length, 0);
      expect(dashedRanks).toBeGreaterThan(0);

      const s = await syncOnce({ baseUrl: proxy.url, target, dates: [date] });
      expect(s.failedUnits).toEqual([]);
      expect(s.counters.rejects).toBe(0);
      expect(s.status).toBe('success');
      expect(s.counters.rankValuesKeptRaw).toBe(2 * dashedRanks);
      // Reported: a summary line and a metric.
      expect(formatSummary(s)).toContain(`rank numbers: ${2 * dashedRanks} stored as NULL`);
      const metrics = new SyncMetrics();
      metrics.observeRun(s);
      expect(await metrics.registry.getSingleMetricAsString('geo_sync_rank_values_kept_raw_total')).toContain(
        `geo_sync_rank_values_kept_raw_total ${2 * dashedRanks}`,
      );

      await withWarehouse(target, async (w) => {
        const [{ n }] = (await w.query(
          'SELECT count(*) AS n FROM geo.prompt_executions WHERE date_time = CAST($1 AS DATE)',
          [date],
        )) as [{ n: number }];
        expect(Number(n)).toBe(listed.length);
        const ranks = await w.query(
          `SELECT r.prompt_task_id, r.position, r.visibility, r.score, r.raw_values
           FROM geo.execution_ranks r JOIN geo.prompt_executions e USING (prompt_task_id)
           WHERE e.date_time = CAST($1 AS DATE) ORDER BY r.prompt_task_id, r.ordinal`,
          [date],
        );
        const want = listed.flatMap((e) =>
          e.rank_details.map((r) => {
            const p = typeof r.position === 'number' && r.position > 0 ? r.position : null;
            return dashed(e.prompt_task_id)
              ? [e.prompt_task_id, p, null, null, { visibility: '-', score: '-' }]
              : [e.prompt_task_id, p, r.visibility, r.score, null];
          }),
        );
        expect(
          ranks.map((r) => [
            Number(r.prompt_task_id),
            r.position === null ? null : Number(r.position),
            r.visibility === null ? null : Number(r.visibility),
            r.score === null ? null : Number(r.score),
            r.raw_values,
          ]),
        ).toEqual(want.sort((a, b) => (a[0] as number) - (b[0] as number)));
      });

      // The next run finds every execution unchanged and fails nothing either.
      const again = await syncOnce({ baseUrl: proxy.url, target, dates: [date], force: true });
      expect(again.status).toBe('success');
      expect(again.failedUnits).toEqual([]);
      expect(again.counters.executionsUnchanged).toBe(listed.length);
      expect(again.counters.executionsRead).toBe(0);
    });
  });
}
