/** What the commands' actions share: config loading, the logger, the warehouse of a command. */
import type { Logger } from 'pino';
import { openMigratedWarehouse, registerConfigSecrets } from '../../app-warehouse.ts';
import { UsageError } from '../../errors.ts';
import { loadConfig, type Config } from '../../config.ts';
import type { Warehouse } from '../../load/warehouse.ts';
import { createLogger } from '../../log.ts';
import { stopSignal, type CommonOpts } from '../common.ts';

/** The flag behind each config key a command may set, so a problem names the flag given. */
const FLAG_OF_KEY: Readonly<Record<string, string>> = {
  baseUrl: '--base-url',
  warehouse: '--warehouse',
  concurrency: '--concurrency',
  requestsPerSecond: '--requests-per-second',
  logLevel: '--log-level',
  logFormat: '--log-format',
  customers: '--customer',
  schedule: '--cron',
  lookbackDays: '--lookback-days',
};

export function configFrom(opts: CommonOpts, extra: Record<string, unknown> = {}): Config {
  const config = loadConfig({
    file: opts.config,
    overrideFlags: FLAG_OF_KEY,
    overrides: {
      baseUrl: opts.baseUrl,
      warehouse: opts.warehouse,
      concurrency: opts.concurrency,
      requestsPerSecond: opts.requestsPerSecond,
      logLevel: opts.logLevel,
      logFormat: opts.logFormat,
      ...extra,
    },
  });
  registerConfigSecrets(config);
  return config;
}

export function loggerFor(config: Config): Logger {
  return createLogger({ level: config.logLevel, format: config.logFormat });
}

/**
 * The warehouse of a command that stops outright on a signal (every command but a run): opened
 * and migrated under the process's stop, which ends the open's waits and interrupts the statement
 * in flight (openMigratedWarehouse's `interruptible`).
 */
export function openStoppableWarehouse(config: Config, logger: Logger): Promise<Warehouse> {
  return openMigratedWarehouse(config, logger, { signal: stopSignal(logger), interruptible: true });
}

/**
 * A metrics server that cannot listen, as bad usage (exit 2: the process's own setting, which a
 * restart does not change): an address this machine does not have names --metrics-host, anything
 * else (the port in use, a port below 1024 without the right) --metrics-port.
 */
export function metricsListenError(e: unknown, port: number, host: string): UsageError {
  const code = (e as { code?: unknown } | null)?.code;
  const why = e instanceof Error ? e.message : String(e);
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return new UsageError(
      `--metrics-host ${host} (--metrics-port ${port}): cannot listen there (${why}); give an address of this machine, or 0.0.0.0 for all of them`,
    );
  return new UsageError(`--metrics-port ${port}: cannot listen on ${host} (${why}); choose another port`);
}
