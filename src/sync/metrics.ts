/**
 * Prometheus metrics of a long-running `schedule` process, from the summaries of its runs.
 * A private Registry (never prom-client's global one): two schedulers in one process, or a
 * library user with metrics of their own, never collide. Counters add up every run of the
 * process; gauges describe the last run. The alert rules built on them are in
 * deploy/prometheus/geo-sync.rules.yml.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Gauge, Registry } from 'prom-client';
import type { RunSummary } from './run.ts';

/** The `status` label of a run that threw before it had a summary (not a RunStatus). */
export type RunOutcome = RunSummary['status'] | 'locked';

const STATUSES: readonly RunOutcome[] = ['success', 'partial', 'failed', 'interrupted', 'locked'];

export class SyncMetrics {
  readonly registry = new Registry();
  private readonly runs: Counter<'status'>;
  private readonly rows: Counter<'table'>;
  private readonly requests: Counter;
  private readonly retries: Counter;
  private readonly rateLimited: Counter;
  private readonly rejects: Counter;
  private readonly units: Counter<'state'>;
  private readonly executions: Counter<'state'>;
  private readonly listedTwice: Counter;
  private readonly rankValuesKeptRaw: Counter;
  private readonly lastDuration: Gauge;
  private readonly lastSuccess: Gauge;
  private readonly lastStatus: Gauge<'status'>;
  private readonly started: Gauge;
  private readonly checkPassed: Gauge<'check'>;
  private readonly checkFailingRows: Gauge<'check'>;
  private readonly checksAt: Gauge;

  constructor() {
    const registers = [this.registry];
    this.runs = new Counter({
      name: 'geo_sync_runs_total',
      help: 'Runs finished, by status (success, partial, failed, interrupted; locked: refused by the warehouse lock)',
      labelNames: ['status'],
      registers,
    });
    this.rows = new Counter({
      name: 'geo_sync_rows_written_total',
      help: 'Rows written to the warehouse, by table',
      labelNames: ['table'],
      registers,
    });
    this.requests = new Counter({
      name: 'geo_sync_requests_total',
      help: 'HTTP requests made to the API (attempts, retries included)',
      registers,
    });
    this.retries = new Counter({ name: 'geo_sync_retries_total', help: 'Requests retried', registers });
    this.rateLimited = new Counter({
      name: 'geo_sync_rate_limited_total',
      help: 'Responses with HTTP 429 (rate limited)',
      registers,
    });
    this.rejects = new Counter({
      name: 'geo_sync_rejects_total',
      help: 'Records quarantined in geo.sync_rejects',
      registers,
    });
    this.units = new Counter({
      name: 'geo_sync_units_total',
      help: 'Units (platform task, day) by outcome: done, failed, skipped (already finished)',
      labelNames: ['state'],
      registers,
    });
    this.executions = new Counter({
      name: 'geo_sync_executions_total',
      help: 'Listed executions by state: read (children requested), unchanged (left as stored by change detection)',
      labelNames: ['state'],
      registers,
    });
    this.executions.inc({ state: 'read' }, 0);
    this.executions.inc({ state: 'unchanged' }, 0);
    this.listedTwice = new Counter({
      name: 'geo_sync_executions_listed_twice_total',
      help: 'Executions listed again by their unit (paging shifted while answers were saved); the copy listed last was kept whole',
      registers,
    });
    this.rankValuesKeptRaw = new Counter({
      name: 'geo_sync_rank_values_kept_raw_total',
      help: 'Rank numbers (position, visibility, score) stored as NULL because the API sent no integer of their column; the value sent is kept in execution_ranks.raw_values',
      registers,
    });
    this.lastDuration = new Gauge({
      name: 'geo_sync_last_run_duration_seconds',
      help: 'Duration of the last run that finished, in seconds',
      registers,
    });
    this.lastSuccess = new Gauge({
      name: 'geo_sync_last_success_timestamp_seconds',
      help: 'When the last successful run finished (Unix time, seconds); 0 before the first',
      registers,
    });
    this.lastStatus = new Gauge({
      name: 'geo_sync_last_run_status',
      help: "The outcome of this process's last run: 1 for its status (success, partial, failed, interrupted, locked), 0 for the others; all 0 before the first",
      labelNames: ['status'],
      registers,
    });
    this.started = new Gauge({
      name: 'geo_sync_scheduler_start_timestamp_seconds',
      help: 'When this scheduler process started (Unix time, seconds)',
      registers,
    });
    this.started.set(Date.now() / 1000);
    this.checkPassed = new Gauge({
      name: 'geo_check_passed',
      help: 'Data test result of the last check (schedule --check): 1 passed, 0 failed',
      labelNames: ['check'],
      registers,
    });
    this.checkFailingRows = new Gauge({
      name: 'geo_check_failing_rows',
      help: 'Failing rows of each data test at the last check',
      labelNames: ['check'],
      registers,
    });
    this.checksAt = new Gauge({
      name: 'geo_check_last_run_timestamp_seconds',
      help: 'When the data tests last ran (Unix time, seconds); 0 before the first',
      registers,
    });
    this.checksAt.set(0);
    // Present from the first scrape, so alerts on absence or age work before any run.
    for (const status of STATUSES) {
      this.runs.inc({ status }, 0);
      this.lastStatus.set({ status }, 0);
    }
    this.lastSuccess.set(0);
  }

  /**
   * When the warehouse's last successful run finished, as read at start: a restarted scheduler
   * (systemd restarts it on failure) does not report "never" and hide or fake staleness.
   */
  setLastSuccess(at: Date | null): void {
    this.lastSuccess.set(at ? at.getTime() / 1000 : 0);
  }

  private setLastStatus(status: RunOutcome): void {
    for (const s of STATUSES) this.lastStatus.set({ status: s }, s === status ? 1 : 0);
  }

  /** Adds a finished run. */
  observeRun(s: RunSummary): void {
    this.runs.inc({ status: s.status });
    this.setLastStatus(s.status);
    for (const [table, n] of Object.entries(s.counters.rows)) this.rows.inc({ table }, n);
    this.requests.inc(s.api.requests);
    this.retries.inc(s.api.retries);
    this.rateLimited.inc(s.api.rateLimited);
    this.rejects.inc(s.counters.rejects);
    this.units.inc({ state: 'done' }, s.counters.unitsDone);
    this.units.inc({ state: 'failed' }, s.counters.unitsFailed);
    this.units.inc({ state: 'skipped' }, s.counters.unitsSkipped);
    this.executions.inc({ state: 'read' }, s.counters.executionsRead);
    this.executions.inc({ state: 'unchanged' }, s.counters.executionsUnchanged);
    this.listedTwice.inc(s.counters.executionsListedTwice);
    this.rankValuesKeptRaw.inc(s.counters.rankValuesKeptRaw);
    const finished = Date.parse(s.finishedAt);
    this.lastDuration.set((finished - Date.parse(s.startedAt)) / 1000);
    if (s.status === 'success') this.lastSuccess.set(finished / 1000);
  }

  /** The data tests run after a run (`schedule --check`). */
  observeChecks(
    results: readonly { name: string; passed: boolean; failing: number }[],
    at = new Date(),
  ): void {
    for (const r of results) {
      this.checkPassed.set({ check: r.name }, r.passed ? 1 : 0);
      this.checkFailingRows.set({ check: r.name }, r.failing);
    }
    this.checksAt.set(at.getTime() / 1000);
  }

  /** A run that ended without a summary (it threw, or the lock was held). */
  observeError(status: 'failed' | 'locked'): void {
    this.runs.inc({ status });
    this.setLastStatus(status);
  }
}

export interface MetricsServer {
  /** e.g. http://127.0.0.1:9464/metrics */
  readonly url: string;
  close(): Promise<void>;
}

/** Serves the registry as Prometheus text at GET /metrics; 404 elsewhere. */
export async function serveMetrics(
  registry: Registry,
  opts: { port: number; host?: string },
): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' || path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: try GET /metrics\n');
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      (e: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`${String(e)}\n`),
    );
  });
  const host = opts.host ?? '0.0.0.0';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return {
    url: `http://${shown.includes(':') ? `[${shown}]` : shown}:${port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
