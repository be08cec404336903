/**
 * SIGINT/SIGTERM end every wait at once: the real CLI, against the simulator answering 429 with
 * `Retry-After: 60`, is signalled while its queue is paused for those 60 s and must exit 130
 * long before the pause could end (the test's own timeout is far below 60 s). The same for a run
 * waiting 60 s for the warehouse lock another run holds, on both warehouses.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootId, processStartTime } from '../../src/load/duckdb/lock-file.ts';
import { SYNC_LOCK_KEY } from '../../src/load/postgres/advisory-lock.ts';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.ts';
import { startCli } from '../helpers/cli.ts';
import { withWarehouse } from '../helpers/sync.ts';
import { duckdbTarget, warehouseTargets } from '../helpers/targets.ts';
import { killOnExit } from '../helpers/children.ts';

describe('a signal during a 60-second Retry-After pause', () => {
  let sim: RunningSimulator;
  const wh = duckdbTarget('interrupt');
  let env: Record<string, string>;

  beforeAll(async () => {
    // One request per second per key, then 429 with Retry-After: 60.
    sim = await startSimulator({
      seed: 9,
      days: 2,
      executionsPerDay: 10,
      faults: { rateLimitPerSecond: 1, retryAfterSeconds: 60 },
    });
    env = { GEO_BASE_URL: sim.url, GEO_API_KEY: 'sim-key', GEO_WAREHOUSE: await wh.create() };
  });
  afterAll(async () => {
    await sim?.close();
    await wh.drop();
  });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`${signal}: exits 130 at once, the run recorded as interrupted`, { timeout: 15_000 }, async () => {
      const p = startCli(['sync', '--date', sim.world.dates()[0]!, '--no-progress'], env);
      // The client logs each rate-limited retry with the wait it is about to do. The scope is
      // read while the warehouse opens: the run is recorded (and so can be marked) only from
      // "run started".
      await Promise.all([
        p.waitForLog(/"delayMs":60000.*"msg":"retrying request"|"msg":"retrying request".*"delayMs":60000/),
        p.waitForLog(/"msg":"run started"/),
      ]);
      p.child.kill(signal);
      const r = await p.done;
      expect(r.code, r.stderr.slice(-2000)).toBe(130);
      const runs = await withWarehouse(env.GEO_WAREHOUSE!, (w) =>
        w.query(`SELECT status FROM geo.sync_runs ORDER BY started_at DESC LIMIT 1`),
      );
      expect(runs).toEqual([{ status: 'interrupted' }]);
    });
  }
});

for (const t of warehouseTargets('interrupt-lock')) {
  describe.skipIf(t.skip)(`a signal while waiting for the warehouse lock on ${t.dialect}`, () => {
    let sim: RunningSimulator;
    let target: string;
    let release: () => Promise<void>;

    beforeAll(async () => {
      sim = await startSimulator({ seed: 9, days: 2, executionsPerDay: 10 });
      target = await t.create();
      // Migrated first, then the lock is held by "another run": this test process.
      await withWarehouse(target, (w) => w.migrate().then(() => undefined));
      if (t.dialect === 'postgres') {
        const c = new pg.Client(target);
        await c.connect();
        await c.query('SELECT pg_advisory_lock($1)', [SYNC_LOCK_KEY]);
        release = () => c.end();
      } else {
        const lockPath = `${target.slice('duckdb:'.length)}.lock`;
        writeFileSync(
          lockPath,
          JSON.stringify({
            holder: 'another run (this test)',
            pid: process.pid,
            host: hostname(),
            since: new Date().toISOString(),
            bootId: await bootId(),
            startTime: await processStartTime(process.pid),
          }),
        );
        release = async () => rmSync(lockPath, { force: true });
      }
    });
    afterAll(async () => {
      await release?.();
      await sim?.close();
      await t.drop();
    });

    it('SIGINT during --wait-for-lock 60: exits 130 at once', { timeout: 15_000 }, async () => {
      const env = { GEO_BASE_URL: sim.url, GEO_API_KEY: 'sim-key', GEO_WAREHOUSE: target };
      const p = startCli(
        ['sync', '--date', sim.world.dates()[0]!, '--wait-for-lock', '60', '--no-progress'],
        env,
      );
      await p.waitForLog(/"msg":"waiting for the warehouse lock"/);
      p.child.kill('SIGINT');
      const r = await p.done;
      expect(r.code, r.stderr.slice(-2000)).toBe(130);
    });
  });
}

describe('a signal while a BI tool holds the DuckDB file', () => {
  const wh = duckdbTarget('interrupt-open');
  let sim: RunningSimulator;
  let holder: ChildProcess | undefined;
  afterAll(async () => {
    holder?.kill('SIGKILL');
    await sim?.close();
    await wh.drop();
  });

  it('SIGINT while the open waits (--wait-for-lock 60): exits 130 at once', { timeout: 15_000 }, async () => {
    sim = await startSimulator({ seed: 9, days: 2, executionsPerDay: 10 });
    const target = await wh.create();
    // Another process (a BI tool) holds the file open read-write for longer than the test.
    const script = `
      import { DuckDBInstance } from '@duckdb/node-api';
      const db = await DuckDBInstance.create(process.argv[1]);
      process.stdout.write('held\\n');
      setTimeout(() => { db.closeSync(); process.exit(0); }, 60000);`;
    holder = killOnExit(
      spawn(process.execPath, ['--input-type=module', '-e', script, target.slice('duckdb:'.length)], {
        stdio: ['ignore', 'pipe', 'inherit'],
      }),
    );
    await new Promise<void>((resolve) => holder!.stdout!.on('data', () => resolve()));
    const env = { GEO_BASE_URL: sim.url, GEO_API_KEY: 'sim-key', GEO_WAREHOUSE: target };
    const p = startCli(
      ['sync', '--date', sim.world.dates()[0]!, '--wait-for-lock', '60', '--no-progress'],
      env,
    );
    await p.waitForLog(/"msg":"opening the warehouse"/);
    p.child.kill('SIGINT');
    const r = await p.done;
    expect(r.code, r.stderr.slice(-2000)).toBe(130);
  });
});

describe('the stop signal at high concurrency', () => {
  let sim: RunningSimulator;
  const wh = duckdbTarget('interrupt-listeners');

  beforeAll(async () => {
    sim = await startSimulator({ seed: 10, days: 1, executionsPerDay: 300 });
  });
  afterAll(async () => {
    await sim?.close();
    await wh.drop();
  });

  // Every request in flight listens to the process's stop signal: 32 at once is normal use, and
  // must not print Node's MaxListenersExceededWarning on a user's terminal.
  it('a sync at concurrency 32 prints no MaxListenersExceededWarning', { timeout: 60_000 }, async () => {
    const env = {
      GEO_BASE_URL: sim.url,
      GEO_API_KEY: 'sim-key',
      GEO_WAREHOUSE: await wh.create(),
      GEO_CONCURRENCY: '32',
      GEO_REQUESTS_PER_SECOND: '100000',
    };
    const r = await startCli(['sync', '--date', sim.world.dates()[0]!, '--no-progress'], env).done;
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    expect(r.stderr).not.toMatch(/MaxListenersExceededWarning/);
  });
});
