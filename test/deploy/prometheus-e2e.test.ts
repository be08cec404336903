/**
 * A real Prometheus (Debian's package) scrapes `schedule --metrics-port` over a run
 * against the simulator, with deploy/prometheus/geo-sync.rules.yml loaded; the values are read
 * back through Prometheus's HTTP API and equal what the scheduler serves, the alerts that should
 * be active are, and the scheduler's process gone is seen (up 0, GeoSyncSchedulerDown pending).
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.ts';
import { startCli, type CliProcess } from '../helpers/cli.ts';
import { parseMetrics } from '../helpers/metrics.ts';
import { freePort, requireProgram } from '../helpers/programs.ts';
import { eventually, startPrometheus, type RunningPrometheus } from '../helpers/prometheus.ts';
import { duckdbTarget } from '../helpers/targets.ts';

const RULES = fileURLToPath(new URL('../../deploy/prometheus/geo-sync.rules.yml', import.meta.url));
const bin = requireProgram('prometheus', 'prometheus');

describe.skipIf(!bin)('a real Prometheus scraping schedule --metrics-port', () => {
  let sim: RunningSimulator;
  let prometheus: RunningPrometheus;
  let scheduler: CliProcess;
  let scrapeUrl: string;
  const wh = duckdbTarget('prometheus-e2e');

  beforeAll(async () => {
    // Every 6th request answered 429 (Retry-After 0): about one in six requests rate limited,
    // above the rules' 5%, and every request still succeeds on a retry.
    // Answers slow enough that the run outlasts Prometheus's first scrapes (every 1 s) by far,
    // even on a loaded machine: its counters are seen at 0 before the run, as on a scheduler that
    // waits for its nightly tick (rate() and increase() need a sample from before the run). The
    // run is about 230 requests over 104 units (2 days of 52 platform tasks), mostly one after
    // another once the 429s have lowered its concurrency: ~20 s at 100 ms an answer (~50 s at
    // 250 ms, which proved nothing more). At 40 ms (~4 s) it could end before the first scrape.
    sim = await startSimulator({
      seed: 7,
      days: 2,
      executionsPerDay: 8,
      faults: { rateLimitEvery: 6, retryAfterSeconds: 0, latencyMs: 100 },
    });
    const port = await freePort();
    scrapeUrl = `http://127.0.0.1:${port}/metrics`;
    prometheus = await startPrometheus(bin!, {
      jobs: { 'geo-sync': [`127.0.0.1:${port}`] },
      ruleFiles: [RULES],
    });
    scheduler = startCli(
      [
        'schedule',
        '--cron',
        '0 0 1 1 *',
        '--lookback-days',
        '1',
        '--run-now',
        '--check',
        '--metrics-port',
        String(port),
        '--metrics-host',
        '127.0.0.1',
      ],
      {
        GEO_BASE_URL: sim.url,
        GEO_API_KEY: 'sim-key',
        GEO_WAREHOUSE: await wh.create(),
        GEO_REQUESTS_PER_SECOND: '5000',
        GEO_CONCURRENCY: '4',
        GEO_MAX_ATTEMPTS: '10',
        GEO_RETRY_BASE_DELAY_MS: '5',
        GEO_RETRY_MAX_DELAY_MS: '20',
      },
    );
  }, 60_000);

  afterAll(async () => {
    if (scheduler && scheduler.child.exitCode === null) scheduler.child.kill('SIGKILL');
    await prometheus?.stop();
    await sim?.close();
    await wh.drop();
  });

  it('reads the run back through the HTTP API, with the alerts its figures call for', async () => {
    await scheduler.waitForLog(/"msg":"data tests done"/);
    const served = parseMetrics(await (await fetch(scrapeUrl)).text());
    expect(served.get('geo_sync_runs_total{status="success"}')).toBe(1);
    const requests = served.get('geo_sync_requests_total')!;
    const limited = served.get('geo_sync_rate_limited_total')!;
    expect(limited / requests).toBeGreaterThan(0.05);

    // What Prometheus stored from its scrapes after the run: the same values.
    const one = async (expr: string) => {
      const r = await prometheus.query(expr);
      return r.length === 1 ? r[0]!.value : undefined;
    };
    // The run's counters are served before its data tests end, the check gauges after: wait for
    // a scrape that holds both (one taken between the two lacked the gauges, 1 CI run in ~10).
    await eventually(
      async () =>
        (await one('geo_sync_runs_total{job="geo-sync",status="success"}')) === 1 &&
        (await one('geo_check_passed{check="keys_unique"}')) !== undefined
          ? true
          : undefined,
      'Prometheus scraped the finished run and its data tests',
    );
    expect(await one('up{job="geo-sync"}')).toBe(1);
    expect(await one('geo_sync_requests_total')).toBe(requests);
    expect(await one('geo_sync_rate_limited_total')).toBe(limited);
    expect(await one('geo_sync_last_run_status{status="success"}')).toBe(1);
    expect(await one('geo_sync_last_run_status{status="failed"}')).toBe(0);
    expect(await one('geo_sync_last_success_timestamp_seconds')).toBe(
      served.get('geo_sync_last_success_timestamp_seconds'),
    );
    expect(await one('geo_sync_rows_written_total{table="prompt_executions"}')).toBe(
      served.get('geo_sync_rows_written_total{table="prompt_executions"}'),
    );
    expect(await one('geo_check_passed{check="keys_unique"}')).toBe(1);
    expect(await one('geo_sync_scheduler_start_timestamp_seconds')).toBe(
      served.get('geo_sync_scheduler_start_timestamp_seconds'),
    );

    // The rules as loaded: the rate-limited share fires; a fresh success, a passing check and a
    // live scheduler keep the others silent.
    const active = await eventually(async () => {
      const a = await prometheus.alerts();
      return a.some((x) => x.labels.alertname === 'GeoSyncRateLimited' && x.state === 'firing')
        ? a
        : undefined;
    }, 'GeoSyncRateLimited firing');
    expect(active.map((a) => a.labels.alertname)).toEqual(['GeoSyncRateLimited']);
  });

  it('the scheduler stopped: up 0, GeoSyncSchedulerDown pending', async () => {
    scheduler.child.kill('SIGTERM');
    const r = await scheduler.done;
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    await eventually(
      async () => ((await prometheus.query('up{job="geo-sync"} == 0')).length === 1 ? true : undefined),
      'up 0 after the scheduler stopped',
    );
    await eventually(async () => {
      const a = await prometheus.alerts();
      return a.find((x) => x.labels.alertname === 'GeoSyncSchedulerDown' && x.state === 'pending');
    }, 'GeoSyncSchedulerDown pending');
  });
});
