/**
 * A backfill shared by several worker processes through the job queue in PostgreSQL.
 * Real processes (the built CLI) against the simulator over real sockets and a fresh PostgreSQL
 * database per test (so the queue schema starts empty each time).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.ts';
import { runCli, startCli, type CliProcess, type CliResult } from '../helpers/cli.ts';
import { createTempDuckDB } from '../helpers/duckdb.ts';
import { dumpData } from '../helpers/dump.ts';
import { distributedEnv, sql, TestDatabases } from '../helpers/distributed.ts';
import { postgresReachable } from '../helpers/postgres.ts';

const pgUp = await postgresReachable();

describe('distributed backfill: refusals without PostgreSQL', () => {
  it('backfill --distributed and worker need a PostgreSQL warehouse: one line, exit 2', async () => {
    const db = createTempDuckDB('distributed-refusal');
    try {
      const env = { GEO_BASE_URL: 'http://127.0.0.1:9', GEO_API_KEY: 'k', GEO_WAREHOUSE: db.target };
      for (const args of [
        ['backfill', '--from', '2026-01-01', '--to', '2026-01-02', '--distributed'],
        ['worker', '--exit-when-idle'],
      ]) {
        const r = await runCli(args, env);
        expect(r.code, r.stderr).toBe(2);
        const lines = r.stderr.trim().split('\n');
        expect(lines).toHaveLength(1);
        expect(lines[0]).toMatch(/needs a PostgreSQL warehouse .*GEO_WAREHOUSE=postgres:\/\//);
      }
    } finally {
      db.remove();
    }
  });
});

describe.skipIf(!pgUp)('distributed backfill over PostgreSQL', () => {
  let sim: RunningSimulator;
  let dates: string[];
  let customer: string;
  const dbs = new TestDatabases();
  const freshDb = () => dbs.fresh();
  const env = (warehouse: string, extra: Record<string, string> = {}) =>
    distributedEnv(sim.url, warehouse, extra);

  const range = () => ['--from', dates[0]!, '--to', dates[dates.length - 1]!, '--customer', customer];
  /** The first day only: a backfill of its own. */
  const firstDay = () => [
    'backfill',
    '--from',
    dates[0]!,
    '--to',
    dates[0]!,
    '--customer',
    customer,
    '--distributed',
  ];

  beforeAll(async () => {
    sim = await startSimulator({ seed: 12, days: 6, executionsPerDay: 60 });
    dates = sim.world.dates().slice(0, 2);
    customer = String(sim.world.customerIds()[0]);
  });
  afterAll(async () => {
    await sim?.close();
    await dbs.dropAll();
  });

  it('migrate creates the queue in its own schema; enqueuing the same backfill twice adds nothing', async () => {
    const url = await freshDb();
    const m = await runCli(['migrate'], env(url));
    expect(m.code, m.stderr).toBe(0);
    expect(m.stdout).toContain('job queue: schema geo_queue ready');
    const tables = await sql<{ schema: string; name: string }>(
      url,
      `SELECT table_schema AS schema, table_name AS name FROM information_schema.tables
       WHERE table_name IN ('job', 'backfills', 'workers', 'rate_state')`,
    );
    expect(new Set(tables.map((t) => t.schema))).toEqual(new Set(['geo_queue']));

    const first = await runCli(['backfill', ...range(), '--distributed'], env(url));
    expect(first.code, first.stderr).toBe(0);
    const queued = Number(/queued (\d+) job\(s\)/.exec(first.stdout)?.[1]);
    expect(queued).toBeGreaterThan(1);
    const second = await runCli(['backfill', ...range(), '--distributed'], env(url));
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toMatch(/queued 0 job\(s\)/);
    const count = await sql<{ n: string }>(url, 'SELECT count(*) AS n FROM geo_queue.job');
    expect(Number(count[0]!.n)).toBe(queued);
    // The backfill's identity is in what it covers: another range is another backfill.
    const other = await runCli(firstDay(), env(url));
    expect(other.stdout).not.toMatch(/queued 0 job\(s\)/);
  });

  it('a platform task the API serves invalid is quarantined by the enqueue: its run is partial, exit 3, its units not queued; served valid again, the same backfill ends clean', async () => {
    const url = await freshDb();
    const e = env(url, { GEO_ENRICH_FINANCE: 'false' });
    const bad = sim.world.allPlatformTasks().find((t) => String(t.customer_id) === customer)!;
    sim.world.mutations.corruptPlatformTask(bad.task_id);
    try {
      const enq = await runCli(firstDay(), e);
      expect(enq.code, enq.stderr.slice(-2000)).toBe(3);
      const runId = /quarantined in geo\.sync_rejects \(run (\S+)\)/.exec(enq.stdout)?.[1];
      expect(runId, enq.stdout).toBeDefined();
      const runs = await sql<{ status: string; rejects: number }>(
        url,
        'SELECT status, rejects::int AS rejects FROM geo.sync_runs WHERE run_id = $1',
        [runId],
      );
      expect(runs).toEqual([{ status: 'partial', rejects: 1 }]);
      const rejects = await sql<{ n: string }>(
        url,
        'SELECT count(*) AS n FROM geo.sync_rejects WHERE run_id = $1',
        [runId],
      );
      expect(Number(rejects[0]!.n)).toBe(1);
      // Its unit is not queued; the others are.
      const jobs = await sql<{ task_id: string }>(
        url,
        `SELECT data->>'task_id' AS task_id FROM geo_queue.job WHERE name = 'geo-sync-units' AND data ? 'task_id'`,
      );
      const queuedTasks = jobs.map((j) => Number(j.task_id));
      expect(queuedTasks.length).toBeGreaterThan(0);
      expect(queuedTasks).not.toContain(bad.task_id);
    } finally {
      sim.world.mutations.reset();
    }

    // The API serves the task valid again: the same backfill enqueued again queues its units, and
    // once they ran the backfill stands without a quarantined record (the earlier enqueue's reject
    // was read again, and is no more).
    const same = firstDay();
    const again = await runCli(same, e);
    expect(again.code, again.stderr.slice(-2000)).toBe(0);
    expect(again.stdout).not.toMatch(/quarantined/);
    const w = await runCli(['worker', '--exit-when-idle'], e);
    expect(w.code, w.stderr.slice(-2000)).toBe(0);
    const done = await runCli([...same, '--wait', '--no-progress'], e);
    expect(done.code, done.stdout + done.stderr.slice(-2000)).toBe(0);
    expect(done.stdout).toMatch(/rejects: 0 quarantined/);
  });

  it('three workers, one killed with -9 mid-job, a fourth started later: equal to a single-process backfill', async () => {
    const reference = await freshDb();
    const local = await runCli(['backfill', ...range()], env(reference));
    expect(local.code, local.stderr.slice(-2000)).toBe(0);

    const url = await freshDb();
    const e = env(url, { GEO_JOB_TIMEOUT_SECONDS: '3', GEO_CONCURRENCY: '24' });
    const enq = await runCli(['backfill', ...range(), '--distributed'], e);
    expect(enq.code, enq.stderr.slice(-2000)).toBe(0);
    const waiter = startCli(['backfill', ...range(), '--distributed', '--wait', '--no-progress'], e);

    // Slow responses so that a unit is still being read when its worker is killed.
    sim.setFaults({ latencyMs: 40 });
    try {
      const workers: CliProcess[] = [1, 2, 3].map(() => startCli(['worker', '--exit-when-idle'], e));
      const victim = workers[0]!;
      await victim.waitForLog(/"msg":"job started"/, 2);
      const startedJobs = [...victim.stderr().matchAll(/"job":"([0-9a-f-]+)".*"msg":"job started"/g)].map(
        (m) => m[1]!,
      );
      victim.child.kill('SIGKILL');
      const killedJob = startedJobs[startedJobs.length - 1]!;
      // Killed mid-job: it had started that job and not finished it.
      expect(victim.stderr()).not.toMatch(new RegExp(`"job":"${killedJob}".*"msg":"job done"`));
      const fourth = startCli(['worker', '--exit-when-idle'], e);
      const results: CliResult[] = await Promise.all([...workers, fourth].map((w) => w.done));
      expect(results[0]!.signal).toBe('SIGKILL');
      for (const r of results.slice(1)) expect(r.code, r.stderr.slice(-2000)).toBe(0);

      const done = await waiter.done;
      expect(done.code, done.stderr.slice(-2000)).toBe(0);
      expect(done.stdout).toMatch(/: SUCCESS in/);
      expect(done.stdout).toMatch(/units: \d+ done, 0 failed/);

      // The killed worker's last job expired and was redone by another worker.
      const [job] = await sql<{ state: string; retry_count: number }>(
        url,
        'SELECT state::text AS state, retry_count FROM geo_queue.job WHERE id = $1',
        [killedJob],
      );
      expect(job).toMatchObject({ state: 'completed' });
      expect(job!.retry_count).toBeGreaterThanOrEqual(1);
      const attempts = await sql<{ status: string }>(
        url,
        `SELECT status FROM geo.sync_runs WHERE args->>'job' = $1 AND status = 'success'`,
        [killedJob],
      );
      expect(attempts).toHaveLength(1);
    } finally {
      sim.setFaults({});
    }
    expect(await dumpData(url)).toEqual(await dumpData(reference));
  });

  it('three workers share one rate: a simulator limit at 1.5x the configured total sees a handful of 429s at most', async () => {
    const url = await freshDb();
    const e = env(url, { GEO_REQUESTS_PER_SECOND: '20', GEO_CONCURRENCY: '6' });
    const enq = await runCli(['backfill', ...range(), '--distributed'], e);
    expect(enq.code, enq.stderr.slice(-2000)).toBe(0);
    const before = sim.stats.faults.rateLimited;
    sim.setFaults({ rateLimitPerSecond: 30, latencyMs: 5 });
    try {
      const workers = [1, 2, 3].map(() => startCli(['worker', '--exit-when-idle'], e));
      const results = await Promise.all(workers.map((w) => w.done));
      for (const r of results) expect(r.code, r.stderr.slice(-2000)).toBe(0);
      // Each worker took a third of the total once it saw the others.
      for (const r of results) {
        const shares = [...r.stderr.matchAll(/"live":3,"factor":([\d.]+),"requestsPerSecond":([\d.]+)/g)];
        expect(shares.length).toBeGreaterThan(0);
        for (const m of shares) expect(Number(m[2])).toBeCloseTo((20 * Number(m[1])) / 3, 1);
      }
    } finally {
      sim.setFaults({});
    }
    const rateLimited = sim.stats.faults.rateLimited - before;
    expect(rateLimited).toBeLessThanOrEqual(5);
    const done = await runCli(['backfill', ...range(), '--distributed', '--wait', '--no-progress'], e);
    expect(done.code, done.stderr.slice(-2000)).toBe(0);
    expect(done.stdout).toMatch(/units: \d+ done, 0 failed/);
  });

  it('a job that keeps failing is retried a bounded number of times, then reported by --wait and runs', async () => {
    const url = await freshDb();
    const e = env(url, { GEO_JOB_RETRIES: '1', GEO_MAX_ATTEMPTS: '1', GEO_ENRICH_FINANCE: 'false' });
    const enq = await runCli(firstDay(), e);
    expect(enq.code, enq.stderr.slice(-2000)).toBe(0);
    sim.setFaults({ errorRate: 1 });
    try {
      const w = await runCli(['worker', '--exit-when-idle'], e);
      // Jobs it ran failed: exit 3, as a partial run.
      expect(w.code, w.stderr.slice(-2000)).toBe(3);
      expect(w.stderr).toContain('job failed: it will be retried');
      expect(w.stderr).toContain('job failed for good (no retries left)');
    } finally {
      sim.setFaults({});
    }
    const done = await runCli([...firstDay(), '--wait'], e);
    expect(done.code).toBe(1);
    expect(done.stdout).toMatch(/: FAILED in/);
    expect(done.stdout).toMatch(/failed unit task_id=\d+ date=\S+: .*\(after 1 retries\)/);
    const runs = await runCli(['runs', '--json', '--limit', '100'], e);
    const failed = runs.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { status: string; args: { job?: string } })
      .filter((r) => r.args.job && r.status === 'failed');
    expect(failed.length).toBeGreaterThanOrEqual(2);
    const text = await runCli(['runs'], e);
    expect(text.stdout).toMatch(
      /distributed backfills:\nbackfill \S+ \S+: \d+ jobs done, [1-9]\d* failed, 0 queued/,
    );

    // The cause is gone: --retry-failed queues the failed jobs again, a worker runs them, and the
    // same backfill now ends done (re-running without the flag only reported the failure above).
    const same = firstDay();
    const again = await runCli([...same, '--retry-failed'], e);
    expect(again.code, again.stderr.slice(-2000)).toBe(0);
    expect(again.stdout).toMatch(/queued 0 job\(s\) .*; queued again [1-9]\d* failed or cancelled job\(s\)/);
    const w2 = await runCli(['worker', '--exit-when-idle'], e);
    expect(w2.code, w2.stderr.slice(-2000)).toBe(0);
    const after = await runCli([...same, '--wait', '--no-progress'], e);
    expect(after.code, after.stdout + after.stderr.slice(-2000)).toBe(0);
    expect(after.stdout).toMatch(/units: \d+ done, 0 failed/);
    const twice = await runCli([...same, '--retry-failed'], e);
    expect(twice.stdout).toMatch(/queued again 0 failed or cancelled job\(s\)/);
  });

  it('--retry-failed goes with --distributed', async () => {
    const r = await runCli(
      ['backfill', '--from', dates[0]!, '--to', dates[0]!, '--retry-failed'],
      env('postgres://unused'),
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--retry-failed goes with --distributed');
  });

  it('SIGTERM: the worker takes no new job, hands its unfinished ones back without a checkpoint, exits 130', async () => {
    const url = await freshDb();
    const e = env(url);
    const enq = await runCli(['backfill', ...range(), '--distributed'], e);
    expect(enq.code, enq.stderr.slice(-2000)).toBe(0);
    sim.setFaults({ latencyMs: 300 });
    try {
      const w = startCli(['worker'], e);
      await w.waitForLog(/"msg":"job started"/, 2);
      w.child.kill('SIGTERM');
      const r = await w.done;
      expect(r.code, r.stderr.slice(-2000)).toBe(130);
      expect(r.stderr).toMatch(/"released":[1-9]/);
      const released = [
        ...r.stderr.matchAll(/"job":"([0-9a-f-]+)".*"msg":"job handed back to the queue/g),
      ].map((m) => m[1]!);
      expect(released.length).toBeGreaterThan(0);
      // Handed back at once (not left active until it expires): no attempt counted, no checkpoint.
      const back = await sql<{ state: string; retry_count: number; checkpoint: boolean }>(
        url,
        `SELECT state::text AS state, retry_count, EXISTS (SELECT 1 FROM geo.sync_checkpoints c
           WHERE c.task_id = (j.data->>'task_id')::bigint AND c.date = (j.data->>'date')::date) AS checkpoint
         FROM geo_queue.job j WHERE id = ANY($1::uuid[])`,
        [released],
      );
      expect(back).toEqual(released.map(() => ({ state: 'created', retry_count: 0, checkpoint: false })));
    } finally {
      sim.setFaults({});
    }
    const rest = await runCli(['worker', '--exit-when-idle'], e);
    expect(rest.code, rest.stderr.slice(-2000)).toBe(0);
    const done = await runCli(['backfill', ...range(), '--distributed', '--wait', '--no-progress'], e);
    expect(done.code, done.stdout + done.stderr.slice(-2000)).toBe(0);
  });
});
