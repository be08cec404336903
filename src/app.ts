/**
 * Wiring: the only place (with cli.ts) where config, logger, client, warehouse and the run meet.
 * Everything else receives what it needs as arguments.
 */
import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import type { Api } from './api-handle.ts';
import { GeoClient, type RejectedRecord } from './api/client.ts';
import { RequestQueue } from './api/request-queue.ts';
import { ENV_VARS, type Config } from './config.ts';
import { configSource } from './config-sources.ts';
import { UsageError } from './errors.ts';
import { apiPortFromClient } from './extract/client-port.ts';
import { openWarehouse, type OpenWarehouseOptions } from './load/index.ts';
import type { Warehouse } from './load/warehouse.ts';
import { registerSecret } from './log.ts';
import { abortReason } from './abort.ts';
import { urlPasswords } from './redact.ts';
import { acquireLock, lockHolder, LockLostError } from './sync/lock.ts';
import { runSync, type Progress, type RunOptions, type RunSummary } from './sync/run.ts';

// Kept here for the commands and library users that import them from the wiring.
export { UsageError };
export type { Api };

/**
 * How a message names where a setting of `config` came from: the flag (`--warehouse
 * (warehouse)`), the config file's key (`--config geo.json: warehouse`), else its variable
 * (`GEO_WAREHOUSE (warehouse)`), set or left to its default.
 */
export function settingName(config: Config, key: string): string {
  const source = configSource(config, key);
  if (source !== key) return source;
  const variable = Object.entries(ENV_VARS).find(([, v]) => v.key === key)?.[0];
  return variable ? `${variable} (${key})` : key;
}

/** What opening the config's warehouse takes: its DuckDB settings, lock URL, and how to name them. */
export function warehouseOptions(config: Config, logger: Logger): OpenWarehouseOptions {
  return {
    logger,
    duckdb: config.duckdb,
    onWait: () => logger.info('waiting for the DuckDB file, which another process has open'),
    setting: settingName(config, 'warehouse'),
    ...(config.lockUrl ? { lockUrl: config.lockUrl, lockSetting: settingName(config, 'lockUrl') } : {}),
  };
}

/** Registers every secret of the config with the log scrubber before anything logs. */
export function registerConfigSecrets(config: Config): void {
  registerSecret(config.apiKey);
  registerSecret(config.password);
  for (const p of urlPasswords(config.warehouse)) registerSecret(p);
  for (const p of urlPasswords(config.lockUrl ?? '')) registerSecret(p);
}

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

/**
 * The warehouse, migrated when this version has something to apply (a migration, or views and
 * comments that differ from those applied), and only then: an up-to-date warehouse is opened
 * without a single schema statement. So a read-only role (the one the README gives BI tools) can
 * run the commands that only read, and a nightly run does not re-create the views under the BI
 * queries reading them (PostgreSQL's CREATE OR REPLACE VIEW waits for every query on the view and
 * makes the next ones wait behind it). When a migration is due and this role may not apply it,
 * one line says what to do. `geo-sync migrate` always re-creates the views.
 *
 * `lockWaitMs`: how long to wait for a DuckDB file another process has open. `signal`, the
 * process's stop, ends that wait and a PostgreSQL connection being opened at once, and interrupts
 * a migration it finds running; with `interruptible` it also interrupts whatever statement the
 * warehouse runs when it aborts and refuses the next (OpenWarehouseOptions.interruptOn): for every
 * command but a run, which records its stop in the warehouse after the signal.
 */
export async function openMigratedWarehouse(
  config: Config,
  logger: Logger,
  opts: { lockWaitMs?: number; signal?: AbortSignal; interruptible?: boolean } = {},
): Promise<Warehouse> {
  const options: OpenWarehouseOptions = {
    ...warehouseOptions(config, logger),
    ...(opts.lockWaitMs !== undefined ? { lockWaitMs: opts.lockWaitMs } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
  };
  const interruptOn = opts.interruptible ? opts.signal : undefined;
  const warehouse = await openWarehouse(config.warehouse, {
    ...options,
    ...(interruptOn ? { interruptOn } : {}),
  });
  try {
    const pending = await warehouse.pendingMigrations();
    if (pending.length > 0) {
      try {
        await migrateInterruptibly(warehouse, config, options, opts.signal, interruptOn !== undefined);
      } catch (e) {
        // Only a refusal (PostgreSQL's insufficient_privilege) is the role's; anything else (a
        // lost connection, a failing migration) is reported as it is.
        if ((e as { code?: unknown } | null)?.code !== '42501') throw e;
        const why = e instanceof Error ? e.message : String(e);
        throw new Error(
          `${warehouse.description} needs ${pending.join(', ')} and could not apply it (${why}): run geo-sync migrate with a role that may change the schema, then this command again`,
          { cause: e },
        );
      }
    }
    return warehouse;
  } catch (e) {
    await warehouse.close().catch(() => undefined);
    throw e;
  }
}

/**
 * Applies the pending migrations so that the stop interrupts them (an upgrade's fill of the
 * aggregates may take minutes; each migration is one transaction, and the fill resumes). A
 * warehouse that is not interruptible itself migrates through a second one that is, on the same
 * file or database, closed after.
 */
async function migrateInterruptibly(
  warehouse: Warehouse,
  config: Config,
  options: OpenWarehouseOptions,
  signal: AbortSignal | undefined,
  interruptible: boolean,
): Promise<void> {
  if (!signal || interruptible) {
    await warehouse.migrate();
    return;
  }
  const migrating = await openWarehouse(config.warehouse, { ...options, interruptOn: signal });
  try {
    await migrating.migrate();
  } finally {
    await migrating.close();
  }
}

export interface RunCommandOptions extends RunOptions {
  waitForLockMs: number;
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
  const base = { requests: stats.requests, retries: stats.retries, rateLimited: stats.rateLimited };
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
        bindRejectSink: (sink) => api.setRejectSink(sink),
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
