/**
 * geo-sync behind a real PgBouncer (Debian's package), in session and in transaction
 * pooling, in front of the test PostgreSQL, through the real command line.
 *
 * - Session mode: sync, a second run refused by the lock (exit 4), schedule, check, verify,
 *   report and a distributed backfill with two workers work as on a direct connection, and
 *   leave no lock behind.
 * - Transaction mode without GEO_LOCK_URL: refused at start, exit 2, one line naming
 *   GEO_LOCK_URL (a pool of one server connection, as the issue found it, and a pool of four
 *   handing out servers in turn). GEO_LOCK_URL through the pooler, or to another database: the same.
 * - Transaction mode with GEO_LOCK_URL (a direct URL): everything as in session mode, two runs
 *   never write at once, no prepared-statement or SET error, no lock left behind.
 * - Both modes: a command stopped by SIGINT while its query waits has that query cancelled on the
 *   server (PgBouncer forwards the cancel request), not left running after the client is gone.
 *
 * One PgBouncer for the file, one alias (database name of the pooler) per pool.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SYNC_LOCK_KEY } from '../../src/load/postgres/advisory-lock.ts';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.ts';
import { runCli, startCli, type CliResult } from '../helpers/cli.ts';
import { expectStopped, holdLocks, waitingOnLock } from '../helpers/signals.ts';
import { sql, TestDatabases } from '../helpers/distributed.ts';
import { dumpData } from '../helpers/dump.ts';
import { metricsUrl, parseMetrics } from '../helpers/metrics.ts';
import { startPgBouncer, type RunningPgBouncer } from '../helpers/pgbouncer.ts';
import { postgresReachable } from '../helpers/postgres.ts';
import { requireProgram } from '../helpers/programs.ts';

const pgUp = await postgresReachable();
const bin = requireProgram('pgbouncer', 'pgbouncer');

/** The lines of stderr that are not JSON log lines: what a user reads. */
const messageLines = (r: CliResult) =>
  r.stderr
    .split('\n')
    .filter((l) => l.trim() !== '' && !l.startsWith('{'))
    .filter((l) => !l.startsWith('geo-sync: src/ changed'));

describe.skipIf(!pgUp || !bin)('geo-sync behind PgBouncer', () => {
  const dbs = new TestDatabases();
  let sim: RunningSimulator;
  let bouncer: RunningPgBouncer;
  let direct: string;
  const db: Record<'session' | 'transaction' | 'other', string> = { session: '', transaction: '', other: '' };
  let dates: string[];
  let out: string;

  const env = (warehouse: string, extra: Record<string, string> = {}) => ({
    GEO_BASE_URL: sim.url,
    GEO_API_KEY: 'sim-key',
    GEO_WAREHOUSE: warehouse,
    GEO_LOOKBACK_DAYS: '0',
    GEO_CONCURRENCY: '4',
    GEO_REQUESTS_PER_SECOND: '5000',
    GEO_RETRY_BASE_DELAY_MS: '5',
    GEO_ENRICH_DIAGNOSIS: 'false',
    GEO_JOB_RETRY_DELAY_SECONDS: '1',
    // Commits as it reads (no linger), so a run's first "unit done" comes while it still reads.
    GEO_WRITE_LINGER_MS: '0',
    ...extra,
  });
  const nameOf = (url: string) => new URL(url).pathname.slice(1);

  /** Advisory locks of geo-sync held anywhere on the server, in the database of `url`. */
  const locksHeld = async (url: string) =>
    sql<{ pid: number; mode: string }>(
      direct,
      `SELECT pid, mode FROM pg_locks
       WHERE locktype = 'advisory' AND granted
         AND database = (SELECT oid FROM pg_database WHERE datname = $1)
         AND ((classid::bigint << 32) | objid::bigint) = $2`,
      [nameOf(url), SYNC_LOCK_KEY],
    );

  beforeAll(async () => {
    sim = await startSimulator({ seed: 29, days: 4, executionsPerDay: 30, faults: { latencyMs: 5 } });
    dates = sim.world.dates();
    direct = await dbs.fresh();
    db.session = await dbs.fresh();
    db.transaction = await dbs.fresh();
    db.other = await dbs.fresh();
    bouncer = await startPgBouncer(bin!, {
      session: { database: nameOf(db.session), mode: 'session', size: 40 },
      tx: { database: nameOf(db.transaction), mode: 'transaction', size: 4, min: 4 },
      // The setup: transaction pooling with one server connection.
      tx1: { database: nameOf(db.transaction), mode: 'transaction', size: 1 },
      txother: { database: nameOf(db.other), mode: 'transaction', size: 3, min: 3 },
    });
    out = mkdtempSync(join(tmpdir(), 'geo-pgbouncer-out-'));
    // What a direct connection stores, to compare with.
    const r = await runCli(
      ['backfill', '--from', dates[0]!, '--to', dates[1]!, '--no-progress'],
      env(direct),
    );
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
  }, 120_000);

  // A pooler that died fails every later test with a refused connection: each also fails with how
  // it died (its exit and the end of its log).
  afterEach(() => {
    const died = bouncer?.died();
    if (died) throw new Error(died);
  });

  afterAll(async () => {
    await bouncer?.stop();
    await sim?.close();
    await dbs.dropAll();
    if (out) rmSync(out, { recursive: true, force: true });
  });

  describe('transaction pooling without a direct lock URL is refused at start', () => {
    it.each([
      ['sync', ['sync', '--date', '2026-01-01', '--no-progress']],
      ['schedule', ['schedule', '--cron', '0 0 1 1 *']],
      ['worker', ['worker', '--exit-when-idle']],
    ])('%s: exit 2, one line naming GEO_LOCK_URL', async (_name, args) => {
      for (const alias of ['tx1', 'tx']) {
        const r = await runCli(args, env(bouncer.url(alias)));
        expect(r.code, `${alias}\n${r.stderr.slice(-2000)}`).toBe(2);
        const lines = messageLines(r);
        expect(lines, r.stderr).toHaveLength(1);
        expect(lines[0]).toMatch(
          /^error: GEO_WAREHOUSE \(.*\) goes through a connection pooler in transaction pooling mode/,
        );
        expect(lines[0]).toMatch(/set GEO_LOCK_URL to a postgres:\/\/ URL of the same database/);
      }
      expect(await locksHeld(db.transaction)).toEqual([]);
      expect(await sql(db.transaction, 'SELECT count(*)::int AS n FROM geo.sync_runs')).toEqual([{ n: 0 }]);
    });

    it('two migrates at once through transaction pooling: each migration applied once, no lock left', async () => {
      const both = await Promise.all([1, 2].map(() => runCli(['migrate'], env(bouncer.url('txother')))));
      for (const r of both) expect(r.code, r.stderr.slice(-2000)).toBe(0);
      const applied = both.map((r) => Number(/applied (\d+) migration/.exec(r.stdout)?.[1]));
      const [{ n }] = (await sql<{ n: number }>(
        db.other,
        `SELECT count(*)::int AS n FROM geo.schema_migrations WHERE version <> 'views'`,
      )) as [{ n: number }];
      expect(applied[0]! + applied[1]!).toBe(n);
      // No advisory lock of any kind stayed on the pooler's server connections.
      expect(
        await sql(
          direct,
          `SELECT pid FROM pg_locks WHERE locktype = 'advisory'
           AND database = (SELECT oid FROM pg_database WHERE datname = $1)`,
          [nameOf(db.other)],
        ),
      ).toEqual([]);
    });

    it('GEO_LOCK_URL through the pooler too, or to another database: exit 2, one line naming GEO_LOCK_URL', async () => {
      const pooled = await runCli(
        ['sync', '--date', dates[0]!, '--no-progress'],
        env(bouncer.url('tx'), { GEO_LOCK_URL: bouncer.url('tx') }),
      );
      expect(pooled.code, pooled.stderr.slice(-2000)).toBe(2);
      expect(messageLines(pooled)).toEqual([
        expect.stringMatching(
          /^error: GEO_LOCK_URL \(.*\) goes through a connection pooler in transaction pooling mode.*point it at PostgreSQL directly/,
        ),
      ]);

      const elsewhere = await runCli(
        ['sync', '--date', dates[0]!, '--no-progress'],
        env(bouncer.url('tx'), { GEO_LOCK_URL: db.other }),
      );
      expect(elsewhere.code, elsewhere.stderr.slice(-2000)).toBe(2);
      expect(messageLines(elsewhere)).toEqual([
        expect.stringMatching(/^error: GEO_LOCK_URL \(.*\) reaches another database than GEO_WAREHOUSE/),
      ]);
      // The misconfigured run moved no generation: it wrote nothing at all.
      expect(await sql(db.transaction, 'SELECT * FROM geo.sync_lock')).toEqual([]);
      expect(await locksHeld(db.transaction)).toEqual([]);
    });
  });

  describe.each([
    { mode: 'session' as const, alias: 'session', lockUrl: false },
    { mode: 'transaction' as const, alias: 'tx', lockUrl: true },
  ])('$mode pooling', ({ mode, alias, lockUrl }) => {
    const pooled = (extra: Record<string, string> = {}) =>
      env(bouncer.url(alias), { ...(lockUrl ? { GEO_LOCK_URL: db[mode] } : {}), ...extra });

    it('a run works; a second run meanwhile is refused (exit 4); no lock is left; the data is what a direct run stores', async () => {
      const first = startCli(['backfill', '--from', dates[0]!, '--to', dates[1]!, '--no-progress'], pooled());
      await first.waitForLog(/"msg":"unit done"/);
      // Frozen while it holds the lock (and maybe a pooled server connection in a write), so the
      // second run certainly meets it.
      first.child.kill('SIGSTOP');
      let second: CliResult;
      try {
        second = await runCli(['sync', '--date', dates[1]!, '--no-progress'], pooled());
      } finally {
        first.child.kill('SIGCONT');
      }
      expect(second.code, second.stderr.slice(-2000)).toBe(4);
      expect(second.stderr).toMatch(/another geo-sync run holds the warehouse lock/);
      const r = await first.done;
      expect(r.code, r.stderr.slice(-3000)).toBe(0);
      expect(r.stderr).not.toMatch(/prepared statement|does not exist|lock was lost|"level":50/);

      expect(await locksHeld(db[mode])).toEqual([]);
      // A run on a direct connection is not refused by anything left on the pooler's servers.
      const after = await runCli(['sync', '--date', dates[0]!, '--no-progress'], env(db[mode]));
      expect(after.code, after.stderr.slice(-2000)).toBe(0);
      expect(await dumpData(db[mode])).toEqual(await dumpData(direct));
    });

    it('check, verify and report', async () => {
      const range = ['--from', dates[0]!, '--to', dates[1]!];
      const check = await runCli(['check', ...range, '--max-age-hours', '1'], pooled());
      expect(check.code, check.stdout + check.stderr.slice(-2000)).toBe(0);
      const verify = await runCli(['verify', ...range, '--sample', '10'], pooled());
      expect(verify.code, verify.stdout + verify.stderr.slice(-2000)).toBe(0);
      expect(verify.stdout).toMatch(/verified 10 of 10 .*: 0 differences/);
      const file = join(out, `${mode}.html`);
      const report = await runCli(['report', '--out', file, ...range], pooled());
      expect(report.code, report.stderr.slice(-2000)).toBe(0);
      expect(readFileSync(file, 'utf8')).toMatch(/<svg/);
    });

    it('check stopped by SIGINT while its query waits: 130, and the pooler passes the cancel on to the server', async () => {
      const m = await runCli(['migrate'], pooled());
      expect(m.code, m.stderr.slice(-2000)).toBe(0);
      // Every geo table but the two a command reads first, held by a transaction of the test's.
      const tables = await sql<{ name: string }>(
        db[mode],
        `SELECT format('%I.%I', schemaname, tablename) AS name FROM pg_tables
          WHERE schemaname = 'geo' AND tablename NOT IN ('schema_migrations', 'sync_lock')`,
      );
      const release = await holdLocks(db[mode], [
        `LOCK TABLE ${tables.map((t) => t.name).join(', ')} IN ACCESS EXCLUSIVE MODE`,
      ]);
      const waiting = () =>
        sql(
          db[mode],
          `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        );
      const p = startCli(['check', '--from', dates[0]!, '--to', dates[1]!], pooled());
      try {
        await Promise.race([
          waitingOnLock(db[mode]),
          p.done.then((r) => Promise.reject(new Error(r.stderr))),
        ]);
        p.child.kill('SIGINT');
        const r = await Promise.race([p.done, new Promise<null>((s) => setTimeout(() => s(null), 10_000))]);
        // A cancel the pooler dropped leaves the process waiting on its query until the test lets go.
        expect(r, 'still running 10 s after SIGINT: its query was not cancelled').not.toBeNull();
        expectStopped(r!);
        // The locks are still held: only a cancel that reached the server ends its wait. (A
        // query the pooler kept running for a gone client would wait here until they are let go.)
        const deadline = Date.now() + 5000;
        while ((await waiting()).length > 0 && Date.now() < deadline)
          await new Promise((s) => setTimeout(s, 50));
        expect(await waiting()).toEqual([]);
      } finally {
        await release();
        await p.done;
      }
      const next = await runCli(
        ['check', '--from', dates[0]!, '--to', dates[1]!, '--max-age-hours', '1'],
        pooled(),
      );
      expect(next.code, next.stdout + next.stderr.slice(-2000)).toBe(0);
    });

    it('schedule runs, checks and stops on SIGTERM (exit 0)', async () => {
      const p = startCli(
        [
          'schedule',
          '--cron',
          '0 0 1 1 *',
          '--run-now',
          '--check',
          '--metrics-port',
          '0',
          '--metrics-host',
          '127.0.0.1',
        ],
        pooled(),
      );
      await p.waitForLog(/"msg":"data tests done"/);
      p.child.kill('SIGTERM');
      const r = await p.done;
      expect(r.code, r.stderr.slice(-3000)).toBe(0);
      expect(r.stderr).toMatch(/"passed":8,"failed":0/);
      const [run] = await sql<{ status: string }>(
        db[mode],
        `SELECT status FROM geo.sync_runs WHERE kind = 'schedule' ORDER BY started_at DESC LIMIT 1`,
      );
      expect(run).toEqual({ status: 'success' });
      expect(await locksHeld(db[mode])).toEqual([]);
    });

    it('a distributed backfill with two workers', async () => {
      const range = ['--from', dates[2]!, '--to', dates[3]!];
      const enq = await runCli(['backfill', ...range, '--distributed'], pooled());
      expect(enq.code, enq.stderr.slice(-2000)).toBe(0);
      // One worker as systemd runs it (until stopped, its metrics served), one that exits when idle.
      const serving = startCli(['worker', '--metrics-port', '0', '--metrics-host', '127.0.0.1'], pooled());
      const idle = startCli(['worker', '--exit-when-idle'], pooled());
      const done = await runCli(['backfill', ...range, '--distributed', '--wait', '--no-progress'], pooled());
      expect(done.code, done.stdout + done.stderr.slice(-2000)).toBe(0);
      const metrics = parseMetrics(await (await fetch(metricsUrl(serving.stderr()))).text());
      const idleResult = await idle.done;
      serving.child.kill('SIGTERM');
      const servingResult = await serving.done;
      expect(idleResult.code, idleResult.stderr.slice(-3000)).toBe(0);
      expect(servingResult.code, servingResult.stderr.slice(-3000)).toBe(130);
      for (const w of [idleResult, servingResult])
        expect(w.stderr).not.toMatch(/prepared statement|does not exist|"level":50/);
      // Its metrics count the jobs it logged done.
      expect(metrics.get('geo_worker_jobs_total{outcome="completed"}')).toBe(
        servingResult.stderr.match(/"msg":"job done"/g)?.length ?? 0,
      );
      expect(metrics.get('geo_worker_jobs_total{outcome="failed"}')).toBe(0);
      const [jobs] = await sql<{ failed: number; completed: number }>(
        db[mode],
        `SELECT count(*) FILTER (WHERE state = 'failed')::int AS failed,
                count(*) FILTER (WHERE state = 'completed')::int AS completed
         FROM geo_queue.job WHERE name = 'geo-sync-units'`,
      );
      expect({ failed: jobs!.failed, completed: jobs!.completed > 1 }).toEqual({
        failed: 0,
        completed: true,
      });
      expect(await locksHeld(db[mode])).toEqual([]);
      const check = await runCli(['check', ...range], pooled());
      expect(check.code, check.stdout + check.stderr.slice(-2000)).toBe(0);
    });
  });
});
