/**
 * SIGINT/SIGTERM stop every command that talks to the API cleanly, through the real CLI on a
 * DuckDB file: `sync`, `backfill` and `schedule` in the middle of a run (the simulator answers
 * slowly, so units are provably in flight once the plan is logged), `verify` while it re-reads
 * executions, `diagnose --wait` while it polls. Each exits 130, leaves no lock file, and the next
 * run of the same command succeeds with nobody touching anything. One simulator and one warehouse
 * for the file.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.ts';
import { runCli, startCli } from '../helpers/cli.ts';
import { expectNoDuckDBLock, expectStopped, stopAt } from '../helpers/signals.ts';
import { withWarehouse } from '../helpers/sync.ts';
import { duckdbTarget } from '../helpers/targets.ts';

/** Slow enough that a run is still reading when the test signals it, quick enough to finish after. */
const SLOW = { latencyMs: 150 };

describe('a signal in the middle of a command that talks to the API (DuckDB)', () => {
  let sim: RunningSimulator;
  const wh = duckdbTarget('signals-runs');
  let env: Record<string, string>;
  let days: string[];

  beforeAll(async () => {
    sim = await startSimulator({
      seed: 21,
      days: 2,
      executionsPerDay: 6,
      diagnosisStepMs: 50,
      diagnosisFailureRate: 0,
    });
    days = sim.world.dates();
    env = {
      GEO_BASE_URL: sim.url,
      GEO_API_KEY: 'sim-key',
      GEO_WAREHOUSE: await wh.create(),
      GEO_REQUESTS_PER_SECOND: '1000',
    };
  });
  afterAll(async () => {
    await sim?.close();
    await wh.drop();
  });

  const lastRun = () =>
    withWarehouse(env.GEO_WAREHOUSE!, (w) =>
      w.query(`SELECT kind, status FROM geo.sync_runs ORDER BY started_at DESC LIMIT 1`),
    );

  it('sync, SIGTERM mid-run: 130, the run interrupted, no lock; the next sync finishes it', async () => {
    sim.setFaults(SLOW);
    const r = await stopAt(
      startCli(['sync', '--date', days[1]!, '--no-progress'], env),
      /"msg":"plan"/,
      'SIGTERM',
    );
    expectStopped(r);
    expectNoDuckDBLock(env.GEO_WAREHOUSE!);
    expect(await lastRun()).toEqual([{ kind: 'sync', status: 'interrupted' }]);
    sim.setFaults({});
    const next = await runCli(['sync', '--date', days[1]!, '--no-progress'], env);
    expect(next.code, next.stderr.slice(-2000)).toBe(0);
    expect(await lastRun()).toEqual([{ kind: 'sync', status: 'success' }]);
  });

  it('sync with e-mail and password, SIGTERM mid-run: the login token is revoked on the way out (tokens never expire)', async () => {
    const login = {
      ...env,
      GEO_API_KEY: '',
      GEO_EMAIL: 'demo@geo-sync.local',
      GEO_PASSWORD: 'demo-password',
    };
    const before = sim.liveLoginTokens();
    sim.setFaults(SLOW);
    const r = await stopAt(
      startCli(['sync', '--date', days[1]!, '--no-progress'], login),
      /"msg":"plan"/,
      'SIGTERM',
    );
    sim.setFaults({});
    expectStopped(r);
    expect(sim.stats.byEndpoint['POST /api/v2/auth/logout'] ?? 0).toBeGreaterThan(0);
    expect(sim.liveLoginTokens()).toBe(before);
    // And after a run that ends by itself.
    const next = await runCli(['sync', '--date', days[1]!, '--no-progress'], login);
    expect(next.code, next.stderr.slice(-2000)).toBe(0);
    expect(sim.liveLoginTokens()).toBe(before);

    // Stopped while the queue waits out a Retry-After of a minute: the logout does not wait in it.
    sim.setFaults({ rateLimitEvery: 15, retryAfterSeconds: 60 });
    try {
      const paused = startCli(['sync', '--date', days[0]!, '--no-progress'], {
        ...login,
        GEO_LOG_LEVEL: 'info',
      });
      await paused.waitForLog(/"status":429.*"msg":"retrying request"/);
      paused.child.kill('SIGINT');
      const p = await paused.done;
      expectStopped(p);
      expect(p.stderr).toMatch(/revoking the login token \(up to 3 s; signal again to exit now\)/);
    } finally {
      sim.setFaults({});
    }
    expect(sim.liveLoginTokens()).toBe(before);
  });

  it('backfill, SIGINT mid-run: 130, no lock; the next backfill finishes it', async () => {
    sim.setFaults(SLOW);
    const args = ['backfill', '--from', days[0]!, '--to', days[1]!, '--force', '--no-progress'];
    const r = await stopAt(startCli(args, env), /"msg":"plan"/, 'SIGINT');
    expectStopped(r);
    expectNoDuckDBLock(env.GEO_WAREHOUSE!);
    expect(await lastRun()).toEqual([{ kind: 'backfill', status: 'interrupted' }]);
    sim.setFaults({});
    const next = await runCli(
      args.filter((a) => a !== '--force'),
      env,
    );
    expect(next.code, next.stderr.slice(-2000)).toBe(0);
  });

  it('schedule, SIGTERM during a run: 130 (a run cut short), no lock; the next scheduler runs and stops with 0', async () => {
    const args = ['schedule', '--cron', '0 0 1 1 *', '--lookback-days', '0', '--run-now'];
    sim.setFaults(SLOW);
    const r = await stopAt(startCli(args, env), /"msg":"plan"/, 'SIGTERM');
    expect(r.code, r.stderr.slice(-2000)).toBe(130);
    expectNoDuckDBLock(env.GEO_WAREHOUSE!);
    expect(await lastRun()).toEqual([{ kind: 'schedule', status: 'interrupted' }]);
    sim.setFaults({});
    const next = startCli(args, env);
    const done = await stopAt(next, /"msg":"warehouse closed until the next run"/, 'SIGTERM');
    expect(done.code, done.stderr.slice(-2000)).toBe(0);
    expect(await lastRun()).toEqual([{ kind: 'schedule', status: 'success' }]);
  });

  it('verify, SIGTERM while it re-reads executions: 130; the next verify compares them all', async () => {
    sim.setFaults(SLOW);
    const args = ['verify', '--date', days[1]!, '--sample', '4'];
    const r = await stopAt(
      startCli(args, { ...env, GEO_LOG_LEVEL: 'debug' }),
      /"endpoint":"GET \/api\/v2\/geo\/prompt\/detail".*"msg":"response"/,
      'SIGTERM',
    );
    expectStopped(r);
    expect(r.stdout).toBe('');
    expectNoDuckDBLock(env.GEO_WAREHOUSE!);
    sim.setFaults({});
    const next = await runCli(args, env);
    expect(next.code, next.stdout + next.stderr.slice(-2000)).toBe(0);
    expect(next.stdout).toMatch(/verified 4 of 4 sampled stored executions: 0 differences/);
  });

  it('diagnose --wait, SIGINT while it polls: 130, nothing stored, the file free; the next one stores it', async () => {
    const customer = String(sim.world.customerIds()[0]!);
    const args = ['diagnose', '--customer', customer, '--wait', '--poll-seconds', '60'];
    const p = startCli(args, { ...env, GEO_LOG_LEVEL: 'debug' });
    const r = await stopAt(p, /"endpoint":"POST [^"]+".*"msg":"response"/, 'SIGINT');
    expectStopped(r);
    expect(r.stdout).toMatch(/diagnosis/);
    expect(r.stdout).not.toMatch(/stored in geo\.site_diagnoses/);
    const next = await runCli(['diagnose', '--customer', customer, '--wait', '--poll-seconds', '1'], env);
    expect(next.code, next.stdout + next.stderr.slice(-2000)).toBe(0);
    expect(next.stdout).toMatch(/stored in geo\.site_diagnoses/);
  });
});
