/**
 * `geo-sync schedule`: a long-running process that syncs yesterday plus the look-back window on a
 * cron schedule in Asia/Shanghai time. Runs never overlap (a tick while a run is going is
 * skipped and logged; across processes the warehouse lock refuses the second). SIGINT/SIGTERM
 * stop taking new units, let in-flight ones finish or be abandoned without their checkpoint, and
 * exit.
 */
import { Command } from 'commander';
import cron from 'node-cron';
import { createApi, openMigratedWarehouse, runLocked, UsageError } from '../app.ts';
import { EXIT, exitCodeOf } from '../sync/exit-codes.ts';
import { LockHeldError } from '../sync/lock.ts';
import { serveMetrics, SyncMetrics, type MetricsServer } from '../sync/metrics.ts';
import { scheduledDates } from '../sync/planner.ts';
import { formatSummary } from '../sync/summary.ts';
import {
  action,
  configFrom,
  loggerFor,
  parseNonNegativeInt,
  parsePort,
  withCommonOptions,
  type CommonOpts,
} from './common.ts';

interface ScheduleOpts extends CommonOpts {
  cron?: string;
  lookbackDays?: number;
  runNow?: boolean;
  metricsPort?: number;
  metricsHost: string;
}

export function scheduleCommand(): Command {
  return withCommonOptions(new Command('schedule'))
    .description('run sync on a schedule (Asia/Shanghai): yesterday plus the look-back window')
    .option('--cron <expr>', 'cron expression, Asia/Shanghai time (GEO_SCHEDULE; default "30 4 * * *")')
    .option(
      '--lookback-days <n>',
      'days before yesterday re-read every run (GEO_LOOKBACK_DAYS; default 3)',
      parseNonNegativeInt,
    )
    .option('--run-now', 'also run once at start', false)
    .option(
      '--metrics-port <n>',
      'serve Prometheus metrics at http://HOST:N/metrics (0: any free port, logged)',
      parsePort,
    )
    .option('--metrics-host <addr>', 'address the metrics server listens on', '0.0.0.0')
    .action(
      action(async (opts: ScheduleOpts) => {
        const config = configFrom(opts, { schedule: opts.cron, lookbackDays: opts.lookbackDays });
        if (!cron.validate(config.schedule)) {
          throw new UsageError(
            `GEO_SCHEDULE (schedule): "${config.schedule}" is not a valid cron expression`,
          );
        }
        const logger = loggerFor(config);
        const api = createApi(config, logger);
        const warehouse = await openMigratedWarehouse(config, logger);
        const controller = new AbortController();
        const metrics = opts.metricsPort !== undefined ? new SyncMetrics() : null;
        let metricsServer: MetricsServer | null = null;
        if (metrics) {
          try {
            metricsServer = await serveMetrics(metrics.registry, {
              port: opts.metricsPort!,
              host: opts.metricsHost,
            });
          } catch (e) {
            await warehouse.close();
            await api.close();
            throw new UsageError(
              `--metrics-port ${opts.metricsPort}: cannot listen on ${opts.metricsHost} (${(e as Error).message}); choose another port`,
            );
          }
          logger.info({ url: metricsServer.url }, `metrics at ${metricsServer.url}`);
        }
        let running: Promise<void> | null = null;
        let lastCode: number = EXIT.success;

        const runOnce = async () => {
          if (running) {
            logger.warn('previous run still going: this tick is skipped');
            return;
          }
          const dates = scheduledDates(new Date(), config.lookbackDays);
          running = (async () => {
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
                signal: controller.signal,
              });
              lastCode = exitCodeOf(summary.status);
              metrics?.observeRun(summary);
              logger.info({ runId: summary.runId, status: summary.status }, formatSummary(summary));
            } catch (e) {
              if (e instanceof LockHeldError) logger.warn(e.message);
              else logger.error({ err: e }, 'scheduled run failed');
              metrics?.observeError(e instanceof LockHeldError ? 'locked' : 'failed');
              lastCode = EXIT.failure;
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

        await new Promise<void>((resolve) => {
          const stop = (sig: NodeJS.Signals) => {
            logger.warn({ signal: sig }, 'stopping the scheduler');
            void task.stop();
            controller.abort(new Error(`interrupted by ${sig}`));
            const waitRun: Promise<void> = running ?? Promise.resolve();
            void waitRun.finally(resolve);
          };
          process.once('SIGINT', stop);
          process.once('SIGTERM', stop);
        });
        await metricsServer?.close();
        await warehouse.close();
        await api.close();
        return lastCode === EXIT.failure ? EXIT.failure : EXIT.success;
      }),
    );
}
