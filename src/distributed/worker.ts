/**
 * A worker of a distributed backfill: takes jobs from the queue, runs each unit with the same
 * code path as a local run (runUnit through the run's GroupWriter: the checkpoint commits in the
 * same transaction as the unit's last rows), records each job in geo.sync_runs, and completes
 * or fails the job. A failed job is retried by pg-boss with backoff, a bounded number of times.
 *
 * Stopping (SIGTERM): no new jobs; units in flight are abandoned between pages without their
 * checkpoint (as `schedule` does) and their jobs are handed back to the queue at once.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type PgBoss from 'pg-boss';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { Api } from '../app.ts';
import type { Config } from '../config.ts';
import type { Warehouse } from '../load/warehouse.ts';
import { syncDiagnoses, syncFinance } from '../sync/account-data.ts';
import { RunContext } from '../sync/context.ts';
import { newRunId, type ApiStats } from '../sync/run.ts';
import { isFatal, runUnit } from '../sync/unit.ts';
import type { Json, RunStatus, SyncRunRow } from '../transform/rows.ts';
import { isAccountJob, QUEUE_NAME, QUEUE_SCHEMA, type JobData } from './queue.ts';
import { SharedRate } from './shared-rate.ts';

export interface WorkerDeps {
  api: Api;
  warehouse: Warehouse;
  boss: PgBoss;
  /** A pool on the queue's database, for the heartbeat and the idle check. */
  db: pg.Pool;
  config: Config;
  logger: Logger;
  signal: AbortSignal;
}

export interface WorkerOptions {
  /** Jobs (units) run at once by this worker. */
  concurrency: number;
  exitWhenIdle: boolean;
  /** How often to look for a job when the queue had none. @default 1000 */
  pollMs?: number;
  /** Heartbeat and share refresh. @default 1000 */
  tickMs?: number;
}

export interface WorkerResult {
  completed: number;
  failed: number;
  released: number;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

function apiStats(api: Api): ApiStats {
  const s = api.client.stats;
  return { requests: s.requests, retries: s.retries, rateLimited: s.rateLimited };
}

export async function runWorker(deps: WorkerDeps, opts: WorkerOptions): Promise<WorkerResult> {
  const { api, boss, db, config, signal } = deps;
  const workerId = `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  const logger = deps.logger.child({ worker: workerId });
  const result: WorkerResult = { completed: 0, failed: 0, released: 0 };
  const shared = new SharedRate({
    workerId,
    totalRequestsPerSecond: config.requestsPerSecond,
    totalConcurrency: config.concurrency,
  });

  // Rejects of concurrent jobs: routed to the job of their unit when the record names it.
  const running = new Map<string, RunContext>();
  api.setRejectSink((r) => {
    const key = `${String(r.params.task_id)}|${String(r.params.date)}`;
    const ctx = running.get(key) ?? running.values().next().value;
    if (ctx) ctx.reject(r);
    else logger.warn({ endpoint: r.endpoint, reason: r.reason }, 'record quarantined');
  });

  // The share is known before the first job starts, then refreshed every tick.
  let seen429 = api.client.stats.rateLimited;
  let lastShare = '';
  let starting = true;
  let active = 0;
  const tick = async () => {
    const now429 = api.client.stats.rateLimited;
    const share = await shared.tick(db, now429 - seen429, starting || active > 0);
    seen429 = now429;
    api.client.queue.setShare(share);
    const text = `${share.live}/${share.factor.toFixed(2)}`;
    if (text !== lastShare) {
      lastShare = text;
      logger.info(
        {
          live: share.live,
          factor: Number(share.factor.toFixed(3)),
          requestsPerSecond: Number(share.requestsPerSecond.toFixed(2)),
          concurrency: share.concurrency,
        },
        'rate share',
      );
    }
  };
  // Two beats before the first job: workers starting together see each other before any of
  // them sends a request at a rate meant for fewer workers.
  await tick();
  await sleep(opts.tickMs ?? 1000, signal);
  await tick();
  starting = false;
  const ticker = setInterval(() => {
    tick().catch((e: unknown) => logger.warn({ err: e }, 'heartbeat failed'));
  }, opts.tickMs ?? 1000);

  // Requests are counted by the one client all jobs of this worker share. Each job's row gets
  // the requests made since the previous job of this worker ended: per job an approximation
  // when jobs overlap, but the rows of a backfill add up to exactly the requests made.
  let mark = apiStats(api);
  const takeRequests = (): ApiStats => {
    const now = apiStats(api);
    const delta = {
      requests: now.requests - mark.requests,
      retries: now.retries - mark.retries,
      rateLimited: now.rateLimited - mark.rateLimited,
    };
    mark = now;
    return delta;
  };

  const tails = new Set<Promise<void>>();
  const isIdle = async () => {
    if (active > 0) return false;
    const r = await db.query<{ n: string }>(
      `SELECT count(*) AS n FROM ${QUEUE_SCHEMA}.job WHERE name = $1 AND state < 'completed'`,
      [QUEUE_NAME],
    );
    return Number(r.rows[0]?.n ?? 0) === 0;
  };

  const slot = async () => {
    while (!signal.aborted) {
      const [job] = await boss.fetch<JobData>(QUEUE_NAME, { batchSize: 1, includeMetadata: true });
      if (!job) {
        if (opts.exitWhenIdle && (await isIdle())) return;
        await sleep(opts.pollMs ?? 1000, signal);
        continue;
      }
      // As in a local run, the slot takes its next job once this one's reading is over; its
      // commit and bookkeeping finish meanwhile.
      active++;
      let release!: () => void;
      const readDone = new Promise<void>((r) => (release = r));
      const whole: Promise<void> = handleJob(job, () => release())
        .catch((e: unknown) => logger.error({ err: e, job: job.id }, 'job bookkeeping failed'))
        .finally(() => {
          active--;
          release();
          tails.delete(whole);
        });
      tails.add(whole);
      await readDone;
    }
  };

  const handleJob = async (job: PgBoss.JobWithMetadata<JobData>, readOver: () => void) => {
    const data = job.data;
    const attempt = job.retryCount + 1;
    const runId = newRunId(new Date());
    const log = logger.child({ runId, job: job.id, attempt });
    const ctx = new RunContext(runId, api.port, deps.warehouse, log, config, signal, () => new Date());
    const key = isAccountJob(data) ? 'account' : `${data.task_id}|${data.date}`;
    running.set(key, ctx);
    let used: ApiStats = { requests: 0, retries: 0, rateLimited: 0 };
    const started = new Date();
    const args: Json = isAccountJob(data)
      ? { backfill: data.backfill, job: job.id, attempt, account: true }
      : { backfill: data.backfill, job: job.id, attempt, task_id: data.task_id, dates: data.date };
    const row = (status: RunStatus, error: string | null, finished: Date | null): SyncRunRow => {
      const c = ctx.counters;
      return {
        run_id: runId,
        kind: 'backfill',
        args,
        started_at: started.toISOString(),
        finished_at: finished?.toISOString() ?? null,
        status,
        rows: c.rows as Json,
        requests: used.requests,
        retries: used.retries,
        rate_limited: used.rateLimited,
        rejects: c.rejects,
        units_total: isAccountJob(data) ? 0 : 1,
        units_done: c.unitsDone,
        units_failed: c.unitsFailed,
        error,
        // A job reads one unit (or the account data): the scope was resolved at enqueue.
        unreadable: null,
      };
    };
    log.info({ ...(isAccountJob(data) ? { account: true } : data) }, 'job started');
    let error: string | null = null;
    try {
      await deps.warehouse.insertRun(row('running', null, null));
      if (isAccountJob(data)) {
        if (config.enrich.diagnosis) await syncDiagnoses(ctx, data.account.customers);
        if (config.enrich.finance) await syncFinance(ctx);
      } else {
        const read = await runUnit(ctx, { task_id: data.task_id, date: data.date });
        readOver();
        const outcome = await read.outcome;
        if (outcome.status === 'done') ctx.counters.unitsDone++;
        else if (!signal.aborted) {
          ctx.counters.unitsFailed++;
          error = outcome.error;
        }
      }
      await ctx.writer.drain();
      await ctx.flushRejects();
    } catch (e) {
      error = e instanceof Error ? e.message : String(e);
      log.error({ err: e, fatal: isFatal(e) }, 'job failed');
      await ctx.writer.drain().catch(() => undefined);
      await ctx.flushRejects().catch(() => undefined);
    } finally {
      running.delete(key);
    }

    used = takeRequests();
    const interrupted = signal.aborted && (error !== null || ctx.counters.unitsDone === 0);
    const status: RunStatus = interrupted
      ? 'interrupted'
      : error
        ? 'failed'
        : ctx.counters.rejects > 0
          ? 'partial'
          : 'success';
    await deps.warehouse
      .updateRun(row(status, interrupted ? null : error, new Date()))
      .catch((e: unknown) => log.error({ err: e }, 'could not record the job run'));

    if (interrupted) {
      // Abandoned without a checkpoint: back to the queue for another worker, not counted as
      // an attempt (pg-boss counts an attempt when a job that has started is fetched again).
      await db.query(
        `UPDATE ${QUEUE_SCHEMA}.job SET state = 'created', started_on = NULL, start_after = now()
         WHERE name = $1 AND id = $2 AND state = 'active'`,
        [QUEUE_NAME, job.id],
      );
      result.released++;
      log.warn('job handed back to the queue: interrupted');
    } else if (error) {
      const last = job.retryCount >= job.retryLimit;
      await boss.fail(QUEUE_NAME, job.id, { message: error, runId });
      result.failed++;
      log.error(
        { error, retries: job.retryCount, retryLimit: job.retryLimit },
        last ? 'job failed for good (no retries left)' : 'job failed: it will be retried',
      );
    } else {
      await boss.complete(QUEUE_NAME, job.id, { runId, rows: ctx.counters.rows });
      result.completed++;
      log.info({ rows: ctx.counters.rows }, 'job done');
    }
  };

  try {
    await Promise.all(Array.from({ length: Math.max(1, opts.concurrency) }, slot));
    while (tails.size > 0) await Promise.all([...tails]);
  } finally {
    clearInterval(ticker);
    await shared.leave(db).catch(() => undefined);
  }
  return result;
}
