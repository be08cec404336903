/**
 * A run: resolve the scope, plan the units, run them through one shared request queue, read
 * the account data, and keep the run log. `sync`, `backfill`, `schedule` and `demo` all call
 * runSync; only the dates and the kind differ.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { isInterruption } from '../abort.ts';
import type { Config } from '../config.ts';
import type { ApiPort } from '../extract/port.ts';
import { resolveScope, type Scope } from '../extract/scope.ts';
import type { Warehouse } from '../load/warehouse.ts';
import { toMonitoringTaskRow, toPlatformTaskRow } from '../transform/hierarchy.ts';
import type { Json, RunKind, RunStatus, SyncRunRow } from '../transform/rows.ts';
import { syncDiagnoses, syncFinance, syncTaskConfig } from './account-data.ts';
import { RunContext, type RunCounters } from './context.ts';
import { monitoringTaskOrigin, platformTaskOrigin } from './origins.ts';
import { planUnits, refreshFromDay, type Unit } from './planner.ts';
import { StoredDays } from './stored-days.ts';
import { isFatal, runUnit, type UnitOutcome } from './unit.ts';

export interface ApiStats {
  requests: number;
  retries: number;
  rateLimited: number;
}

export interface RunDeps {
  api: ApiPort;
  warehouse: Warehouse;
  logger: Logger;
  config: Config;
  /** The client's counters, read at the end of the run (and by progress). */
  apiStats: () => ApiStats;
  now?: () => Date;
  /**
   * Stops the run: no new unit starts. Aborted with an interruption (SIGINT/SIGTERM) the run
   * ends `interrupted`; with any other reason (the lock was lost) it ends `failed` with it.
   */
  signal?: AbortSignal;
  onProgress?: (p: Progress) => void;
  /** Where quarantined list items arrive: wired by the caller to the client's onReject. */
  bindRejectSink?: (sink: RunContext['reject']) => void;
}

export interface RunOptions {
  kind: RunKind;
  dates: readonly string[];
  customers: readonly number[];
  force: boolean;
  /** Read every execution's children, whatever change detection says (`--reread`). */
  reread?: boolean;
  /** Arguments as given, already free of secrets: stored in sync_runs. */
  args: Json;
  /** Units run at once; each keeps many requests in flight through the shared queue. */
  unitConcurrency?: number;
  /**
   * The scope, already being read: the CLI starts reading it while the warehouse opens and
   * migrates, which no request waits for. Its failure fails the run where reading it would.
   */
  scope?: Promise<Scope>;
}

export interface Progress {
  unitsDone: number;
  unitsTotal: number;
  rows: number;
  requests: number;
}

export interface RunSummary {
  runId: string;
  status: RunStatus;
  dates: readonly string[];
  scope: {
    customers: number;
    monitoringTasks: number;
    platformTasks: number;
    /** Monitoring tasks the key may not read (project/tasks answered 404), with the reason. */
    unreadable: Scope['unreadable'];
  };
  counters: RunCounters;
  api: ApiStats;
  startedAt: string;
  finishedAt: string;
  error: string | null;
  failedUnits: { unit: Unit; error: string }[];
}

/**
 * Units read at once, at most. The request queue's headroom decides when the next one starts;
 * this bound only caps the executions held in memory (each unit reads a window of them).
 */
export const DEFAULT_UNITS_READING = 8;

/**
 * Starts units one after another, each as soon as the request queue has headroom (fewer
 * requests waiting than running), so small units keep every slot busy from the first unit to
 * the last while a large unit, which fills the queue by itself, holds back the next. A fatal
 * error of one unit stops new starts; units already reading finish first.
 */
export async function scheduleUnits(
  units: readonly Unit[],
  o: {
    maxUnits: number;
    headroom: (() => Promise<void>) | null;
    aborted: () => boolean;
    read: (unit: Unit) => Promise<void>;
  },
): Promise<void> {
  const reading = new Set<Promise<void>>();
  let failure: { error: unknown } | null = null;
  for (const unit of units) {
    while (reading.size >= o.maxUnits) await Promise.race(reading);
    if (reading.size > 0 && o.headroom) await Promise.race([o.headroom(), ...reading]);
    if (failure || o.aborted()) break;
    const p: Promise<void> = o
      .read(unit)
      .catch((error: unknown) => {
        failure ??= { error };
      })
      .finally(() => reading.delete(p));
    reading.add(p);
    // Let the unit put its first request into the queue before headroom is judged again.
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  await Promise.all(reading);
  if (failure) throw (failure as { error: unknown }).error;
}

export function newRunId(now: Date): string {
  return `${now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')}-${randomBytes(3).toString('hex')}`;
}

/**
 * The scope's monitoring and platform tasks, upserted; a row the warehouse refuses is quarantined
 * alone (RunContext.writeRecords) and the run goes on. A platform task whose row was refused is
 * still synced: its units are planned from the scope read, not from the warehouse.
 */
export async function writeScope(ctx: RunContext, warehouse: Warehouse, scope: Scope): Promise<void> {
  const monitoringTasks = await ctx.writeRecords(
    scope.monitoringTasks.map(toMonitoringTaskRow),
    (rows) => warehouse.upsertMonitoringTasks(rows),
    monitoringTaskOrigin,
  );
  const platformTasks = await ctx.writeRecords(
    scope.platformTasks.map(toPlatformTaskRow),
    (rows) => warehouse.upsertPlatformTasks(rows),
    platformTaskOrigin,
  );
  ctx.addRows('monitoring_tasks', monitoringTasks);
  ctx.addRows('platform_tasks', platformTasks);
}

/** A run's status from its counters: failed on an error, partial with rejects or failed units. */
export function runStatus(c: RunCounters, error: string | null): RunStatus {
  if (error) return 'failed';
  if (c.rejects > 0 || c.unitsFailed > 0) return 'partial';
  return 'success';
}

function totalRows(c: RunCounters): number {
  return Object.values(c.rows).reduce((a, b) => a + b, 0);
}

export async function runSync(deps: RunDeps, opts: RunOptions): Promise<RunSummary> {
  const now = deps.now ?? (() => new Date());
  const started = now();
  const runId = newRunId(started);
  const logger = deps.logger.child({ runId });
  // --reread: this run reads every child, whatever the configuration says.
  const config = opts.reread ? { ...deps.config, changeDetection: false } : deps.config;
  const ctx = new RunContext(runId, deps.api, deps.warehouse, logger, config, deps.signal, now);
  deps.bindRejectSink?.((r) => ctx.reject(r));
  const c = ctx.counters;
  const failedUnits: RunSummary['failedUnits'] = [];
  let scope: Scope | null = null;
  let error: string | null = null;
  let interrupted = false;
  /** The signal's verdict once it has aborted: interrupted, or failed with its reason. */
  const stopped = (): boolean => {
    const signal = deps.signal;
    if (!signal?.aborted) return false;
    if (isInterruption(signal.reason)) interrupted = true;
    else if (error === null) {
      error = signal.reason instanceof Error ? signal.reason.message : String(signal.reason);
      logger.error({ err: signal.reason }, 'run stopped');
    }
    return true;
  };

  const runRow = (): SyncRunRow => {
    const api = deps.apiStats();
    return {
      run_id: runId,
      kind: opts.kind,
      args: opts.args,
      started_at: started.toISOString(),
      finished_at: null,
      status: 'running',
      rows: c.rows as Json,
      requests: api.requests,
      retries: api.retries,
      rate_limited: api.rateLimited,
      rejects: c.rejects,
      units_total: c.unitsTotal,
      units_done: c.unitsDone,
      units_failed: c.unitsFailed,
      error: null,
      unreadable: scope ? (scope.unreadable as Json) : null,
      text_values_changed: c.textValuesChanged,
      executions_read: c.executionsRead,
      executions_unchanged: c.executionsUnchanged,
    };
  };
  await deps.warehouse.insertRun(runRow());
  // From here the run is recorded: a stop marks it interrupted, a failure failed.
  logger.info({ kind: opts.kind, dates: opts.dates.length }, 'run started');
  const progress = () =>
    deps.onProgress?.({
      unitsDone: c.unitsDone + c.unitsFailed,
      unitsTotal: c.unitsTotal,
      rows: totalRows(c),
      requests: deps.apiStats().requests,
    });

  const sideReads: Promise<void>[] = [];
  try {
    scope = await (opts.scope ?? resolveScope(deps.api, opts.customers));
    logger.info(
      {
        customers: scope.customers.length,
        monitoringTasks: scope.monitoringTasks.length,
        platformTasks: scope.platformTasks.length,
        unreadable: scope.unreadable.map((u) => u.project_id),
      },
      'scope resolved',
    );
    await writeScope(ctx, deps.warehouse, scope);
    // Reads outside the daily hierarchy go through the same request queue alongside the units
    // instead of as phases before and after them; their errors end the run as before.
    const side = (read: () => Promise<void>) => sideReads.push(read());
    const readScope = scope;
    if (deps.config.enrich.taskConfig) side(() => syncTaskConfig(ctx, readScope));
    if (deps.config.enrich.diagnosis) side(() => syncDiagnoses(ctx, readScope.customers));
    if (deps.config.enrich.finance) side(() => syncFinance(ctx));
    // Rejected side reads are awaited below; until then they must not count as unhandled.
    for (const p of sideReads) p.catch(() => undefined);

    const finished = await deps.warehouse.finishedUnits(opts.dates);
    const plan = planUnits({
      dates: opts.dates,
      taskIds: scope.platformTasks.map((t) => t.task_id),
      finished,
      refreshFrom: refreshFromDay(now(), deps.config.lookbackDays),
      force: opts.force,
    });
    c.unitsTotal = plan.units.length;
    c.unitsSkipped = plan.skipped.length;
    // Whole days of units: their stored executions read a day at a time.
    ctx.storedDays = new StoredDays(deps.warehouse, plan.units);
    logger.info({ units: plan.units.length, skipped: plan.skipped.length, dates: opts.dates.length }, 'plan');
    progress();

    const committing: Promise<void>[] = [];
    const record = (u: Unit, outcome: UnitOutcome) => {
      if (outcome.status === 'done') c.unitsDone++;
      else if (!deps.signal?.aborted) {
        c.unitsFailed++;
        failedUnits.push({ unit: u, error: outcome.error });
      }
      progress();
    };
    // A fatal error (the key refused) stops new units; the ones reading finish first, so none is
    // left running while the run is recorded and its lock released.
    let unitsError: { error: unknown } | null = null;
    await scheduleUnits(plan.units, {
      maxUnits: Math.max(1, opts.unitConcurrency ?? DEFAULT_UNITS_READING),
      headroom: deps.api.headroom ? () => deps.api.headroom!() : null,
      aborted: stopped,
      read: async (unit) => {
        const read = await runUnit(ctx, unit);
        committing.push(read.outcome.then((o) => record(unit, o)));
      },
    }).catch((e: unknown) => {
      unitsError = { error: e };
    });
    // Drained first: the units' outcomes wait for their commits, which would otherwise linger.
    await ctx.writer.drain();
    await Promise.all(committing);
    logger.debug({ transactions: ctx.writer.transactions, rows: ctx.writer.rows }, 'writer drained');
    if (unitsError) throw (unitsError as { error: unknown }).error;
    await Promise.all(sideReads);
    await ctx.flushRejects();
    // The aggregates of every unit this run wrote, before the run is recorded as done (nothing
    // stays stale at rest); then the tables it grew a lot made ready for readers.
    if (!deps.signal?.aborted) {
      const refreshed = await ctx.rollups.finish();
      const tidied = await deps.warehouse.tidyGrownTables();
      logger.info({ ...refreshed, tidied }, 'aggregates refreshed');
    }
    stopped(); // a stop that let every unit end quietly still marks the run
  } catch (e) {
    if (!stopped()) {
      error = e instanceof Error ? e.message : String(e);
      logger.error({ err: e, fatal: isFatal(e) }, 'run failed');
    }
    // Nothing of this run may still write once it is recorded and the warehouse may close.
    await Promise.allSettled(sideReads);
    await ctx.writer.drain().catch(() => undefined);
    await ctx.flushRejects().catch(() => undefined);
  }

  ctx.warnRankRawValues();
  // Which units failed, for `geo-sync state show` (the run row only counts them).
  await deps.warehouse
    .recordUnitFailures(
      failedUnits.map((f) => ({ ...f.unit, run_id: runId, failed_at: now().toISOString(), error: f.error })),
    )
    .catch((e: unknown) => logger.error({ err: e }, 'could not record the failed units'));
  const finishedAt = now();
  const status: RunStatus = interrupted ? 'interrupted' : runStatus(c, error);
  const final = { ...runRow(), finished_at: finishedAt.toISOString(), status, error };
  try {
    await deps.warehouse.updateRun(final);
  } catch (e) {
    logger.error({ err: e }, 'could not record the run');
  }
  return {
    runId,
    status,
    dates: opts.dates,
    scope: {
      customers: scope?.customers.length ?? 0,
      monitoringTasks: scope?.monitoringTasks.length ?? 0,
      platformTasks: scope?.platformTasks.length ?? 0,
      unreadable: scope?.unreadable ?? [],
    },
    counters: c,
    api: deps.apiStats(),
    startedAt: started.toISOString(),
    finishedAt: finishedAt.toISOString(),
    error,
    failedUnits: failedUnits.map((f) => ({ unit: f.unit, error: f.error })),
  };
}
