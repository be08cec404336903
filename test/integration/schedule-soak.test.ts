/**
 * A scheduler that runs for months. The real CLI's `schedule` with a seconds cron
 * against the simulator (a tiny world) for at least 30 runs: resident memory and open file
 * descriptors after run 30 are within 10% of after run 5 (no growth per run), every run has its
 * row in geo.sync_runs, and the metrics add up to those rows (the first run reads every
 * execution, every later one finds them unchanged).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.ts';
import { startCli } from '../helpers/cli.ts';
import { withWarehouse } from '../helpers/sync.ts';
import { duckdbTarget } from '../helpers/targets.ts';
import { metricsUrl, parseMetrics } from '../helpers/metrics.ts';

const RUNS = 30;
const RUN_DONE = /"msg":"warehouse closed until the next run"/;

/** Resident memory (kB) and open file descriptors of a process (Linux /proc). */
function usage(pid: number): { rssKb: number; fds: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
  return { rssKb, fds: readdirSync(`/proc/${pid}/fd`).length };
}

describe.skipIf(process.platform !== 'linux')('schedule for 30 runs', () => {
  let sim: RunningSimulator;
  const wh = duckdbTarget('soak');
  let target: string;

  beforeAll(async () => {
    sim = await startSimulator({ seed: 12, days: 1, executionsPerDay: 8 });
    target = await wh.create();
  });
  afterAll(async () => {
    await sim?.close();
    await wh.drop();
  });

  it('keeps memory and descriptors flat, and records every run', async () => {
    const executions = sim.world
      .allPlatformTasks()
      .reduce((n, t) => n + [...sim.world.executions(t.task_id, sim.world.dates()[0]!)].length, 0);
    const p = startCli(
      [
        'schedule',
        '--cron',
        '* * * * * *',
        '--lookback-days',
        '0',
        '--metrics-port',
        '0',
        '--metrics-host',
        '127.0.0.1',
      ],
      {
        GEO_BASE_URL: sim.url,
        GEO_API_KEY: 'sim-key',
        GEO_WAREHOUSE: target,
        GEO_REQUESTS_PER_SECOND: '10000',
        GEO_CONCURRENCY: '16',
        GEO_ENRICH_DIAGNOSIS: 'false',
        GEO_ENRICH_FINANCE: 'false',
        GEO_ENRICH_TASK_CONFIG: 'false',
      },
    );
    let at5: ReturnType<typeof usage>;
    let at30: ReturnType<typeof usage>;
    let metrics: Map<string, number>;
    try {
      const fifth = p.waitForLog(RUN_DONE, 5);
      const last = p.waitForLog(RUN_DONE, RUNS);
      await fifth;
      at5 = usage(p.child.pid!);
      await last;
      at30 = usage(p.child.pid!);
      const url = metricsUrl(p.stderr());
      metrics = parseMetrics(await (await fetch(url)).text());
    } finally {
      p.child.kill('SIGTERM');
    }
    const r = await p.done;
    // With a tick every second a run is usually going when SIGTERM comes: it ends interrupted (130).
    expect([0, 130], r.stderr.slice(-2000)).toContain(r.code);

    expect(
      at30.rssKb,
      `RSS after run 5 ${at5.rssKb} kB, after run ${RUNS} ${at30.rssKb} kB`,
    ).toBeLessThanOrEqual(at5.rssKb * 1.1);
    expect(at30.fds, `fds after run 5 ${at5.fds}, after run ${RUNS} ${at30.fds}`).toBeLessThanOrEqual(
      at5.fds * 1.1,
    );

    const all = (await withWarehouse(target, (w) => w.listRuns(1000))).reverse();
    // The last run may have been cut short by the stop; every other one finished.
    const runs = all.at(-1)!.status === 'interrupted' ? all.slice(0, -1) : all;
    expect(runs.length).toBeGreaterThanOrEqual(RUNS);
    for (const run of runs) {
      expect(run.kind).toBe('schedule');
      expect(run.status).toBe('success');
      expect(run.finished_at).not.toBeNull();
      expect(run.units_failed).toBe(0);
    }
    expect(runs[0]!.executions_read).toBe(executions);
    for (const run of runs.slice(1)) {
      expect(run.executions_read).toBe(0);
      expect(run.executions_unchanged).toBe(executions);
    }
    // The scrape saw the runs finished by then (a run may finish between it and the stop).
    const scraped = metrics.get('geo_sync_runs_total{status="success"}')!;
    expect(scraped).toBeGreaterThanOrEqual(RUNS);
    expect(scraped).toBeLessThanOrEqual(runs.length);
    expect(metrics.get('geo_sync_executions_total{state="read"}')).toBe(executions);
    expect(metrics.get('geo_sync_executions_total{state="unchanged"}')).toBe((scraped - 1) * executions);
    const requests = runs.slice(0, scraped).reduce((n, run) => n + run.requests, 0);
    expect(metrics.get('geo_sync_requests_total')).toBe(requests);
  }, 300_000);
});
