/**
 * The library's pipeline: what `geo-sync sync`/`backfill` do, for code that embeds geo-sync.
 * Nothing process-wide happens on this path: no environment or config file is read (the caller
 * passes the config file's keys), no signal handler is installed, process.exit and exitCode are
 * never touched, nothing is printed. The caller's logger (pino or pino-compatible) and
 * AbortSignal are used instead.
 */
import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import { isCalendarDay } from './api/schemas/common.ts';
import { createApi, openMigratedWarehouse, runLocked, UsageError, type Api } from './app.ts';
import { loadConfig, type Config, type ConfigInput } from './config.ts';
import type { Warehouse } from './load/warehouse.ts';
import { silentLogger } from './log.ts';
import type { RunSummary } from './sync/run.ts';
import { daysBetween } from './transform/time.ts';

/** The keys of the JSON config file (a `$comment` included, as the documented example has one). */
export type PipelineConfig = ConfigInput & { readonly $comment?: unknown };

export interface PipelineOptions {
  /** Where log lines go: a pino logger (or one with pino's methods and `child`). @default silent */
  readonly logger?: Logger;
  /** Aborting it stops every run of the pipeline: no new units; finished ones are kept. */
  readonly signal?: AbortSignal;
  /** How long a run waits for another geo-sync run on the same warehouse, ms. @default 0 */
  readonly waitForLockMs?: number;
  /** An undici Dispatcher for the API client instead of its own pool (proxies, tests). */
  readonly dispatcher?: Dispatcher;
}

export interface PipelineRunOptions {
  /** First day, `YYYY-MM-DD` (Asia/Shanghai). */
  readonly from: string;
  /** Last day, inclusive. @default from */
  readonly to?: string;
  /** Page project IDs (`customer_id`). @default the config's `customers` (empty: everything readable) */
  readonly customers?: readonly number[];
  /** Re-read units already finished. @default false */
  readonly force?: boolean;
  /** Stops this run only (besides the pipeline's signal). */
  readonly signal?: AbortSignal;
}

export interface Pipeline {
  /** The validated config, defaults applied. */
  readonly config: Readonly<Config>;
  /**
   * Syncs every day of from..to. Resolves with the run's summary, whatever its status
   * ('success', 'partial' when records were quarantined or units failed, 'failed',
   * 'interrupted'); rejects on bad options (UsageError), a held lock (LockHeldError) or a
   * warehouse that cannot be opened. Runs of one pipeline go one after the other.
   */
  run(opts: PipelineRunOptions): Promise<RunSummary>;
  /** Waits for a run in progress, then closes the warehouse and the API client. */
  close(): Promise<void>;
}

/**
 * A pipeline from the keys of the JSON config file (config/geo-sync.example.json). Throws a
 * ConfigError listing every problem, or a UsageError when baseUrl or the credentials are missing.
 * The warehouse is opened (and migrated) by the first run and stays open until close().
 */
export function createPipeline(config: PipelineConfig, opts: PipelineOptions = {}): Pipeline {
  // No env, no GEO_CONFIG file: the caller's keys only, checked like the file's.
  // A config file's `$comment` is allowed here as it is in the file.
  const { $comment: _comment, ...keys } = config;
  const cfg = loadConfig({ env: {}, overrides: keys as Record<string, unknown> });
  const logger = opts.logger ?? silentLogger;
  const api: Api = createApi(cfg, logger, opts.dispatcher ? { dispatcher: opts.dispatcher } : {});
  let warehouse: Promise<Warehouse> | null = null;
  let queue: Promise<unknown> = Promise.resolve();
  let closed = false;

  const runOnce = async (r: PipelineRunOptions): Promise<RunSummary> => {
    const to = r.to ?? r.from;
    for (const [name, day] of [
      ['from', r.from],
      ['to', to],
    ] as const) {
      if (typeof day !== 'string' || !isCalendarDay(day))
        throw new UsageError(`run(): ${name} must be a day as YYYY-MM-DD, got ${JSON.stringify(day)}`);
    }
    if (r.from > to) throw new UsageError(`run(): from ${r.from} is after to ${to}`);
    const signals = [opts.signal, r.signal].filter((s): s is AbortSignal => s !== undefined);
    const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
    if (signal?.aborted) throw signal.reason ?? new Error('aborted');
    warehouse ??= openMigratedWarehouse(cfg, logger, {
      lockWaitMs: Math.max(2000, opts.waitForLockMs ?? 0),
      run: true,
    });
    const w = await warehouse.catch((e: unknown) => {
      warehouse = null; // the next run tries again
      throw e;
    });
    const dates = daysBetween(r.from, to);
    const customers = r.customers ? [...r.customers] : cfg.customers;
    const force = Boolean(r.force);
    return runLocked(api, w, cfg, logger, {
      kind: dates.length === 1 ? 'sync' : 'backfill',
      dates,
      customers,
      force,
      args: { dates: dates.length === 1 ? r.from : `${r.from}..${to}`, customers, force, via: 'library' },
      waitForLockMs: opts.waitForLockMs ?? 0,
      ...(signal ? { signal } : {}),
    });
  };

  return {
    config: cfg,
    run(r) {
      if (closed) return Promise.reject(new Error('run(): the pipeline is closed'));
      const result = queue.then(() => runOnce(r));
      queue = result.catch(() => undefined);
      return result;
    },
    async close() {
      if (closed) return;
      closed = true;
      await queue;
      try {
        if (warehouse) await (await warehouse.catch(() => null))?.close();
      } finally {
        await api.close();
      }
    },
  };
}
