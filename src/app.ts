/**
 * Wiring: the only place (with cli.ts, and app-warehouse.ts for the warehouse alone) where config,
 * logger, client, warehouse and the run meet. Everything else receives what it needs as arguments.
 */
import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import type { Api } from './api-handle.ts';
import { GeoClient, type RejectedRecord } from './api/client.ts';
import { RequestQueue } from './api/request-queue.ts';
import type { Config } from './config.ts';
import { UsageError } from './errors.ts';
import { apiPortFromClient } from './extract/client-port.ts';
import type { Warehouse } from './load/warehouse.ts';
import { abortReason } from './abort.ts';
import { settingName } from './app-warehouse.ts';
import { acquireLock, lockHolder, LockLostError } from './sync/lock.ts';
import { runSync, type ApiStats, type Progress, type RunOptions, type RunSummary } from './sync/run.ts';

// Kept here for the commands and library users that import them from the wiring.
export { UsageError };
export type { Api };
export {
  openMigratedWarehouse,
  registerConfigSecrets,
  settingName,
  warehouseOptions,
} from './app-warehouse.ts';

/**
 * `dispatcher`: an undici Dispatcher used instead of the client's own Pool (benchmarks, tests).
 * `signal`: the process's stop signal; every wait and request of the client ends when it aborts.
 */
/**
 * The client's own signal following the caller's: every request in flight listens to it (tens at
 * once), which is not a leak, so it must not print MaxListenersExceededWarning, and the caller's
 * signal is left as it was.
 */
function clientSignal(signal: AbortSignal): AbortSignal {
  const own = AbortSignal.any([signal]);
  setMaxListeners(0, own);
  return own;
}

export function createApi(
  config: Config,
  logger: Logger,
  opts: { dispatcher?: Dispatcher; signal?: AbortSignal } = {},
): Api {
  if (!config.baseUrl) {
    throw new UsageError('GEO_BASE_URL (baseUrl): required, the API base URL (or try `npx geo-sync demo`)');
  }
  const auth = config.apiKey
    ? { apiKey: config.apiKey }
    : config.email && config.password
      ? { email: config.email, password: config.password }
      : null;
  if (!auth) throw new UsageError('GEO_API_KEY (apiKey): required, or GEO_EMAIL and GEO_PASSWORD to log in');
  let sink: (r: RejectedRecord) => void = (r) =>
    logger.warn({ endpoint: r.endpoint, reason: r.reason }, 'record quarantined');
  const queue = new RequestQueue({
    concurrency: config.concurrency,
    requestsPerSecond: config.requestsPerSecond,
    maxPauseMs: config.maxRetryAfterSeconds * 1000,
  });
  const client = new GeoClient({
    baseUrl: config.baseUrl,
    auth,
    queue,
    timeoutMs: config.timeoutMs,
    maxResponseBytes: config.maxResponseBytes,
    retry: {
      maxAttempts: config.maxAttempts,
      baseDelayMs: config.retryBaseDelayMs,
      maxDelayMs: config.retryMaxDelayMs,
      maxRetryAfterMs: config.maxRetryAfterSeconds * 1000,
    },
    onReject: (r) => sink(r),
    logger,
    baseUrlSetting: settingName(config, 'baseUrl'),
    ...(opts.dispatcher ? { dispatcher: opts.dispatcher } : {}),
    ...(opts.signal ? { signal: clientSignal(opts.signal) } : {}),
  });
  return {
    client,
    port: apiPortFromClient(client),
    setRejectSink(s) {
      sink = s;
    },
    async close() {
      // A login token is revoked when the process is done with it (spec 5.4); keys stay.
      if ('email' in auth)
        await client.logout().catch((e: unknown) => logger.warn({ err: e }, 'logout failed'));
      await client.close();
    },
  };
}

export interface RunCommandOptions extends RunOptions {
  waitForLockMs: number;
  /** The client's counters when the run's first request was made (before the lock, `scope`). */
  apiStatsFrom?: ApiStats;
  /** Records quarantined while `scope` was read before the run: the run's, stored with its own. */
  rejectedAhead?: RejectedRecord[];
  signal?: AbortSignal;
  onProgress?: (p: Progress) => void;
  now?: () => Date;
}

/**
 * Takes the warehouse lock, runs, releases the lock. The run stops on the process's signal
 * (interrupted) and also when the lock is lost (failed): it never goes on unlocked.
 */
export async function runLocked(
  api: Api,
  warehouse: Warehouse,
  config: Config,
  logger: Logger,
  opts: RunCommandOptions,
): Promise<RunSummary> {
  await acquireLock(warehouse, lockHolder(opts.kind), {
    waitMs: opts.waitForLockMs,
    signal: opts.signal,
    onWait: (holder) => logger.info({ holder }, 'waiting for the warehouse lock'),
    onInterrupted: (runs) =>
      logger.warn({ runs }, 'runs left running by a process that ended (kill -9?): marked interrupted'),
  });
  const stop = new AbortController();
  setMaxListeners(0, stop.signal); // one listener per request in flight and per wait

  const onSignal = () => stop.abort(abortReason(opts.signal!));
  if (opts.signal?.aborted) onSignal();
  opts.signal?.addEventListener('abort', onSignal, { once: true });
  const offLockLost = warehouse.onLockLost?.((cause) => stop.abort(new LockLostError(cause)));
  // The client outlives a run in `schedule` (and a library pipeline): its counters add up
  // every run, so this run's figures are what they gained since it started.
  const stats = api.client.stats;
  const base = opts.apiStatsFrom ?? {
    requests: stats.requests,
    retries: stats.retries,
    rateLimited: stats.rateLimited,
  };
  try {
    return await runSync(
      {
        api: api.port,
        warehouse,
        logger,
        config,
        apiStats: () => ({
          requests: stats.requests - base.requests,
          retries: stats.retries - base.retries,
          rateLimited: stats.rateLimited - base.rateLimited,
        }),
        bindRejectSink: (sink) => {
          api.setRejectSink(sink);
          for (const r of opts.rejectedAhead?.splice(0) ?? []) sink(r);
        },
        signal: stop.signal,
        ...(opts.onProgress ? { onProgress: opts.onProgress } : {}),
        ...(opts.now ? { now: opts.now } : {}),
      },
      opts,
    );
  } finally {
    offLockLost?.();
    opts.signal?.removeEventListener('abort', onSignal);
    await warehouse.unlock();
  }
}
