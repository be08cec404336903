/**
 * A setting that points at nothing is named, through the real CLI: a connection refused
 * (127.0.0.9, or a local port nobody listens on), a host name that does not resolve (`.invalid`,
 * which never does) and a server that accepts and never answers, on GEO_WAREHOUSE, GEO_LOCK_URL
 * and GEO_BASE_URL; and a metrics port that cannot be listened on. One line naming the setting as
 * it was given (variable, flag or config file key), never a password, and the README's exit code:
 * 1 for a service that is not there (a service manager may try again), 2 for a port this process
 * cannot have (bad usage: retrying does not help).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.ts';
import { runCli, startCli, type CliResult } from '../helpers/cli.ts';
import { closedPort, expectStopped, silentServer } from '../helpers/signals.ts';
import { duckdbTarget, postgresTarget } from '../helpers/targets.ts';

const PASSWORD = 'pw-never-shown-9f3';

/** The one `error:` line, which must be the whole of what the command said on stderr. */
function errorLine(r: CliResult): string {
  expect(r.stderr + r.stdout).not.toContain(PASSWORD);
  const lines = r.stderr.split('\n').filter((l) => l.startsWith('error:'));
  expect(lines, r.stderr).toHaveLength(1);
  return lines[0]!;
}

describe('an unreachable setting is named', () => {
  let silent: Awaited<ReturnType<typeof silentServer>>;
  let closed: number;
  /** A port another process listens on. */
  let taken: Server;
  let takenPort: number;
  let dir: string;
  const wh = duckdbTarget('unreachable');
  let duck: string;

  beforeAll(async () => {
    silent = await silentServer();
    closed = await closedPort();
    taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    takenPort = (taken.address() as { port: number }).port;
    dir = mkdtempSync(join(tmpdir(), 'geo-unreachable-'));
    duck = await wh.create();
  });
  afterAll(async () => {
    await silent?.close();
    await new Promise((resolve) => taken?.close(resolve));
    await wh.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  describe('GEO_WAREHOUSE (PostgreSQL)', () => {
    it('refused, from the variable: exit 1, naming GEO_WAREHOUSE', async () => {
      const r = await runCli(['check'], { GEO_WAREHOUSE: `postgres://geo:${PASSWORD}@127.0.0.9:5499/geo` });
      expect(r.code).toBe(1);
      expect(errorLine(r)).toBe(
        'error: GEO_WAREHOUSE (warehouse): cannot reach PostgreSQL at postgres://geo:***@127.0.0.9:5499/geo (connection refused: connect ECONNREFUSED 127.0.0.9:5499)',
      );
    });

    it('a host that does not resolve, from the flag: exit 1, naming --warehouse', async () => {
      const r = await runCli([
        'report',
        '--out',
        join(dir, 'r.html'),
        '--warehouse',
        `postgres://geo:${PASSWORD}@db.invalid/geo`,
      ]);
      expect(r.code).toBe(1);
      expect(errorLine(r)).toMatch(
        /^error: --warehouse \(warehouse\): cannot reach PostgreSQL at postgres:\/\/geo:\*\*\*@db\.invalid\/geo \((host name not found|host name lookup failed \(DNS\)): getaddrinfo \w+ db\.invalid\)$/,
      );
    });

    it('no answer within connect_timeout, from a config file: exit 1, naming the file and key', async () => {
      const file = join(dir, 'geo.json');
      const url = `postgres://geo:${PASSWORD}@127.0.0.1:${silent.port}/geo?connect_timeout=1`;
      writeFileSync(file, JSON.stringify({ warehouse: url }));
      const r = await runCli(['export', '--format', 'csv', '--out', join(dir, 'lake'), '--config', file], {
        GEO_WAREHOUSE: undefined,
      });
      expect(r.code).toBe(1);
      expect(errorLine(r)).toBe(
        `error: --config ${file}: warehouse: cannot reach PostgreSQL at postgres://geo:***@127.0.0.1:${silent.port}/geo?connect_timeout=1 (no answer within 1 s)`,
      );
    });
  });

  it('SIGTERM while it connects to a PostgreSQL that never answers: 130 at once, not the timeout', async () => {
    const p = startCli(['check'], {
      GEO_WAREHOUSE: `postgres://geo:${PASSWORD}@127.0.0.1:${silent.port}/geo`,
    });
    await silent.connected();
    p.child.kill('SIGTERM');
    expectStopped(await p.done);
  });

  describe.skipIf(postgresTarget('').skip)('GEO_LOCK_URL', () => {
    const pgt = postgresTarget('unreachable-lock');
    let url: string;
    beforeAll(async () => {
      url = await pgt.create();
      const m = await runCli(['migrate'], { GEO_WAREHOUSE: url });
      expect(m.code, m.stderr).toBe(0);
    });
    afterAll(() => pgt.drop());

    it('refused: exit 1, naming GEO_LOCK_URL, the warehouse untouched', async () => {
      const r = await runCli(['state', 'reset', '--from', '2026-01-01', '--to', '2026-01-01'], {
        GEO_WAREHOUSE: url,
        GEO_LOCK_URL: `postgres://geo:${PASSWORD}@127.0.0.9:5499/geo`,
      });
      expect(r.code).toBe(1);
      expect(errorLine(r)).toBe(
        'error: GEO_LOCK_URL (lockUrl): cannot reach PostgreSQL at postgres://geo:***@127.0.0.9:5499/geo for the warehouse lock (connection refused: connect ECONNREFUSED 127.0.0.9:5499)',
      );
    });

    it('no answer within connect_timeout: exit 1, naming GEO_LOCK_URL', async () => {
      const r = await runCli(['rollups', 'refresh', '--no-progress'], {
        GEO_WAREHOUSE: url,
        GEO_LOCK_URL: `postgres://geo:${PASSWORD}@127.0.0.1:${silent.port}/geo?connect_timeout=1`,
      });
      expect(r.code).toBe(1);
      expect(errorLine(r)).toBe(
        `error: GEO_LOCK_URL (lockUrl): cannot reach PostgreSQL at postgres://geo:***@127.0.0.1:${silent.port}/geo?connect_timeout=1 for the warehouse lock (no answer within 1 s)`,
      );
    });

    it('worker with a metrics port in use: exit 2, naming --metrics-port', async () => {
      const r = await runCli(['worker', '--metrics-port', String(takenPort), '--metrics-host', '127.0.0.1'], {
        GEO_WAREHOUSE: url,
        GEO_BASE_URL: 'http://127.0.0.1:1',
        GEO_API_KEY: 'sim-key',
      });
      expect(r.code).toBe(2);
      expect(errorLine(r)).toBe(
        `error: --metrics-port ${takenPort}: cannot listen on 127.0.0.1 (listen EADDRINUSE: address already in use 127.0.0.1:${takenPort}); choose another port`,
      );
    });
  });

  describe('GEO_BASE_URL', () => {
    const api = (baseUrl: string, extra: Record<string, string> = {}) => ({
      GEO_BASE_URL: baseUrl,
      GEO_API_KEY: 'sim-key',
      GEO_WAREHOUSE: duck,
      GEO_MAX_ATTEMPTS: '1',
      ...extra,
    });

    it('refused: exit 1, naming GEO_BASE_URL', async () => {
      const r = await runCli(['whoami'], api(`http://127.0.0.1:${closed}`));
      expect(r.code).toBe(1);
      expect(errorLine(r)).toMatch(
        new RegExp(
          `^error: GEO_BASE_URL \\(baseUrl\\): cannot reach http://127\\.0\\.0\\.1:${closed} \\(connection refused: connect ECONNREFUSED 127\\.0\\.0\\.1:${closed}\\): GET /api/v2/\\S+$`,
        ),
      );
    });

    it('a host that does not resolve, from the flag: exit 1, naming --base-url', async () => {
      const r = await runCli(['whoami', '--base-url', 'https://geo.invalid'], api('http://unused.example'));
      expect(r.code).toBe(1);
      expect(errorLine(r)).toMatch(
        /^error: --base-url \(baseUrl\): cannot reach https:\/\/geo\.invalid \((host name not found|host name lookup failed \(DNS\)): getaddrinfo \w+ geo\.invalid\): GET \/api\/v2\/\S+$/,
      );
    });

    it('no answer within GEO_TIMEOUT_MS: exit 1, naming GEO_BASE_URL', async () => {
      const r = await runCli(['whoami'], api(`http://127.0.0.1:${silent.port}`, { GEO_TIMEOUT_MS: '300' }));
      expect(r.code).toBe(1);
      expect(errorLine(r)).toMatch(
        new RegExp(
          `^error: GEO_BASE_URL \\(baseUrl\\): cannot reach http://127\\.0\\.0\\.1:${silent.port} \\(no answer within 300 ms\\): GET /api/v2/\\S+$`,
        ),
      );
    });

    it('a sync whose API is down fails (exit 1) with its error line naming GEO_BASE_URL', async () => {
      const r = await runCli(['sync', '--no-progress'], api(`http://127.0.0.1:${closed}`));
      expect(r.code).toBe(1);
      expect(r.stdout).toMatch(/FAILED/);
      expect(r.stdout).toMatch(
        new RegExp(
          `^error: GEO_BASE_URL \\(baseUrl\\): cannot reach http://127\\.0\\.0\\.1:${closed} \\(connection refused`,
          'm',
        ),
      );
    });
  });

  describe('--metrics-port', () => {
    let sim: RunningSimulator;
    beforeAll(async () => {
      sim = await startSimulator({ seed: 24, days: 1, executionsPerDay: 2 });
    });
    afterAll(() => sim?.close());

    const env = () => ({ GEO_BASE_URL: sim.url, GEO_API_KEY: 'sim-key', GEO_WAREHOUSE: duck });

    it('a port in use: schedule exits 2, naming --metrics-port', async () => {
      const r = await runCli(
        ['schedule', '--metrics-port', String(takenPort), '--metrics-host', '127.0.0.1'],
        env(),
      );
      expect(r.code).toBe(2);
      expect(errorLine(r)).toBe(
        `error: --metrics-port ${takenPort}: cannot listen on 127.0.0.1 (listen EADDRINUSE: address already in use 127.0.0.1:${takenPort}); choose another port`,
      );
    });

    it('an address this machine does not have: schedule exits 2, naming --metrics-host', async () => {
      // 192.0.2.0/24 is for documentation: no machine has it.
      const r = await runCli(['schedule', '--metrics-port', '0', '--metrics-host', '192.0.2.1'], env());
      expect(r.code).toBe(2);
      expect(errorLine(r)).toMatch(/^error: --metrics-host 192\.0\.2\.1 \(--metrics-port 0\): cannot listen/);
    });
  });
});
