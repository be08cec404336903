/**
 * `backfill --distributed`: resolve the scope and plan the units exactly as a local backfill
 * does (finished units skipped, --force, --customer), write what the units need before any of
 * them runs (monitoring and platform tasks, task configuration), then enqueue one job per unit
 * plus one for the account data, each with a deterministic id: enqueuing the same backfill twice
 * adds nothing.
 */
import type PgBoss from 'pg-boss';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { ApiPort } from '../extract/port.ts';
import { resolveScope } from '../extract/scope.ts';
import type { Warehouse } from '../load/warehouse.ts';
import { syncTaskConfig } from '../sync/account-data.ts';
import { RunContext } from '../sync/context.ts';
import { acquireLock, lockHolder } from '../sync/lock.ts';
import { planUnits, refreshFromDay, unitKey } from '../sync/planner.ts';
import { newRunId, runStatus, writeScope, type ApiStats } from '../sync/run.ts';
import type { Json, SyncRunRow } from '../transform/rows.ts';
import { QUEUE_NAME, QUEUE_SCHEMA, uuidV5, type JobData } from './queue.ts';

export interface EnqueueOptions {
  dates: readonly string[];
  customers: readonly number[];
  force: boolean;
  /**
   * Queue again the jobs of this backfill that failed for good or were cancelled (the units the
   * plan still needs: a unit finished since is not planned, so not retried). Not part of the
   * backfill's identity: the same backfill, its failures given another attempt.
   */
  retryFailed?: boolean;
  /** How long to wait for the warehouse lock when an exclusive run holds it (0: not at all). */
  waitForLockMs?: number;
  signal?: AbortSignal;
}

export interface EnqueueResult {
  backfill: string;
  /** Jobs this call added (0 when the same backfill was enqueued before). */
  queued: number;
  /** Failed or cancelled jobs this call queued again (`retryFailed`), else 0. */
  requeued: number;
  /** Jobs of the backfill (units + the account job). */
  jobs: number;
  units: number;
  skipped: number;
  /** Records quarantined while the scope was read and written (geo.sync_rejects, this run's id). */
  rejects: number;
  runId: string;
}

/** The backfill's identity: what it covers, so the same command names the same backfill. */
export function backfillId(opts: EnqueueOptions): string {
  const dates = [...opts.dates].sort();
  const customers = [...new Set(opts.customers)].sort((a, b) => a - b);
  const name = JSON.stringify({ from: dates[0], to: dates[dates.length - 1], customers, force: opts.force });
  return uuidV5(`backfill:${name}`);
}

export const unitJobId = (backfill: string, u: { task_id: number; date: string }) =>
  uuidV5(`${backfill}:unit:${unitKey(u)}`);

export interface EnqueueDeps {
  api: ApiPort;
  apiStats: () => ApiStats;
  bindRejectSink: (sink: RunContext['reject']) => void;
  warehouse: Warehouse;
  boss: PgBoss;
  db: Pick<pg.ClientBase, 'query'>;
  config: Config;
  logger: Logger;
}

export async function enqueueBackfill(deps: EnqueueDeps, opts: EnqueueOptions): Promise<EnqueueResult> {
  const { warehouse, config } = deps;
  const backfill = backfillId(opts);
  const started = new Date();
  const runId = newRunId(started);
  const logger = deps.logger.child({ runId, backfill });
  const ctx = new RunContext(runId, deps.api, warehouse, logger, config, undefined, () => new Date());
  deps.bindRejectSink((r) => ctx.reject(r));
  const dates = `${opts.dates[0]}..${opts.dates[opts.dates.length - 1]}`;
  const args: Json = { backfill, phase: 'enqueue', dates, customers: [...opts.customers], force: opts.force };
  let unreadable: Json = null;
  const runRow = (status: SyncRunRow['status'], error: string | null, finished: boolean): SyncRunRow => {
    const a = deps.apiStats();
    return {
      run_id: runId,
      kind: 'backfill',
      args,
      started_at: started.toISOString(),
      finished_at: finished ? new Date().toISOString() : null,
      status,
      rows: ctx.counters.rows as Json,
      requests: a.requests,
      retries: a.retries,
      rate_limited: a.rateLimited,
      rejects: ctx.counters.rejects,
      units_total: 0,
      units_done: 0,
      units_failed: 0,
      error,
      unreadable,
      text_values_changed: ctx.counters.textValuesChanged,
      executions_read: null,
      executions_unchanged: null,
    };
  };
  // The scope is read and written under the warehouse lock, shared as the workers hold it: an
  // exclusive run (sync, backfill, state reset) cannot interleave with it, and its writes are
  // fenced by the lock, so a stalled enqueue cannot write older names over a newer exclusive
  // run's. Two enqueues both hold it shared and do not exclude each other (the later writer wins).
  // It is held until the enqueue's sync_runs row is final: an exclusive taker marks every row still
  // `running` as interrupted (its process ended without finishing it), which must never be a live
  // enqueue's.
  await acquireLock(warehouse, lockHolder('backfill --distributed'), {
    mode: 'shared',
    waitMs: opts.waitForLockMs ?? 0,
    ...(opts.signal ? { signal: opts.signal } : {}),
    onWait: (holder) => logger.info({ holder }, 'waiting for the warehouse lock'),
  });
  await warehouse.insertRun(runRow('running', null, false));
  try {
    const scope = await resolveScope(deps.api, opts.customers);
    unreadable = scope.unreadable as Json;
    await writeScope(ctx, warehouse, scope);
    if (config.enrich.taskConfig) await syncTaskConfig(ctx, scope);
    await ctx.flushRejects();

    const finished = await warehouse.finishedUnits(opts.dates);
    const plan = planUnits({
      dates: opts.dates,
      taskIds: scope.platformTasks.map((t) => t.task_id),
      finished,
      refreshFrom: refreshFromDay(new Date(), config.lookbackDays),
      force: opts.force,
    });

    await deps.db.query(
      `INSERT INTO ${QUEUE_SCHEMA}.backfills
         (backfill_id, args, dates, customers, monitoring_tasks, platform_tasks, units_total, units_skipped)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (backfill_id) DO NOTHING`,
      [
        backfill,
        JSON.stringify(args),
        [...opts.dates],
        scope.customers.length,
        scope.monitoringTasks.length,
        scope.platformTasks.length,
        plan.units.length,
        plan.skipped.length,
      ],
    );

    const common = {
      name: QUEUE_NAME,
      retryLimit: config.jobRetries,
      retryDelay: config.jobRetryDelaySeconds,
      retryBackoff: true,
      expireInSeconds: config.jobTimeoutSeconds,
      // pg-boss archives a job still queued past its keep_until (14 days by default): a long
      // backfill would lose units unrun. Kept GEO_JOB_RETENTION_DAYS instead.
      keepUntil: new Date(Date.now() + config.jobRetentionDays * 86_400_000).toISOString(),
    };
    const jobs: PgBoss.JobInsert<JobData>[] = plan.units.map((u) => ({
      ...common,
      id: unitJobId(backfill, u),
      data: { backfill, task_id: u.task_id, date: u.date },
    }));
    jobs.push({
      ...common,
      id: uuidV5(`${backfill}:account`),
      data: { backfill, account: { customers: scope.customers } },
    });

    // pg-boss's insert returns no ids: count the backfill's jobs before and after instead.
    const count = async () => {
      const r = await deps.db.query<{ n: string }>(
        `SELECT count(*) AS n FROM ${QUEUE_SCHEMA}.job WHERE name = $1 AND id = ANY($2::uuid[])`,
        [QUEUE_NAME, jobs.map((j) => j.id)],
      );
      return Number(r.rows[0]?.n ?? 0);
    };
    const before = await count();
    for (let i = 0; i < jobs.length; i += 1000) await deps.boss.insert(jobs.slice(i, i + 1000));
    const queued = (await count()) - before;
    const requeued = opts.retryFailed
      ? await requeueFailed(
          deps,
          jobs.map((j) => j.id!),
        )
      : 0;
    const counts = {
      queued,
      requeued,
      jobs: jobs.length,
      units: plan.units.length,
      skipped: plan.skipped.length,
      rejects: ctx.counters.rejects,
    };
    logger.info(counts, 'enqueued');
    // A quarantined record (a platform task that failed validation: its units are not planned)
    // makes the enqueue partial, as it makes a local run.
    await warehouse.updateRun(runRow(runStatus(ctx.counters, null), null, true));
    return { backfill, ...counts, runId };
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    await warehouse.updateRun(runRow('failed', message, true)).catch(() => undefined);
    throw e;
  } finally {
    await warehouse.unlock();
  }
}

/**
 * The jobs among `ids` that failed for good or were cancelled, queued again through pg-boss's own
 * calls (retry: failed -> retry with one more attempt allowed; resume: cancelled -> created).
 * Returns how many there were.
 */
async function requeueFailed(deps: EnqueueDeps, ids: readonly string[]): Promise<number> {
  const r = await deps.db.query<{ state: string; n: string }>(
    `SELECT state::text AS state, count(*) AS n FROM ${QUEUE_SCHEMA}.job
     WHERE name = $1 AND id = ANY($2::uuid[]) AND state IN ('failed', 'cancelled') GROUP BY state`,
    [QUEUE_NAME, ids],
  );
  const n = (state: string) => Number(r.rows.find((x) => x.state === state)?.n ?? 0);
  if (n('failed') > 0) await deps.boss.retry(QUEUE_NAME, [...ids]);
  if (n('cancelled') > 0) await deps.boss.resume(QUEUE_NAME, [...ids]);
  return n('failed') + n('cancelled');
}
