/**
 * `geo-sync schedule`: a long-running process that syncs yesterday plus the look-back window on a
 * cron schedule in Asia/Shanghai time. Runs never overlap (a tick while a run is going is
 * skipped and logged; across processes the warehouse lock refuses the second). The warehouse is
 * open only while a run goes, so BI tools can open a DuckDB file between runs. SIGINT/SIGTERM
 * end every wait of a run going at once (units without their checkpoint are redone next time)
 * and exit.
 *
 * node-cron and prom-client are imported when the command runs, so other commands never load them.
 */
import { isInterruption } from '../../abort.ts';
import { createApi, openMigratedWarehouse, runLocked, UsageError } from '../../app.ts';
import { configSource } from '../../config-sources.ts';
import type { Warehouse } from '../../load/warehouse.ts';
import { lastSuccessfulRun, runChecks } from '../../quality/checks.ts';
import { MigrationLockTimeoutError, WarehouseLockedError } from '../../load/errors.ts';
import { EXIT, exitCodeOf } from '../../sync/exit-codes.ts';
import { LockHeldError } from '../../sync/lock.ts';
import type { MetricsServer } from '../../sync/metrics.ts';
import { scheduledDates } from '../../sync/planner.ts';
import { formatSummary } from '../../sync/summary.ts';
import { type CommonOpts, stopSignal } from '../common.ts';
import { configFrom, loggerFor, metricsListenError } from './common.ts';

export interface ScheduleOpts extends CommonOpts {
  cron?: string;
  lookbackDays?: number;
  runNow?: boolean;
  metricsPort?: number;
  metricsHost: string;
  check: boolean;
}

/** `schedule`: returns once SIGINT or SIGTERM stopped it. */
export async function schedule(opts: ScheduleOpts): Promise<number> {
  const config = configFrom(opts, { schedule: opts.cron, lookbackDays: opts.lookbackDays });
  const { default: cron } = await import('node-cron');
  const { serveMetrics, SyncMetrics } = await import('../../sync/metrics.ts');
  if (!cron.validate(config.schedule)) {
    // Named as given: `--cron`, GEO_SCHEDULE or the config file's key.
    throw new UsageError(
      `${configSource(config, 'schedule')}: "${config.schedule}" is not a valid cron expression`,
    );
  }
  const logger = loggerFor(config);
  const signal = stopSignal(logger);
  const api = createApi(config, logger, { signal });
  // Opened once at start so a bad target or a failed migration shows at once, then closed:
  // between runs the warehouse is not held, so a BI tool can open the DuckDB file.
  // The lock's connection is checked too: a transaction pooler without GEO_LOCK_URL is
  // refused now (exit 2), not at 04:30.
  const metrics = opts.metricsPort !== undefined ? new SyncMetrics() : null;
  const first = await openMigratedWarehouse(config, logger, { signal, interruptible: true, run: true });
  try {
    await first.prepareLock();
    // The last success as the warehouse knows it, so a restart does not reset it to never.
    metrics?.setLastSuccess(await lastSuccessfulRun(first));
  } finally {
    await first.close();
  }
  let metricsServer: MetricsServer | null = null;
  if (metrics) {
    try {
      metricsServer = await serveMetrics(metrics.registry, {
        port: opts.metricsPort!,
        host: opts.metricsHost,
      });
    } catch (e) {
      await api.close();
      throw metricsListenError(e, opts.metricsPort!, opts.metricsHost);
    }
    logger.info({ url: metricsServer.url }, `metrics at ${metricsServer.url}`);
  }
  let running: Promise<void> | null = null;
  let lastCode: number = EXIT.success;

  // The data tests over the run's days: logged (a failing one as a warning) and in the metrics.
  // A check that cannot run is logged; it never fails the run.
  const checkAfterRun = async (warehouse: Warehouse, dates: string[]) => {
    try {
      const results = await runChecks(warehouse, { from: dates[0]!, to: dates[dates.length - 1]! });
      metrics?.observeChecks(results);
      for (const r of results.filter((x) => !x.passed)) {
        logger.warn({ check: r.name, failing: r.failing, sample: r.sample }, `data test failed: ${r.name}`);
      }
      const failed = results.filter((r) => !r.passed).length;
      logger.info({ passed: results.length - failed, failed }, 'data tests done');
    } catch (e) {
      logger.error({ err: e }, 'the data tests could not run');
    }
  };

  const runOnce = async () => {
    if (running) {
      logger.warn('previous run still going: this tick is skipped');
      return;
    }
    if (signal.aborted) return;
    const dates = scheduledDates(new Date(), config.lookbackDays);
    running = (async () => {
      try {
        // Held only while the run goes (a BI tool holding the file delays it up to 60 s).
        const warehouse = await openMigratedWarehouse(config, logger, {
          lockWaitMs: 60_000,
          signal: signal,
          run: true,
        });
        try {
          const summary = await runLocked(api, warehouse, config, logger, {
            kind: 'schedule',
            dates,
            customers: config.customers,
            force: false,
            args: {
              schedule: config.schedule,
              lookbackDays: config.lookbackDays,
              dates: `${dates[0]}..${dates[dates.length - 1]}`,
            },
            waitForLockMs: 0,
            signal: signal,
          });
          lastCode = exitCodeOf(summary.status);
          metrics?.observeRun(summary);
          logger.info({ runId: summary.runId, status: summary.status }, formatSummary(summary));
          if (opts.check && !signal.aborted) await checkAfterRun(warehouse, dates);
        } finally {
          await warehouse.close();
          logger.info('warehouse closed until the next run');
        }
      } catch (e) {
        // Whatever the stop made fail (a wait, a migration it interrupted) is the stop.
        if (isInterruption(e) || signal.aborted) lastCode = EXIT.interrupted;
        else {
          // Held by someone else (the lock, the DuckDB file, the tables a migration alters): the
          // next tick tries again.
          const locked =
            e instanceof LockHeldError ||
            e instanceof WarehouseLockedError ||
            e instanceof MigrationLockTimeoutError;
          if (locked) logger.warn(e.message);
          else logger.error({ err: e }, 'scheduled run failed');
          metrics?.observeError(locked ? 'locked' : 'failed');
          lastCode = EXIT.failure;
        }
      } finally {
        running = null;
      }
    })();
    await running;
  };

  const task = cron.schedule(config.schedule, () => void runOnce(), { timezone: 'Asia/Shanghai' });
  logger.info(
    { schedule: config.schedule, timezone: 'Asia/Shanghai', lookbackDays: config.lookbackDays },
    'scheduler started',
  );
  if (opts.runNow) void runOnce();

  // SIGINT/SIGTERM: no more ticks; a run going ends at once (its waits end with the signal).
  await new Promise<void>((resolve) => {
    const stop = () => {
      void task.stop();
      const waitRun: Promise<void> = running ?? Promise.resolve();
      void waitRun.finally(resolve);
    };
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
  });
  await metricsServer?.close();
  await api.close();
  // How the scheduler stopped, not how its last run went (that is in geo.sync_runs, the log
  // and the metrics): SIGINT/SIGTERM between runs is a service manager's normal stop, 0; one
  // that cut a run short is 130, as for every command (its unfinished units are redone).
  return lastCode === EXIT.interrupted ? EXIT.interrupted : EXIT.success;
}
