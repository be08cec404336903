/**
 * A real Prometheus (Debian's package) for a test file: its own configuration and storage in a
 * temporary directory, its web API on a free loopback port, scraping and evaluating every second.
 * Read back through the HTTP API, as an operator's dashboards and Alertmanager do.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { killOnExit } from './children.ts';
import { freePort } from './programs.ts';

export interface PrometheusOptions {
  /** job name -> `host:port` targets (metrics at /metrics). */
  jobs: Record<string, string[]>;
  /** Absolute paths of rule files to load. */
  ruleFiles?: string[];
}

export interface Sample {
  metric: Record<string, string>;
  value: number;
}

export interface ActiveAlert {
  labels: Record<string, string>;
  state: 'pending' | 'firing';
}

export interface RunningPrometheus {
  url: string;
  /** An instant query (`/api/v1/query`). */
  query(expr: string): Promise<Sample[]>;
  /** Alerts pending or firing (`/api/v1/alerts`). */
  alerts(): Promise<ActiveAlert[]>;
  /** Everything Prometheus logged. */
  log(): string;
  stop(): Promise<void>;
}

async function api<T>(url: string): Promise<T> {
  const res = await fetch(url);
  const body = (await res.json()) as { status: string; data: T; error?: string };
  if (body.status !== 'success') throw new Error(`${url}: ${body.error ?? res.status}`);
  return body.data;
}

export async function startPrometheus(bin: string, opts: PrometheusOptions): Promise<RunningPrometheus> {
  const dir = mkdtempSync(join(tmpdir(), 'geo-prometheus-'));
  const config = [
    'global:',
    '  scrape_interval: 1s',
    '  evaluation_interval: 1s',
    ...(opts.ruleFiles?.length
      ? ['rule_files:', ...opts.ruleFiles.map((f) => `  - ${JSON.stringify(f)}`)]
      : []),
    'scrape_configs:',
    ...Object.entries(opts.jobs).flatMap(([job, targets]) => [
      `  - job_name: ${JSON.stringify(job)}`,
      '    static_configs:',
      `      - targets: ${JSON.stringify(targets)}`,
    ]),
    '',
  ].join('\n');
  writeFileSync(join(dir, 'prometheus.yml'), config);
  const port = await freePort();
  const child = killOnExit(
    spawn(
      bin,
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=info',
      ],
      { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] },
    ),
  );
  let log = '';
  child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Ready when its readiness endpoint answers (it loads its rules and storage first).
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`prometheus exited at start:\n${log}`);
    const ok = await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (i > 300) throw new Error(`prometheus not ready after 30 s:\n${log}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    async query(expr) {
      const data = await api<{ result: { metric: Record<string, string>; value: [number, string] }[] }>(
        `${url}/api/v1/query?query=${encodeURIComponent(expr)}`,
      );
      return data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
    },
    async alerts() {
      const data = await api<{ alerts: ActiveAlert[] }>(`${url}/api/v1/alerts`);
      return data.alerts.map((a) => ({ labels: a.labels, state: a.state }));
    },
    log: () => log,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Polls `probe` until it returns something other than undefined (at most `ms`). */
export async function eventually<T>(
  probe: () => Promise<T | undefined>,
  what: string,
  ms = 30_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline)
      throw new Error(`${what}: not within ${ms} ms${last ? ` (${String(last)})` : ''}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
