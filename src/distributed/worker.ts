/**
 * A worker of a distributed backfill: takes jobs from the queue, runs each unit with the same
 * code path as a local run (runUnit through the run's GroupWriter: the checkpoint commits in the
 * same transaction as the unit's last rows), records each job in geo.sync_runs, and completes
 * or fails the job. A failed job is retried by pg-boss with backoff, a bounded number of times.
 *
 * Stopping (SIGTERM): no new jobs; units in flight are abandoned between pages without their
 * checkpoint (as `schedule` does) and their jobs are handed back to the queue at once.
 *
 * Exclusivity is proven, not assumed (job-lease.ts): each attempt's writes are fenced by its job
 * (still `active` with this attempt's start, checked inside each write transaction), its lease is
 * renewed every tick while it works, and complete/fail/hand-back change the job only while the
 * attempt owns it. An attempt that lost its job (expired while stalled, then run by another
 * worker) stops, writes nothing more and leaves the job to its owner. The worker also holds the
 * warehouse lock *shared* while it has work, so `sync`, `backfill` and `state reset` (exclusive)
 * wait for the fleet and the fleet for them; losing it stops the jobs in flight.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type PgBoss from 'pg-boss';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { Api } from '../api-handle.ts';
import type { Config } from '../config.ts';
import type { Warehouse } from '../load/warehouse.ts';
import { syncDiagnoses, syncFinance } from '../sync/account-data.ts';
import { RunContext } from '../sync/context.ts';
import { newRunId, type ApiStats } from '../sync/run.ts';
import { isFatal, runUnit } from '../sync/unit.ts';
import { lockHolder } from '../sync/lock.ts';
import type { Json, RunStatus, SyncRunRow } from '../transform/rows.ts';
import {
  attemptFence,
  completeAttempt,
  failAttempt,
  handBackAttempt,
  renewLease,
  type Attempt,
} from './job-lease.ts';
import { isAccountJob, QUEUE_NAME, QUEUE_SCHEMA, type JobData } from './queue.ts';
import { SharedRate, type Share } from './shared-rate.ts';

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
  /** Told each job's outcome here as it is settled (the worker's metrics). */
  onOutcome?: (outcome: keyof WorkerResult) => void;
}

export interface WorkerResult {
  completed: number;
  /** Jobs whose attempt here failed (retried by pg-boss while retries are left). */
  failed: number;
  /** Jobs handed back to the queue: interrupted by a signal or by the loss of the warehouse lock. */
  released: number;
  /** Attempts that lost their job to another worker (expired meanwhile): nothing of them committed after. */
  lost: number;
}

/** An attempt's job was expired and may be another worker's now. */
export class JobLostError extends Error {
  readonly code = 'JOB_LOST' as const;
  constructor(id: string) {
    super(`job ${id} is no longer this worker's (it expired and may run elsewhere): its attempt stopped`);
    this.name = 'JobLostError';
  }
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
  const result: WorkerResult = { completed: 0, failed: 0, released: 0, lost: 0 };
  const count = (outcome: keyof WorkerResult) => {
    result[outcome]++;
    opts.onOutcome?.(outcome);
  };
  const timeoutSeconds = config.jobTimeoutSeconds;
  // Leases are renewed every tick: three ticks per job timeout at least, so one slow tick
  // (a busy database) does not let a live attempt's job expire.
  const leaseTickMs = Math.max(100, Math.min(opts.tickMs ?? 1000, (timeoutSeconds * 1000) / 3));
  const shared = new SharedRate({
    workerId,
    totalRequestsPerSecond: config.requestsPerSecond,
    totalConcurrency: config.concurrency,
  });
  // A share holds staleMs / 2 after its tick began, and ticks come every staleMs / 5 at most:
  // a live worker's share never lapses between two of them, even if one tick is slow.
  const tickMs = Math.min(leaseTickMs, shared.staleMs / 5);

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
  let share: Share = {
    live: 1,
    factor: 1,
    requestsPerSecond: config.requestsPerSecond,
    concurrency: config.concurrency,
  };
  let starting = true;
  let active = 0;
  // Attempts in flight: their leases are renewed every tick; a renewal that finds the job gone
  // (expired while this process stalled) stops the attempt.
  const attempts = new Map<string, { attempt: Attempt; stop: AbortController }>();
  const renew = async () => {
    for (const { attempt, stop } of [...attempts.values()]) {
      if (stop.signal.aborted) continue;
      if (!(await renewLease(db, attempt, timeoutSeconds))) stop.abort(new JobLostError(attempt.id));
    }
  };
  const tick = async () => {
    // Taken before the heartbeat is written: the others count this worker live (its slots its
    // own) until staleMs after that write, so half of it from here is safely inside.
    const beat = Date.now();
    await renew();
    const now429 = api.client.stats.rateLimited;
    // Ranked by its oldest job: a worker ranked out of slots while running jobs rises in turn.
    let oldest: Date | undefined;
    for (const { attempt } of attempts.values())
      if (!oldest || attempt.startedOn < oldest) oldest = attempt.startedOn;
    share = await shared.tick(
      db,
      now429 - seen429,
      starting || active > 0,
      // Read before the tick's round trips, which the requests it allows can start during.
      api.client.queue.stats.inFlightCeiling,
      oldest,
    );
    seen429 = now429;
    api.client.queue.setShare(share, { validForMs: beat + shared.staleMs / 2 - Date.now() });
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
  await sleep(tickMs, signal);
  await tick();
  starting = false;
  // One tick at a time: a slow one (a busy database) is not stacked on, where two would race for
  // the same slots; and leaving waits for it, or it would register the worker again afterwards.
  let ticking: Promise<void> | null = null;
  const ticker = setInterval(() => {
    ticking ??= tick()
      .catch((e: unknown) => logger.warn({ err: e }, 'heartbeat failed'))
      .finally(() => (ticking = null));
  }, tickMs);

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

  // The warehouse lock, shared with the other workers while this one has work; released when idle
  // so that an exclusive run (sync, backfill, state reset) can go. `users`: slots holding it.
  let users = 0;
  let lockStop = new AbortController();
  let offLockLost: (() => void) | undefined;
  let lockHeld = false;
  let toldWaiting = false;
  let taking: Promise<boolean> | null = null;
  const takeLock = (): Promise<boolean> => {
    taking ??= takeLockOnce().finally(() => (taking = null));
    return taking;
  };
  const takeLockOnce = async (): Promise<boolean> => {
    if (lockHeld) return true;
    const r = await deps.warehouse.tryLock(lockHolder('worker'), 'shared');
    if (!r.acquired) {
      if (!toldWaiting) logger.info({ holder: r.holder }, 'waiting: another run holds the warehouse lock');
      toldWaiting = true;
      return false;
    }
    toldWaiting = false;
    lockHeld = true;
    lockStop = new AbortController();
    const stop = lockStop;
    offLockLost = deps.warehouse.onLockLost?.((cause) => {
      lockHeld = false;
      stop.abort(cause);
    });
    return true;
  };
  const releaseLock = async () => {
    if (users > 0 || !lockHeld) return;
    lockHeld = false;
    offLockLost?.();
    await deps.warehouse.unlock();
  };

  const slot = async () => {
    while (!signal.aborted) {
      users++;
      let job: PgBoss.JobWithMetadata<JobData> | undefined;
      try {
        job =
          (await takeLock()) && share.concurrency > 0
            ? (await boss.fetch<JobData>(QUEUE_NAME, { batchSize: 1, includeMetadata: true }))[0]
            : undefined;
      } finally {
        if (!job) users--;
      }
      if (!job) {
        await releaseLock();
        if (opts.exitWhenIdle && (await isIdle())) return;
        await sleep(opts.pollMs ?? 1000, signal);
        continue;
      }
      // As in a local run, the slot takes its next job once this one's reading is over; its
      // commit and bookkeeping finish meanwhile.
      active++;
      let release!: () => void;
      const readDone = new Promise<void>((r) => (release = r));
      const taken = job;
      const whole: Promise<void> = handleJob(taken, () => release())
        .catch((e: unknown) => logger.error({ err: e, job: taken.id }, 'job bookkeeping failed'))
        .finally(() => {
          active--;
          users--;
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
    const owned: Attempt = { id: job.id, startedOn: new Date(job.startedOn) };
    // The attempt stops on the process's signal, on the loss of the warehouse lock, and on the
    // loss of its job (a renewal or a fenced write that finds it gone).
    const jobStop = new AbortController();
    attempts.set(job.id, { attempt: owned, stop: jobStop });
    // The lease set to one timeout from the start, not from the first tick: a retry of a job that
    // pg-boss expired carries the expire_in its earlier attempt's renewals stretched (it copies
    // it), which would keep this attempt's job from expiring that long if this worker died now.
    // A failure here is the next tick's to retry.
    if (!(await renewLease(db, owned, timeoutSeconds).catch(() => true)))
      jobStop.abort(new JobLostError(job.id));
    const stopped = AbortSignal.any([signal, lockStop.signal, jobStop.signal]);
    // Pinned: the lock as held when the job was taken. Were it lost and taken again by another
    // slot meanwhile, this attempt's writes would otherwise pass the new holding's check.
    const pinnedLock = deps.warehouse.heldLockFence();
    const fenced = deps.warehouse.withFence(attemptFence(owned, (e) => jobStop.abort(e)));
    const warehouse = pinnedLock ? fenced.withFence(pinnedLock) : fenced;
    const ctx = new RunContext(runId, api.port, warehouse, log, config, stopped, () => new Date());
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
        // A lost attempt's quarantine was refused with its writes: its owner reads the unit again.
        rejects: jobStop.signal.aborted ? 0 : c.rejects,
        units_total: isAccountJob(data) ? 0 : 1,
        units_done: c.unitsDone,
        units_failed: c.unitsFailed,
        error,
        // A job reads one unit (or the account data): the scope was resolved at enqueue.
        unreadable: null,
        text_values_changed: c.textValuesChanged,
        executions_read: c.executionsRead,
        executions_unchanged: c.executionsUnchanged,
      };
    };
    log.info({ ...(isAccountJob(data) ? { account: true } : data) }, 'job started');
    let error: string | null = null;
    try {
      await warehouse.insertRun(row('running', null, null));
      if (isAccountJob(data)) {
        if (config.enrich.diagnosis) await syncDiagnoses(ctx, data.account.customers);
        if (config.enrich.finance) await syncFinance(ctx);
      } else {
        const read = await runUnit(ctx, { task_id: data.task_id, date: data.date });
        readOver();
        // Its last rows and checkpoint committed now, not after the writer's linger.
        await ctx.writer.drain();
        const outcome = await read.outcome;
        if (outcome.status === 'done') ctx.counters.unitsDone++;
        else if (!stopped.aborted) {
          ctx.counters.unitsFailed++;
          error = outcome.error;
        }
      }
      await ctx.writer.drain();
      await ctx.flushRejects();
      // The aggregates of the unit this job wrote (and of any other left stale), under the job's
      // fence like its rows.
      if (!stopped.aborted) await ctx.rollups.finish();
    } catch (e) {
      error = e instanceof Error ? e.message : String(e);
      log.error({ err: e, fatal: isFatal(e) }, 'job failed');
      await ctx.writer.drain().catch(() => undefined);
      await ctx.flushRejects().catch(() => undefined);
    } finally {
      // Only this attempt's entries: a later attempt of the same job (it expired while this one
      // stalled, and this worker took it again) keeps its lease renewal and its rejects.
      if (running.get(key) === ctx) running.delete(key);
      if (attempts.get(job.id)?.attempt === owned) attempts.delete(job.id);
    }

    ctx.warnRankRawValues();
    used = takeRequests();
    const lost = jobStop.signal.aborted;
    const interrupted = !lost && stopped.aborted && (error !== null || ctx.counters.unitsDone === 0);
    if (lost) error = (jobStop.signal.reason as Error).message;
    const status: RunStatus = lost
      ? 'failed'
      : interrupted
        ? 'interrupted'
        : error
          ? 'failed'
          : ctx.counters.rejects > 0
            ? 'partial'
            : 'success';
    await warehouse
      .updateRun(row(status, interrupted ? null : error, new Date()))
      .catch((e: unknown) => log.error({ err: e }, 'could not record the job run'));

    if (lost) {
      // Another attempt owns the job now (or it was settled by one): nothing to complete or fail.
      count('lost');
      log.warn('job lost: it expired while this attempt ran, and its writes since were refused');
    } else if (interrupted) {
      // Abandoned without a checkpoint: back to the queue for another worker at once.
      if (await handBackAttempt(db, owned, timeoutSeconds)) {
        count('released');
        log.warn('job handed back to the queue: interrupted');
      } else log.warn("job interrupted; it was no longer this worker's to hand back");
    } else if (error) {
      const last = job.retryCount >= job.retryLimit;
      if (!isAccountJob(data)) {
        // `state show` names the failed unit (as a local run's failures are recorded).
        await warehouse
          .recordUnitFailures([
            {
              task_id: data.task_id,
              date: data.date,
              run_id: runId,
              failed_at: new Date().toISOString(),
              error,
            },
          ])
          .catch((e: unknown) => log.error({ err: e }, 'could not record the failed unit'));
      }
      if (await failAttempt(db, boss, owned, { message: error, runId }, timeoutSeconds)) {
        count('failed');
        log.error(
          { error, retries: job.retryCount, retryLimit: job.retryLimit },
          last ? 'job failed for good (no retries left)' : 'job failed: it will be retried',
        );
      } else {
        count('lost');
        log.warn({ error }, "job failed here, but it was no longer this worker's to fail");
      }
    } else if (await completeAttempt(db, boss, owned, { runId, rows: ctx.counters.rows })) {
      count('completed');
      log.info({ rows: ctx.counters.rows }, 'job done');
    } else {
      // Its writes committed while it owned the job (they are fenced), then it expired before
      // completing: the next attempt finds the unit's checkpoint.
      count('lost');
      log.warn('job done, but it expired before it could be completed: another attempt will find it done');
    }
  };

  try {
    await Promise.all(Array.from({ length: Math.max(1, opts.concurrency) }, slot));
    while (tails.size > 0) await Promise.all([...tails]);
  } finally {
    clearInterval(ticker);
    await ticking;
    users = 0;
    await releaseLock().catch(() => undefined);
    await shared.leave(db).catch(() => undefined);
  }
  return result;
}
