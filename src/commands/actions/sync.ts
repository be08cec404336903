/** `geo-sync sync` and `geo-sync backfill`: one planner, one run, a summary, an exit code. */
import { existsSync } from 'node:fs';
import type { Logger } from 'pino';
import {
  createApi,
  openMigratedWarehouse,
  runLocked,
  UsageError,
  warehouseOptions,
  type Api,
} from '../../app.ts';
import type { Config } from '../../config.ts';
import type { RejectedRecord } from '../../api/client.ts';
import { resolveScope, type Scope } from '../../extract/scope.ts';
import { openWarehouse, parseWarehouseTarget } from '../../load/index.ts';
import { VIEWS_VERSION } from '../../load/migrate.ts';
import { exitCodeOf } from '../../sync/exit-codes.ts';
import {
  estimateRequests,
  planUnits,
  refreshFromDay,
  type RequestEstimate,
  type RequestShape,
  type StoredUnit,
} from '../../sync/planner.ts';
import { createProgressReporter } from '../../sync/progress.ts';
import { formatSummary } from '../../sync/summary.ts';
import type { RunKind } from '../../transform/rows.ts';
import { daysBetween, shanghaiYesterday } from '../../transform/time.ts';
import { type CommonOpts, checkDayOrder, checkNotAfterToday, stopSignal } from '../common.ts';
import { configFrom, loggerFor } from './common.ts';

export interface SyncOpts extends CommonOpts {
  customer?: number[];
  force?: boolean;
  reread?: boolean;
  dryRun?: boolean;
  waitForLock?: number;
  progress?: boolean;
}

/** Requests per execution and per unit under a config, for the dry-run estimate. */
function requestShape(config: Config, reread: boolean): RequestShape {
  const perExecution = 3 + (config.enrich.legacySources ? 1 : 0) + (config.enrich.executionTimes ? 1 : 0);
  return {
    perExecution,
    changeDetection: config.changeDetection && !reread,
    assumedExecutions: ASSUMED_EXECUTIONS_PER_UNIT,
  };
}

/** A unit the warehouse has never stored is estimated at this many executions. */
const ASSUMED_EXECUTIONS_PER_UNIT = 50;

/** The dry run's estimate lines: a range under change detection, one figure without it. */
function estimateLines(
  e: RequestEstimate,
  shape: RequestShape,
  crossCheck: boolean,
  scopeRequests: number,
): string[] {
  const per = `up to ${shape.perExecution} per execution read, 1+ per unit`;
  const lines =
    shape.changeDetection && e.low !== e.high
      ? [
          `estimated requests: ~${e.low} if nothing changed upstream, up to ~${e.high} if every stored execution changed (${per})`,
          '  change detection on: an execution whose listed item is unchanged and whose children were read is not read again (--reread reads all)',
        ]
      : [
          `estimated requests: ~${e.high} (${per}${shape.changeDetection ? '' : '; change detection off: every execution is read'})`,
        ];
  lines.push(`  plus the scope (${scopeRequests} requests, as this dry run made) and the account data`);
  if (crossCheck)
    lines.push(
      '  plus task/prompts for each unit that no longer lists a stored execution (deletions upstream)',
    );
  if (e.unknownUnits > 0)
    lines.push(
      `  ${e.unknownUnits} unit(s) never stored, assumed at ${shape.assumedExecutions} executions each`,
    );
  return lines;
}

/**
 * `--dry-run`: the plan and its estimate, from what the warehouse stores. Writes nothing, and
 * creates nothing either: a DuckDB file that does not exist yet is estimated as empty, not
 * created (with its folders) by opening it.
 */
async function dryRun(
  kind: RunKind,
  dates: string[],
  opts: SyncOpts,
  config: Config,
  logger: Logger,
  api: Api,
  signal: AbortSignal,
): Promise<number> {
  const target = parseWarehouseTarget(config.warehouse);
  const absent = target.dialect === 'duckdb' && !existsSync(target.path);
  const warehouse = absent
    ? null
    : await openWarehouse(config.warehouse, {
        ...warehouseOptions(config, logger),
        signal,
        interruptOn: signal,
      });
  try {
    const scope = await resolveScope(api.port, config.customers);
    // A warehouse not migrated (to this version) yet is estimated as holding nothing, and
    // says so; any other failure to read it (a lost connection, a missing grant) is the
    // command's error, not an estimate quietly made from nothing.
    // Views or comments to re-create (after an upgrade) change no table: not a reason to
    // estimate from nothing.
    const migrated = warehouse
      ? (await warehouse.pendingMigrations()).every((m) => m === VIEWS_VERSION)
      : false;
    const finished = warehouse && migrated ? await warehouse.finishedUnits(dates) : new Set<string>();
    const plan = planUnits({
      dates,
      taskIds: scope.platformTasks.map((t) => t.task_id),
      finished,
      refreshFrom: refreshFromDay(new Date(), config.lookbackDays),
      force: Boolean(opts.force),
    });
    const stored = warehouse && migrated ? await warehouse.storedUnits(dates) : new Map<string, StoredUnit>();
    const shape = requestShape(config, Boolean(opts.reread));
    const estimate = estimateRequests(plan.units, stored, shape);
    const range = dates.length === 1 ? dates[0]! : `${dates[0]}..${dates[dates.length - 1]}`;
    process.stdout.write(
      [
        `plan for ${kind} ${range}: ${plan.units.length} units to run, ${plan.skipped.length} already finished (skipped)`,
        `scope: ${scope.customers.length} projects, ${scope.monitoringTasks.length} monitoring tasks, ${scope.platformTasks.length} platform tasks`,
        absent
          ? `warehouse: ${target.description} does not exist yet (a run creates it); estimated as if it held nothing`
          : migrated
            ? ''
            : 'warehouse: not migrated to this version yet (geo-sync migrate); estimated as if it held nothing',
        ...estimateLines(estimate, shape, config.enrich.crossCheck, api.client.stats.requests),
        ...plan.units.slice(0, 20).map((u) => `  task_id=${u.task_id} date=${u.date}`),
        plan.units.length > 20 ? `  ... ${plan.units.length - 20} more` : '',
        'dry run: nothing was written',
      ]
        .filter(Boolean)
        .join('\n') + '\n',
    );
    return 0;
  } finally {
    await warehouse?.close();
  }
}

export async function runDates(kind: RunKind, dates: string[], opts: SyncOpts): Promise<number> {
  const showBar = opts.progress !== false && Boolean(process.stderr.isTTY);
  const config = configFrom(opts, {
    ...(opts.customer?.length ? { customers: opts.customer } : {}),
    // With the progress bar on a terminal, per-unit info lines would break it up: unless a
    // level was asked for, only warnings and errors are printed beside it.
    ...(showBar && !opts.logLevel && !process.env.GEO_LOG_LEVEL ? { logLevel: 'warn' } : {}),
  });
  const logger = loggerFor(config);
  const signal = stopSignal(logger);
  const api = createApi(config, logger, { signal });
  const args = {
    dates: dates.length === 1 ? dates[0]! : `${dates[0]}..${dates[dates.length - 1]}`,
    customers: config.customers,
    force: Boolean(opts.force),
    reread: Boolean(opts.reread),
  };
  const rejectedAhead: RejectedRecord[] = [];
  try {
    if (opts.dryRun) return await dryRun(kind, dates, opts, config, logger, api, signal);

    // The scope is read while the warehouse opens and migrates: a first request no longer
    // waits for DuckDB's load, the open and the migrations (0.4-0.5 s of a run's start). Not
    // when the run may wait for the lock: a scope read long before the run would be stale.
    // A run that cannot start (the lock held, a failing migration) has read the scope for
    // nothing: a few requests, its list of monitoring and platform tasks.
    const { requests, retries, rateLimited } = api.client.stats;
    const apiStatsFrom = { requests, retries, rateLimited };
    let scope: Promise<Scope> | undefined;
    if (!opts.waitForLock) {
      // What the scope quarantines before the run takes the sink is the run's: held for it (the
      // run logs, stores and counts it; logged below if the run never starts).
      api.setRejectSink((r) => rejectedAhead.push(r));
      scope = resolveScope(api.port, config.customers);
      scope.catch(() => undefined); // awaited by the run; unawaited when the open fails
    }
    // Said before the open: a DuckDB file another process holds makes it wait (--wait-for-lock).
    logger.info('opening the warehouse');
    const warehouse = await openMigratedWarehouse(config, logger, {
      lockWaitMs: Math.max(2000, (opts.waitForLock ?? 0) * 1000),
      signal,
      run: true,
    });
    const progress = opts.progress === false ? null : createProgressReporter({ tty: showBar, logger });
    try {
      const summary = await runLocked(api, warehouse, config, logger, {
        kind,
        dates,
        customers: config.customers,
        force: Boolean(opts.force),
        reread: Boolean(opts.reread),
        args,
        waitForLockMs: (opts.waitForLock ?? 0) * 1000,
        signal,
        apiStatsFrom,
        rejectedAhead,
        ...(scope ? { scope } : {}),
        ...(progress ? { onProgress: (p) => progress.update(p) } : {}),
      });
      progress?.stop();
      process.stdout.write(formatSummary(summary) + '\n');
      return exitCodeOf(summary.status);
    } finally {
      progress?.stop();
      await warehouse.close();
    }
  } finally {
    await api.close();
    // Quarantined by the scope of a run that never started: no run to store them with.
    for (const r of rejectedAhead)
      logger.warn({ endpoint: r.endpoint, reason: r.reason }, 'record quarantined');
  }
}

/** `sync [--date D]`. */
export async function sync(opts: SyncOpts & { date?: string }): Promise<number> {
  if (opts.date) checkNotAfterToday('--date', opts.date);
  return runDates('sync', [opts.date ?? shanghaiYesterday()], opts);
}

export interface BackfillOpts extends SyncOpts {
  from: string;
  to: string;
  distributed?: boolean;
  wait?: boolean;
  retryFailed?: boolean;
}

/** `backfill --from D --to D`, here or `--distributed`. */
export async function backfill(opts: BackfillOpts): Promise<number> {
  checkDayOrder(opts.from, opts.to);
  checkNotAfterToday('--to', opts.to);
  if (opts.wait && !opts.distributed) throw new UsageError('--wait goes with --distributed');
  if (opts.retryFailed && !opts.distributed) throw new UsageError('--retry-failed goes with --distributed');
  if (opts.reread && opts.distributed)
    throw new UsageError(
      '--reread: not with --distributed (workers read as their own config says: run them with GEO_CHANGE_DETECTION=off)',
    );
  if (opts.distributed && !opts.dryRun) {
    // Loaded here: the queue's modules (pg, pg-boss) cost every other run ~60 ms of start.
    const { runDistributedBackfill } = await import('./worker.ts');
    return runDistributedBackfill(daysBetween(opts.from, opts.to), opts);
  }
  return runDates('backfill', daysBetween(opts.from, opts.to), opts);
}
