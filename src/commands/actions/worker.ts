/**
 * `geo-sync worker` and `geo-sync backfill --distributed`: the two ends of a distributed backfill
 * (src/distributed/). Both need a PostgreSQL warehouse: the job queue lives in its database.
 */
import type { Logger } from 'pino';
import { createApi, openMigratedWarehouse } from '../../app.ts';
import type { WorkerMetrics } from '../../distributed/metrics.ts';
import type { MetricsServer } from '../../sync/metrics.ts';
import { enqueueBackfill } from '../../distributed/enqueue.ts';
import { createQueuePool, migrateQueue, queueUrl, startBoss } from '../../distributed/queue.ts';
import { waitForBackfill } from '../../distributed/wait.ts';
import { runWorker } from '../../distributed/worker.ts';
import { EXIT, exitCodeOf } from '../../sync/exit-codes.ts';
import { createProgressReporter } from '../../sync/progress.ts';
import { formatSummary } from '../../sync/summary.ts';
import { type CommonOpts, stopSignal } from '../common.ts';
import { configFrom, loggerFor, metricsListenError } from './common.ts';

export interface DistributedBackfillOpts extends CommonOpts {
  customer?: number[];
  force?: boolean;
  wait?: boolean;
  /** Queue again this backfill's jobs that failed for good or were cancelled. */
  retryFailed?: boolean;
  /** Seconds to wait for the warehouse lock while an exclusive run holds it. */
  waitForLock?: number;
  progress?: boolean;
}

/** `backfill --distributed [--retry-failed] [--wait]`. */
export async function runDistributedBackfill(
  dates: string[],
  opts: DistributedBackfillOpts,
): Promise<number> {
  const showBar = Boolean(opts.wait) && opts.progress !== false && Boolean(process.stderr.isTTY);
  const config = configFrom(opts, {
    ...(opts.customer?.length ? { customers: opts.customer } : {}),
    ...(showBar && !opts.logLevel && !process.env.GEO_LOG_LEVEL ? { logLevel: 'warn' } : {}),
  });
  const url = queueUrl(config, 'backfill --distributed');
  const logger = loggerFor(config);
  // One stop signal for the whole command: it ends the enqueue's requests and its wait for the
  // lock as well as --wait (exit 130).
  const signal = stopSignal(logger);
  const api = createApi(config, logger, { signal });
  try {
    const warehouse = await openMigratedWarehouse(config, logger, { signal });
    const db = createQueuePool(url, 'geo-sync-queue', logger);
    try {
      await migrateQueue(url, config, logger);
      const boss = await startBoss(url, logger, { jobTimeoutSeconds: config.jobTimeoutSeconds });
      let result;
      try {
        result = await enqueueBackfill(
          {
            api: api.port,
            apiStats: () => ({
              requests: api.client.stats.requests,
              retries: api.client.stats.retries,
              rateLimited: api.client.stats.rateLimited,
            }),
            bindRejectSink: (sink) => api.setRejectSink(sink),
            warehouse,
            boss,
            db,
            config,
            logger,
          },
          {
            dates,
            customers: config.customers,
            force: Boolean(opts.force),
            retryFailed: Boolean(opts.retryFailed),
            waitForLockMs: (opts.waitForLock ?? 0) * 1000,
            signal: signal,
          },
        );
      } finally {
        await boss.stop({ graceful: false, wait: true });
      }
      process.stdout.write(
        `backfill ${result.backfill}: queued ${result.queued} job(s) (${result.units} units to run, ` +
          `${result.skipped} already finished, ${result.jobs - result.queued} already queued before)` +
          (opts.retryFailed ? `; queued again ${result.requeued} failed or cancelled job(s)` : '') +
          (result.rejects > 0
            ? `; ${result.rejects} record(s) quarantined in geo.sync_rejects (run ${result.runId})`
            : '') +
          '; ' +
          'start workers with `geo-sync worker`\n',
      );
      // Records quarantined while reading the scope: partial, as a local run with rejects is.
      if (!opts.wait) return result.rejects > 0 ? EXIT.partial : EXIT.success;

      const progress = opts.progress === false ? null : createProgressReporter({ tty: showBar, logger });
      try {
        const summary = await waitForBackfill(db, warehouse, result.backfill, {
          signal: signal,
          ...(progress ? { onProgress: (p) => progress.update(p) } : {}),
        });
        progress?.stop();
        process.stdout.write(formatSummary(summary) + '\n');
        return exitCodeOf(summary.status);
      } catch (e) {
        if (signal.aborted) return EXIT.interrupted;
        throw e;
      } finally {
        progress?.stop();
      }
    } finally {
      await db.end();
      await warehouse.close();
    }
  } catch (e) {
    if (signal.aborted) return EXIT.interrupted;
    throw e;
  } finally {
    await api.close();
  }
}

export interface WorkerOpts extends Omit<CommonOpts, 'concurrency'> {
  concurrency?: number;
  exitWhenIdle?: boolean;
  metricsPort?: number;
  metricsHost: string;
}

/** `worker`. */
export async function worker(opts: WorkerOpts): Promise<number> {
  const config = configFrom({ ...opts, concurrency: undefined });
  const url = queueUrl(config, 'worker');
  const logger = loggerFor(config);
  const signal = stopSignal(logger);
  const api = createApi(config, logger, { signal });
  try {
    const warehouse = await openMigratedWarehouse(config, logger, { signal, run: true });
    // A transaction pooler on the lock's URL is refused at start (exit 2), not at the first job.
    await warehouse.prepareLock().catch(async (e: unknown) => {
      await warehouse.close();
      throw e;
    });
    const db = createQueuePool(url, 'geo-sync-worker', logger);
    try {
      await migrateQueue(url, config, logger);
      const boss = await startBoss(url, logger, {
        supervise: true,
        jobTimeoutSeconds: config.jobTimeoutSeconds,
      });
      const metrics = opts.metricsPort !== undefined ? await workerMetrics(opts, logger) : null;
      try {
        logger.info(
          { concurrency: opts.concurrency ?? 2, exitWhenIdle: Boolean(opts.exitWhenIdle) },
          'worker started',
        );
        const r = await runWorker(
          { api, warehouse, boss, db, config, logger, signal: signal },
          {
            concurrency: opts.concurrency ?? 2,
            exitWhenIdle: Boolean(opts.exitWhenIdle),
            ...(metrics ? { onOutcome: (o) => metrics.metrics.observe(o) } : {}),
          },
        );
        logger.info({ ...r, interrupted: signal.aborted }, 'worker stopped');
        // What happened, as for every command: 130 when a signal cut work short, 3 when a
        // job this worker ran failed here (retried or failed for good), 0 otherwise.
        if (signal.aborted) return EXIT.interrupted;
        return r.failed > 0 ? EXIT.partial : EXIT.success;
      } finally {
        await metrics?.server.close();
        await boss.stop({ graceful: false, wait: true });
      }
    } finally {
      await db.end();
      await warehouse.close();
    }
  } finally {
    await api.close();
  }
}

/** The worker's metrics and their server; a port that cannot be had is bad usage (exit 2). */
async function workerMetrics(
  opts: WorkerOpts,
  logger: Logger,
): Promise<{ metrics: WorkerMetrics; server: MetricsServer }> {
  // Loaded here: only a worker that serves metrics pays for prom-client (as `schedule`).
  const { WorkerMetrics } = await import('../../distributed/metrics.ts');
  const { serveMetrics } = await import('../../sync/metrics.ts');
  const metrics = new WorkerMetrics();
  try {
    const server = await serveMetrics(metrics.registry, { port: opts.metricsPort!, host: opts.metricsHost });
    logger.info({ url: server.url }, `metrics at ${server.url}`);
    return { metrics, server };
  } catch (e) {
    throw metricsListenError(e, opts.metricsPort!, opts.metricsHost);
  }
}
