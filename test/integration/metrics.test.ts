/**
 * `schedule --metrics-port`: the real CLI against the simulator (with faults, so retries and 429s
 * happen) into a DuckDB file; /metrics scraped over HTTP after the run must say what the run's
 * summary in geo.sync_runs says.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.ts';
import { startCli } from '../helpers/cli.ts';
import { withWarehouse } from '../helpers/sync.ts';
import { duckdbTarget } from '../helpers/targets.ts';
import { metricsUrl, parseMetrics } from '../helpers/metrics.ts';

describe('schedule --metrics-port', () => {
  let sim: RunningSimulator;
  let env: Record<string, string>;
  const wh = duckdbTarget('metrics');

  beforeAll(async () => {
    sim = await startSimulator({
      seed: 11,
      days: 3,
      executionsPerDay: 20,
      // Every 200th request (of about 480) is a 429 (count-based, so it happens however fast or slow this machine
      // is: a per-second limit did not trip on a busy CI runner); its retry makes retries > 0.
      faults: { errorRate: 0.05, rateLimitEvery: 200, retryAfterSeconds: 1 },
    });
    env = {
      GEO_BASE_URL: sim.url,
      GEO_API_KEY: 'sim-key',
      GEO_WAREHOUSE: await wh.create(),
      GEO_REQUESTS_PER_SECOND: '5000',
      GEO_CONCURRENCY: '16',
      GEO_MAX_ATTEMPTS: '20',
      GEO_RETRY_BASE_DELAY_MS: '5',
      GEO_RETRY_MAX_DELAY_MS: '50',
    };
  });
  afterAll(async () => {
    await sim?.close();
    await wh.drop();
  });

  it('serves Prometheus text whose figures match the run summary', async () => {
    const p = startCli(
      [
        'schedule',
        '--cron',
        '0 0 1 1 *',
        '--lookback-days',
        '1',
        '--run-now',
        '--metrics-port',
        '0',
        '--metrics-host',
        '127.0.0.1',
      ],
      env,
    );
    let text: string;
    let notFound: number;
    try {
      await p.waitForLog(/"msg":"run \d+T\d+Z-[0-9a-f]+: (SUCCESS|PARTIAL)/);
      const url = metricsUrl(p.stderr());
      const res = await fetch(url);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      text = await res.text();
      notFound = (await fetch(url.replace('/metrics', '/other'))).status;
    } finally {
      p.child.kill('SIGTERM');
    }
    const r = await p.done;
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    expect(notFound).toBe(404);

    // The scheduler holds the DuckDB file while it runs: its run log is read once it stopped.
    const m = parseMetrics(text);
    const [run] = await withWarehouse(env.GEO_WAREHOUSE!, (w) => w.listRuns(1));
    expect(run).toBeDefined();
    const rows = run!.rows as Record<string, number>;
    expect(run!.requests).toBeGreaterThan(0);
    expect(run!.retries).toBeGreaterThan(0);
    expect(run!.rate_limited).toBeGreaterThan(0);

    expect(m.get(`geo_sync_runs_total{status="${run!.status}"}`)).toBe(1);
    expect(m.get('geo_sync_runs_total{status="failed"}')).toBe(0);
    expect(m.get('geo_sync_requests_total')).toBe(run!.requests);
    expect(m.get('geo_sync_retries_total')).toBe(run!.retries);
    expect(m.get('geo_sync_rate_limited_total')).toBe(run!.rate_limited);
    expect(m.get('geo_sync_rejects_total')).toBe(run!.rejects);
    expect(m.get('geo_sync_units_total{state="done"}')).toBe(run!.units_done);
    expect(Object.keys(rows).length).toBeGreaterThan(3);
    for (const [table, n] of Object.entries(rows))
      expect(m.get(`geo_sync_rows_written_total{table="${table}"}`), table).toBe(n);
    const seconds = (Date.parse(run!.finished_at!) - Date.parse(run!.started_at)) / 1000;
    expect(m.get('geo_sync_last_run_duration_seconds')).toBeCloseTo(seconds, 3);
    const lastSuccess = m.get('geo_sync_last_success_timestamp_seconds');
    if (run!.status === 'success') expect(lastSuccess).toBeCloseTo(Date.parse(run!.finished_at!) / 1000, 3);
    else expect(lastSuccess).toBe(0);
  });

  it('--check: the data tests run after each run, their results in the log and the metrics', async () => {
    sim.setFaults({});
    const own = duckdbTarget('metrics-check');
    const p = startCli(
      [
        'schedule',
        '--cron',
        '0 0 1 1 *',
        '--lookback-days',
        '1',
        '--run-now',
        '--check',
        '--metrics-port',
        '0',
        '--metrics-host',
        '127.0.0.1',
      ],
      { ...env, GEO_WAREHOUSE: await own.create() },
    );
    let text: string;
    try {
      await p.waitForLog(/"msg":"data tests done"/);
      text = await (await fetch(metricsUrl(p.stderr()))).text();
    } finally {
      p.child.kill('SIGTERM');
    }
    const r = await p.done;
    await own.drop();
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    expect(r.stderr).toMatch(/"passed":8,"failed":0,"msg":"data tests done"/);
    const m = parseMetrics(text);
    for (const check of [
      'keys_unique',
      'children_have_execution',
      'executions_have_platform_task',
      'units_finished',
      'unit_execution_counts',
      'execution_child_counts',
      'rollups_match',
      'freshness',
    ]) {
      expect(m.get(`geo_check_passed{check="${check}"}`), check).toBe(1);
      expect(m.get(`geo_check_failing_rows{check="${check}"}`), check).toBe(0);
    }
    expect(m.get('geo_check_last_run_timestamp_seconds')).toBeGreaterThan(Date.now() / 1000 - 120);
  });
});
