/**
 * SIGINT/SIGTERM stop the warehouse commands cleanly while a PostgreSQL query of theirs is in
 * flight: this test holds locks (every geo table, or the migration lock) in a transaction of its
 * own, so `check`, `report`, `state reset`, `rollups refresh`, `migrate` and `export` provably wait
 * in a query (pg_stat_activity says so) when the signal comes, and only a cancelled query lets them
 * stop before the test lets go. `worker` is stopped while it waits for jobs. Each exits 130, holds
 * no warehouse lock after, leaves no scratch folder, lock file or half-written file, and the next
 * run of the same command succeeds with nobody touching anything. One database for the file.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATION_LOCK_KEY, SYNC_LOCK_KEY } from '../../src/load/postgres/advisory-lock.ts';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.ts';
import { runCli, startCli, type CliResult } from '../helpers/cli.ts';
import { expectStopped, holdLocks, stopAt, waitingOnLock, warehouseLockHeld } from '../helpers/signals.ts';
import { syncOnce } from '../helpers/sync.ts';
import { postgresTarget } from '../helpers/targets.ts';

const t = postgresTarget('signals-postgres');

describe.skipIf(t.skip)('a signal while a command waits in a PostgreSQL query', () => {
  let sim: RunningSimulator;
  let url: string;
  let env: Record<string, string>;
  let days: string[];
  let dir: string;

  beforeAll(async () => {
    sim = await startSimulator({ seed: 22, days: 2, executionsPerDay: 6 });
    days = sim.world.dates();
    url = await t.create();
    await syncOnce({ baseUrl: sim.url, target: url, dates: days });
    env = { GEO_BASE_URL: sim.url, GEO_API_KEY: 'sim-key', GEO_WAREHOUSE: url };
    dir = mkdtempSync(join(tmpdir(), 'geo-signals-pg-'));
  });
  afterAll(async () => {
    await sim?.close();
    await t.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Every table of schema geo locked but the two a command reads before its work. */
  async function lockGeoTables(): Promise<() => Promise<void>> {
    const c = new pg.Client(url);
    await c.connect();
    const r = await c.query<{ name: string }>(
      `SELECT format('%I.%I', schemaname, tablename) AS name FROM pg_tables
        WHERE schemaname = 'geo' AND tablename NOT IN ('schema_migrations', 'sync_lock')`,
    );
    await c.end();
    return holdLocks(url, [`LOCK TABLE ${r.rows.map((x) => x.name).join(', ')} IN ACCESS EXCLUSIVE MODE`]);
  }

  /** Runs `args` until its query waits on what the test holds, signals it, then lets go. */
  async function stoppedWhileWaiting(
    args: string[],
    hold: () => Promise<() => Promise<void>>,
    signal: NodeJS.Signals,
  ): Promise<CliResult> {
    const release = await hold();
    try {
      const p = startCli(args, env);
      await Promise.race([waitingOnLock(url), p.done.then((r) => Promise.reject(new Error(r.stderr)))]);
      p.child.kill(signal);
      return await p.done;
    } finally {
      await release();
    }
  }

  /** After a stop: no run holds the warehouse lock, and the next run of `args` succeeds. */
  async function expectCleanAndRerun(args: string[]): Promise<CliResult> {
    expect(await warehouseLockHeld(url)).toBe(false);
    const next = await runCli(args, env);
    expect(next.code, next.stdout + next.stderr.slice(-2000)).toBe(0);
    return next;
  }

  it('check: 130 at once; the next check passes', async () => {
    const args = ['check', '--from', days[0]!, '--to', days[1]!];
    expectStopped(await stoppedWhileWaiting(args, lockGeoTables, 'SIGTERM'));
    await expectCleanAndRerun(args);
  });

  it('report: 130, the previous report left as it was and nothing beside it; the next one replaces it', async () => {
    const out = join(dir, 'report.html');
    writeFileSync(out, 'the previous report');
    const args = ['report', '--out', out];
    expectStopped(await stoppedWhileWaiting(args, lockGeoTables, 'SIGINT'));
    expect(readFileSync(out, 'utf8')).toBe('the previous report');
    expect(readdirSync(dir)).toEqual(['report.html']);
    await expectCleanAndRerun(args);
    expect(readFileSync(out, 'utf8')).toMatch(/^<!doctype html>/i);
    expect(readdirSync(dir)).toEqual(['report.html']);
  });

  it('state reset, stopped holding the warehouse lock: 130, the lock released; the next reset works', async () => {
    const args = ['state', 'reset', '--from', days[0]!, '--to', days[0]!];
    expectStopped(await stoppedWhileWaiting(args, lockGeoTables, 'SIGTERM'));
    const next = await expectCleanAndRerun(args);
    expect(next.stdout).toMatch(/^forgot \d+ checkpoint/);
  });

  it('rollups refresh: 130, the lock released; the next refresh works', async () => {
    const args = ['rollups', 'refresh', '--no-progress'];
    expectStopped(await stoppedWhileWaiting(args, lockGeoTables, 'SIGINT'));
    const next = await expectCleanAndRerun(args);
    expect(next.stdout).toMatch(/^refreshed the per-day aggregates/);
  });

  it('rollups refresh --wait-for-lock, waiting for a run to end: 130 at once', async () => {
    const release = await holdLocks(url, [`SELECT pg_advisory_xact_lock(${SYNC_LOCK_KEY})`]);
    try {
      const p = startCli(['rollups', 'refresh', '--wait-for-lock', '600', '--no-progress'], env);
      expectStopped(await stopAt(p, /"msg":"waiting for the warehouse lock"/, 'SIGINT'));
    } finally {
      await release();
    }
  });

  it('migrate, waiting for the migration lock: 130; the next migrate works', async () => {
    const args = ['migrate'];
    const hold = () => holdLocks(url, [`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`]);
    expectStopped(await stoppedWhileWaiting(args, hold, 'SIGTERM'));
    const next = await expectCleanAndRerun(args);
    expect(next.stdout).toMatch(/applied 0 migration/);
  });

  it('export: 130, no scratch folder, no lock file, no table written; the next export writes them', async () => {
    const lake = join(dir, 'lake');
    const args = ['export', '--format', 'parquet', '--out', lake];
    expectStopped(await stoppedWhileWaiting(args, lockGeoTables, 'SIGTERM'));
    expect(readdirSync(lake)).toEqual([]);
    await expectCleanAndRerun(args);
    expect(existsSync(join(lake, 'prompt_executions'))).toBe(true);
    expect(readdirSync(lake).filter((n) => n.startsWith('.'))).toEqual([]);
  });

  it('worker, waiting for jobs: 130, no lock held; the next worker runs until idle', async () => {
    const p = startCli(['worker'], env);
    await p.waitForLog(/"msg":"worker started"/);
    p.child.kill('SIGTERM');
    const r = await p.done;
    expect(r.code, r.stderr.slice(-2000)).toBe(130);
    await expectCleanAndRerun(['worker', '--exit-when-idle']);
  });
});
