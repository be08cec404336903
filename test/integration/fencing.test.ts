/**
 * Exclusive means exclusive. Real processes (the built CLI), the simulator over real
 * sockets, a fresh PostgreSQL database per test.
 * - A worker stalled past its job's timeout (SIGSTOP) while the data changed: its job is redone by
 *   another worker, and nothing the stale attempt does afterwards lands (fenced at commit time).
 * - A lock connection dropped silently (a TCP proxy blackholes it): the run stops, a second run
 *   takes the lock and writes.
 * - Workers hold the lock shared: `state reset` and `sync` are refused while they work.
 * - A job archived by pg-boss before it ran is reported lost by `--wait`, not waited for.
 * - A failed distributed unit is recorded for `state show`.
 * - `backfill --distributed` reads and writes the scope under the lock, shared: an exclusive run
 *   refuses it (exit 4) or makes it wait (--wait-for-lock).
 * - A worker stalled past its heartbeat starts nothing on resuming until its next tick, however
 *   long that tick takes.
 * - A worker busy on every slot makes room for one that joins (it used to starve it).
 * - Five workers sharing 2 requests/s and 2 in flight hold 2 slots in all, at 0.4 requests/s each.
 */
import net from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SharedRate } from '../../src/distributed/shared-rate.ts';
import { openWarehouse } from '../../src/load/index.ts';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.ts';
import { runCli, startCli } from '../helpers/cli.ts';
import { dumpData } from '../helpers/dump.ts';
import { distributedEnv, sql, TestDatabases } from '../helpers/distributed.ts';
import { postgresReachable } from '../helpers/postgres.ts';

const pgUp = await postgresReachable();

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

/**
 * A TCP proxy in front of PostgreSQL that recognizes the warehouse lock's connection by its
 * application_name in the startup packet, and can drop it silently: the server side is closed
 * (PostgreSQL releases the advisory lock) while the client side stays open and hears nothing, as
 * when a NAT or firewall forgets a connection.
 */
async function startLockProxy(target = { host: '127.0.0.1', port: 5432 }) {
  const lockConnections: { client: net.Socket; server: net.Socket }[] = [];
  const all = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target);
    all.add(client).add(upstream);
    let first = true;
    client.on('data', (d) => {
      if (first) {
        first = false;
        if (d.includes('geo-sync lock')) lockConnections.push({ client, server: upstream });
      }
      if (!upstream.destroyed) upstream.write(d);
    });
    upstream.on('data', (d) => {
      if (!client.destroyed && !(client as { blackholed?: boolean }).blackholed) client.write(d);
    });
    upstream.on('close', () => {
      if (!(client as { blackholed?: boolean }).blackholed) client.destroy();
    });
    client.on('close', () => upstream.destroy());
    client.on('error', () => undefined);
    upstream.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    lockConnections,
    /** Drops every lock connection silently. */
    blackholeLocks() {
      for (const { client, server: up } of lockConnections) {
        (client as { blackholed?: boolean }).blackholed = true;
        client.removeAllListeners('data');
        client.on('data', () => undefined);
        up.destroy();
      }
    },
    async close() {
      for (const s of all) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describe.skipIf(!pgUp)('fencing: exclusive means exclusive', () => {
  let sim: RunningSimulator;
  let date: string;
  let dates: string[];
  let customer: string;
  const dbs = new TestDatabases();
  const freshDb = () => dbs.fresh();
  const env = (warehouse: string, extra: Record<string, string> = {}) =>
    distributedEnv(sim.url, warehouse, extra);
  const one = () => ['--from', date, '--to', date, '--customer', customer];
  const two = () => ['--from', dates[0]!, '--to', dates[1]!, '--customer', customer];

  beforeAll(async () => {
    sim = await startSimulator({ seed: 24, days: 4, executionsPerDay: 150 });
    dates = sim.world.dates().slice(0, 2);
    date = dates[0]!;
    customer = String(sim.world.customerIds()[0]);
  });
  afterAll(async () => {
    await sim?.close();
    await dbs.dropAll();
  });

  it('three workers, a job timeout shorter than the slowest unit, one worker stalled past it while the data changed: equal to a single-process sync, each job completed once', async () => {
    const url = await freshDb();
    const e = env(url, { GEO_JOB_TIMEOUT_SECONDS: '2', GEO_CONCURRENCY: '3' });
    const enq = await runCli(['backfill', ...one(), '--distributed'], e);
    expect(enq.code, enq.stderr.slice(-2000)).toBe(0);
    // The stalled worker takes the largest unit: the others are held back until it has, the
    // account's job (no task_id) too, or it could be the one taken first: jobs enqueued together
    // go by id, and the ids are derived from the backfill's dates.
    const units = await sql<{ task_id: string }>(
      url,
      `SELECT data->>'task_id' AS task_id FROM geo_queue.job WHERE data ? 'task_id'`,
    );
    const sizes = units.map((u) => ({
      taskId: Number(u.task_id),
      n: [...sim.world.executions(Number(u.task_id), date)].length,
    }));
    const big = sizes.sort((a, b) => b.n - a.n)[0]!;
    expect(big.n).toBeGreaterThan(3);
    await sql(
      url,
      `UPDATE geo_queue.job SET start_after = now() + interval '1 hour' WHERE data->>'task_id' IS DISTINCT FROM $1`,
      [String(big.taskId)],
    );
    sim.setFaults({ latencyMs: 150 });
    try {
      const stalled = startCli(['worker', '--exit-when-idle', '--concurrency', '1'], e);
      await stalled.waitForLog(/"msg":"job started"/);
      await sql(url, `UPDATE geo_queue.job SET start_after = now() WHERE state = 'created'`);
      // Its unit's list is read (one page), its children are being read: stop it there.
      await sleep(600);
      stalled.child.kill('SIGSTOP');
      // Upstream changes under it: an answer re-saved, an execution deleted.
      const items = [...sim.world.executions(big.taskId, date)];
      sim.world.mutations.setAnswer(items[0]!.prompt_task_id, '新的回答：在停顿之后保存。');
      sim.world.mutations.deleteExecution(items[1]!.prompt_task_id);

      const others = [1, 2].map(() => startCli(['worker', '--exit-when-idle', '--concurrency', '1'], e));
      // Every job done by the live workers, the stalled worker's one included.
      await until(
        'every job completed',
        async () => {
          const [r] = await sql<{ n: string }>(
            url,
            `SELECT count(*) AS n FROM geo_queue.job WHERE state <> 'completed'`,
          );
          return Number(r!.n) === 0;
        },
        90_000,
      );
      stalled.child.kill('SIGCONT');
      const results = await Promise.all([stalled, ...others].map((w) => w.done));
      for (const r of results) expect(r.code, r.stderr.slice(-3000)).toBe(0);
      // The stale attempt stopped and changed nothing (it lost its job, its writes were refused).
      expect(results[0]!.stderr).toMatch(/"msg":"job lost|no longer this worker's/);
    } finally {
      sim.setFaults({});
    }

    const done = await runCli(['backfill', ...one(), '--distributed', '--wait', '--no-progress'], e);
    expect(done.code, done.stdout + done.stderr.slice(-2000)).toBe(0);
    expect(done.stdout).toMatch(/units: \d+ done, 0 failed/);
    // Each job completed exactly once: one successful attempt per job.
    const perJob = await sql<{ job: string; ok: string }>(
      url,
      `SELECT args->>'job' AS job, count(*) FILTER (WHERE status = 'success') AS ok
       FROM geo.sync_runs WHERE args ? 'job' GROUP BY 1`,
    );
    expect(perJob.length).toBeGreaterThan(2);
    for (const j of perJob) expect(Number(j.ok), j.job).toBe(1);
    // The premise: a unit took longer than the job timeout, so leases were renewed, not lucky.
    const [slowest] = await sql<{ s: number }>(
      url,
      `SELECT max(extract(epoch FROM finished_at - started_at))::float AS s FROM geo.sync_runs
       WHERE args ? 'task_id' AND status = 'success'`,
    );
    expect(slowest!.s).toBeGreaterThan(2);
    // No checkpoint vouches for rows its writer did not own: each counts what is stored.
    const mismatched = await sql(
      url,
      `SELECT c.task_id, c.date, c.executions, (SELECT count(*) FROM geo.prompt_executions e
         WHERE e.task_id = c.task_id AND e.date_time = c.date) AS stored
       FROM geo.sync_checkpoints c
       WHERE c.executions <> (SELECT count(*) FROM geo.prompt_executions e WHERE e.task_id = c.task_id AND e.date_time = c.date)`,
    );
    expect(mismatched).toEqual([]);

    const reference = await freshDb();
    const local = await runCli(['backfill', ...one()], env(reference));
    expect(local.code, local.stderr.slice(-2000)).toBe(0);
    expect(await dumpData(url)).toEqual(await dumpData(reference));
    sim.world.mutations.reset();
  });

  it('a lock connection dropped silently stops its run (exit 1, not success, no hang); a second run takes the lock and writes', async () => {
    const url = await freshDb();
    const m = await runCli(['migrate'], env(url));
    expect(m.code, m.stderr).toBe(0);
    const proxy = await startLockProxy();
    try {
      const viaProxy = new URL(url);
      viaProxy.port = String(proxy.port);
      sim.setFaults({ latencyMs: 150 });
      const a = startCli(
        ['backfill', ...two(), '--no-progress'],
        env(viaProxy.toString(), { GEO_CONCURRENCY: '2' }),
      );
      await until('the lock connection', async () => proxy.lockConnections.length > 0, 20_000);
      await sleep(1500);
      proxy.blackholeLocks();
      // The server released the lock with its connection: a second run takes it.
      const b = await runCli(['backfill', ...two(), '--no-progress', '--wait-for-lock', '60'], env(url));
      const ra = await a.done;
      sim.setFaults({});
      expect(ra.code, ra.stderr.slice(-3000)).toBe(1);
      expect(ra.stderr + ra.stdout).toMatch(/lock is lost|lock was lost|no longer owns the warehouse lock/);
      expect(b.code, b.stderr.slice(-3000)).toBe(0);
      const runs = await sql<{ status: string }>(url, `SELECT status FROM geo.sync_runs ORDER BY started_at`);
      expect(runs.map((r) => r.status)).toEqual(['failed', 'success']);
      const reference = await freshDb();
      const local = await runCli(['backfill', ...two()], env(reference));
      expect(local.code, local.stderr.slice(-2000)).toBe(0);
      expect(await dumpData(url)).toEqual(await dumpData(reference));
    } finally {
      sim.setFaults({});
      await proxy.close();
    }
  });

  it('workers hold the lock shared: state reset and sync are refused while they work, and run once they are idle', async () => {
    const url = await freshDb();
    const e = env(url);
    const first = await runCli(['backfill', ...one()], e);
    expect(first.code, first.stderr.slice(-2000)).toBe(0);
    const enq = await runCli(['backfill', ...two(), '--distributed'], e);
    expect(enq.code, enq.stderr.slice(-2000)).toBe(0);
    const checkpoints = async () =>
      (
        await sql<{ k: string }>(
          url,
          `SELECT task_id || '|' || date AS k FROM geo.sync_checkpoints WHERE date = $1`,
          [date],
        )
      ).map((r) => r.k);
    sim.setFaults({ latencyMs: 200 });
    try {
      const w = startCli(['worker', '--exit-when-idle'], e);
      await w.waitForLog(/"msg":"job started"/);
      const before = await checkpoints();
      const reset = await runCli(['state', 'reset', '--from', date, '--to', date], e);
      expect(reset.code, reset.stdout + reset.stderr).toBe(4);
      expect(reset.stderr).toMatch(/holds the warehouse lock.*shared: a distributed worker at work/);
      // Nothing forgotten: every checkpoint of that day is still there.
      expect(before.length).toBeGreaterThan(0);
      expect(await checkpoints()).toEqual(expect.arrayContaining(before));
      const sync = await runCli(['sync', '--date', date, '--customer', customer, '--no-progress'], e);
      expect(sync.code, sync.stderr.slice(-2000)).toBe(4);
      const r = await w.done;
      expect(r.code, r.stderr.slice(-2000)).toBe(0);
    } finally {
      sim.setFaults({});
    }
    const reset = await runCli(['state', 'reset', '--from', date, '--to', date], e);
    expect(reset.code, reset.stderr).toBe(0);
  });

  it('jobs are kept GEO_JOB_RETENTION_DAYS; one archived unrun by pg-boss is reported lost by --wait', async () => {
    const url = await freshDb();
    const e = env(url, { GEO_JOB_RETENTION_DAYS: '30' });
    const enq = await runCli(['backfill', ...one(), '--distributed'], e);
    expect(enq.code, enq.stderr.slice(-2000)).toBe(0);
    const kept = await sql<{ days: number }>(
      url,
      `SELECT min(extract(epoch FROM keep_until - now()) / 86400)::float AS days FROM geo_queue.job`,
    );
    expect(kept[0]!.days).toBeGreaterThan(29);
    // Someone follows the backfill; no worker runs. Then the jobs are back-dated as if queued
    // long ago, and pg-boss's own maintenance archives them unrun.
    const waiter = startCli(['backfill', ...one(), '--distributed', '--wait', '--no-progress'], e);
    await waiter.waitForLog(/"msg":"enqueued"/);
    await sql(url, `UPDATE geo_queue.job SET keep_until = now() - interval '1 minute'`);
    const { default: PgBoss } = await import('pg-boss');
    const boss = new PgBoss({
      connectionString: url,
      schema: 'geo_queue',
      supervise: false,
      schedule: false,
    });
    await boss.start();
    await boss.maintain();
    await boss.stop({ graceful: false, wait: true });
    const archived = await sql<{ n: string }>(url, `SELECT count(*) AS n FROM geo_queue.archive`);
    expect(Number(archived[0]!.n)).toBeGreaterThan(1);
    // --wait ends (it used to wait forever) and says what happened.
    const done = await waiter.done;
    expect(done.code, done.stdout + done.stderr.slice(-2000)).toBe(1);
    expect(done.stdout).toMatch(/lost: pg-boss archived the job while it was still created/);
  });

  it('backfill --distributed writes the scope under the lock, shared: an exclusive holder refuses it (exit 4) or makes it wait', async () => {
    const url = await freshDb();
    const e = env(url);
    const holder = await openWarehouse(url);
    try {
      await holder.migrate();
      expect(await holder.tryLock('geo-sync test-holder', 'exclusive')).toEqual({ acquired: true });
      const refused = await runCli(['backfill', ...one(), '--distributed'], e);
      expect(refused.code, refused.stderr.slice(-2000)).toBe(4);
      expect(refused.stderr).toMatch(/holds the warehouse lock: geo-sync test-holder/);
      const count = async (table: string) =>
        Number((await sql<{ n: string }>(url, `SELECT count(*) AS n FROM ${table}`))[0]!.n);
      // Nothing written, nothing queued, no run recorded.
      expect(await count('geo.monitoring_tasks')).toBe(0);
      expect(await count('geo.sync_runs')).toBe(0);
      expect(await count('geo_queue.job')).toBe(0);

      const waiting = startCli(['backfill', ...one(), '--distributed', '--wait-for-lock', '60'], e);
      await waiting.waitForLog(/"msg":"waiting for the warehouse lock"/);
      expect(await count('geo.monitoring_tasks')).toBe(0);
      await holder.unlock();
      const r = await waiting.done;
      expect(r.code, r.stderr.slice(-2000)).toBe(0);
      expect(await count('geo.monitoring_tasks')).toBeGreaterThan(0);
      expect(await count('geo_queue.job')).toBeGreaterThan(1);
      // The enqueue gave the lock back: an exclusive run takes it at once.
      expect(await holder.tryLock('geo-sync test-holder', 'exclusive')).toEqual({ acquired: true });
    } finally {
      await holder.close();
    }
  });

  it('a distributed unit that fails is recorded: state show names it', async () => {
    const url = await freshDb();
    const e = env(url, { GEO_JOB_RETRIES: '0', GEO_MAX_ATTEMPTS: '1', GEO_ENRICH_FINANCE: 'false' });
    const enq = await runCli(['backfill', ...one(), '--distributed'], e);
    expect(enq.code, enq.stderr.slice(-2000)).toBe(0);
    sim.setFaults({ errorRate: 1 });
    try {
      const w = await runCli(['worker', '--exit-when-idle'], e);
      expect(w.code, w.stderr.slice(-2000)).toBe(3);
    } finally {
      sim.setFaults({});
    }
    const failures = await sql<{ task_id: string; date: string }>(
      url,
      `SELECT task_id::text, date::text FROM geo.sync_unit_failures`,
    );
    const jobs = await sql<{ n: string }>(
      url,
      `SELECT count(*) AS n FROM geo_queue.job WHERE data ? 'task_id'`,
    );
    expect(failures.length).toBe(Number(jobs[0]!.n));
    const show = await runCli(['state', 'show', '--from', date, '--to', date, '--json'], e);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toMatch(/"failed":[1-9]/);
  });

  it('a worker stalled past its heartbeat starts nothing on resuming until its next tick: the fleet stays within GEO_CONCURRENCY', async () => {
    const url = await freshDb();
    const e = env(url, { GEO_CONCURRENCY: '3' });
    // Every day of the world: more work than the test watches, so both workers stay busy (the
    // workers are stopped at the end, not waited for).
    const all = sim.world.dates();
    const range = ['--from', all[0]!, '--to', all[all.length - 1]!, '--customer', customer];
    const enq = await runCli(['backfill', ...range, '--distributed'], e);
    expect(enq.code, enq.stderr.slice(-2000)).toBe(0);
    const workers = [];
    // Holds the stalled worker's heartbeat row, so its first tick after resuming waits.
    const holder = new pg.Client(url);
    await holder.connect();
    sim.setFaults({ latencyMs: 150 });
    try {
      const stalled = startCli(['worker', '--exit-when-idle', '--concurrency', '4'], e);
      workers.push(stalled);
      await stalled.waitForLog(/"msg":"job started"/);
      const live = startCli(['worker', '--exit-when-idle', '--concurrency', '4'], e);
      workers.push(live);
      // (It gets a slot: the first, busy with every slot, lowers its starts to its fair share.)
      await live.waitForLog(/"msg":"job started"/);
      // Both at work, with requests waiting in their queues: freeze one past the 5 s after which
      // the other counts it dead and takes its slots.
      await sleep(500);
      stalled.child.kill('SIGSTOP');
      await sleep(7000);
      // Its next tick is made to wait (as on a busy database) by a lock on its heartbeat row: a
      // worker that started requests on resuming, at the share it held before it stalled, would
      // do so for all that time, not only for the few milliseconds of a tick.
      await holder.query('BEGIN');
      const held = await holder.query(`SELECT 1 FROM geo_queue.workers WHERE pid = $1 FOR UPDATE`, [
        stalled.child.pid,
      ]);
      expect(held.rowCount).toBe(1);
      stalled.child.kill('SIGCONT');
      // Not counted: the requests it had let through its gate before it stalled and not yet sent
      // (a stop can fall between the gate and the socket's write) reach the server on resuming.
      // Nothing can call those back; they are answered within the latency, 150 ms.
      await sleep(500);
      sim.stats.reset();
      await sleep(1000);
      // While its tick waits, the resumed worker starts nothing: the server has only the other
      // worker's requests in flight.
      expect(sim.stats.peakInFlight).toBeLessThanOrEqual(3);
      await holder.query('COMMIT');
      await sleep(3000);
      // From then on, the server never had more than the fleet's total in flight.
      expect(sim.stats.peakInFlight).toBeLessThanOrEqual(3);
      expect(sim.stats.total).toBeGreaterThan(20);
    } finally {
      // Ended before the workers are told to stop: leaving deletes the worker's row it locks.
      await holder.end().catch(() => undefined);
      sim.setFaults({});
      // (SIGCONT first: a stopped process would never act on the SIGTERM.)
      for (const w of workers) {
        w.child.kill('SIGCONT');
        w.child.kill('SIGTERM');
      }
      for (const w of workers) await w.done;
    }
  });

  it('a worker busy on every slot makes room for one that joins: it starts within its fair share, then gives back', async () => {
    const url = await freshDb();
    const m = await runCli(['migrate'], env(url));
    expect(m.code, m.stderr).toBe(0);
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    try {
      const [a, b] = ['a', 'b'].map(
        (id) => new SharedRate({ workerId: id, totalRequestsPerSecond: 10, totalConcurrency: 3 }),
      );
      expect((await a!.tick(pool, 0, true, 0)).concurrency).toBe(3);
      // b joins while a has 3 in flight: no slot is free yet.
      expect((await b!.tick(pool, 0, true, 0)).concurrency).toBe(0);
      // a keeps its 3 slots while 3 are in flight, but starts new requests within its share (2)...
      expect((await a!.tick(pool, 0, true, 3)).concurrency).toBe(2);
      // ...so its in-flight count falls to 2, and the third slot goes back to b.
      expect((await a!.tick(pool, 0, true, 2)).concurrency).toBe(2);
      expect((await b!.tick(pool, 0, true, 0)).concurrency).toBe(1);
      const [held] = await sql<{ n: string }>(
        url,
        'SELECT count(*) AS n FROM geo_queue.concurrency_slots WHERE worker_id IS NOT NULL',
      );
      expect(Number(held!.n)).toBe(3);
    } finally {
      await pool.end();
    }
  });

  it('five workers share 2 requests/s and 2 in flight: 0.4 requests/s each, 2 slots in all', async () => {
    const url = await freshDb();
    const m = await runCli(['migrate'], env(url));
    expect(m.code, m.stderr).toBe(0);
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    try {
      const workers = [1, 2, 3, 4, 5].map(
        (i) => new SharedRate({ workerId: `w${i}`, totalRequestsPerSecond: 2, totalConcurrency: 2 }),
      );
      for (const w of workers) await w.tick(pool, 0, true);
      const shares = [];
      for (const w of workers) shares.push(await w.tick(pool, 0, true));
      expect(shares.map((s) => s.live)).toEqual([5, 5, 5, 5, 5]);
      for (const s of shares) expect(s.requestsPerSecond).toBeCloseTo(0.4);
      expect(shares.reduce((n, s) => n + s.concurrency, 0)).toBe(2);
      const [held] = await sql<{ n: string }>(
        url,
        'SELECT count(*) AS n FROM geo_queue.concurrency_slots WHERE worker_id IS NOT NULL',
      );
      expect(Number(held!.n)).toBe(2);
      // A worker with requests still in flight keeps its slot until they end.
      const holder = workers[shares.findIndex((s) => s.concurrency > 0)]!;
      await workers[4]!.leave(pool);
      await workers[3]!.leave(pool);
      await workers[2]!.leave(pool);
      const after = [];
      for (const w of workers.slice(0, 2)) after.push(await w.tick(pool, 0, true, 1));
      expect(after.reduce((n, s) => n + s.concurrency, 0)).toBeLessThanOrEqual(2);
      for (const w of workers.slice(0, 2)) after.push(await w.tick(pool, 0, true, 1));
      expect(after.slice(2).map((s) => s.concurrency)).toEqual([1, 1]);
      expect(holder).toBeDefined();
    } finally {
      await pool.end();
    }
  });

  it('a worker ranked out of slots while it runs a job rises by its job age, first come first served', async () => {
    const url = await freshDb();
    const m = await runCli(['migrate'], env(url));
    expect(m.code, m.stderr).toBe(0);
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    try {
      const [a, b, c] = ['a', 'b', 'c'].map(
        (id) => new SharedRate({ workerId: id, totalRequestsPerSecond: 10, totalConcurrency: 2 }),
      );
      // Three workers, two slots: without jobs, a and b hold them.
      for (const w of [a, b, c]) await w!.tick(pool, 0, true);
      const first = [];
      for (const w of [a, b, c]) first.push((await w!.tick(pool, 0, true)).concurrency);
      expect(first).toEqual([1, 1, 0]);
      // c took a job when it still had a slot (before the factor fell, or before a and b came):
      // its job is the oldest. a runs a newer one, b none.
      const older = new Date(Date.now() - 60_000);
      const newer = new Date(Date.now() - 1_000);
      expect((await c!.tick(pool, 0, true, 0, older)).concurrency).toBe(0);
      expect((await a!.tick(pool, 0, true, 1, newer)).concurrency).toBe(1);
      // b gives its slot back (nothing in flight), and c takes it: its job goes on.
      expect((await b!.tick(pool, 0, true, 0)).concurrency).toBe(0);
      expect((await c!.tick(pool, 0, true, 0, older)).concurrency).toBe(1);
      // Once c's job is done and b starts one, b ranks before c.
      expect((await b!.tick(pool, 0, true, 0, new Date())).concurrency).toBe(0);
      expect((await c!.tick(pool, 0, true, 0)).concurrency).toBe(0);
      expect((await b!.tick(pool, 0, true, 0, new Date())).concurrency).toBe(1);
    } finally {
      await pool.end();
    }
  });
});
