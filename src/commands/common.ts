/** What every command shares: global options, config loading, errors to exit codes. */
import { setMaxListeners } from 'node:events';
import { Command, InvalidArgumentError, Option } from 'commander';
import type { Logger } from 'pino';
import { InterruptedError, isInterruption } from '../abort.ts';
import { isCalendarDay } from '../api/schemas/common.ts';
import { UsageError, openMigratedWarehouse, registerConfigSecrets } from '../app.ts';
import { ConfigError, loadConfig, type Config } from '../config.ts';
import { outOfMemoryError } from '../load/duckdb/out-of-memory.ts';
import { WarehouseLockedError } from '../load/errors.ts';
import type { Warehouse } from '../load/warehouse.ts';
import { createLogger, scrubSecrets } from '../log.ts';
import { EXIT } from '../sync/exit-codes.ts';
import { ExportDirLockedError } from '../export/lock.ts';
import { LockHeldError } from '../sync/lock.ts';
import { addDays, shanghaiDay, shanghaiYesterday } from '../time.ts';

export function parseDay(value: string): string {
  if (!isCalendarDay(value)) throw new InvalidArgumentError(`expected a day as YYYY-MM-DD, got "${value}"`);
  return value;
}

/**
 * A day range of `state show` and `check`: the 7 days through yesterday (Asia/Shanghai) unless
 * told; `--to` alone ends the week there; `--from` after `--to` is bad usage.
 */
export function weekRange(opts: { from?: string | undefined; to?: string | undefined }): {
  from: string;
  to: string;
} {
  const to = opts.to ?? shanghaiYesterday();
  const from = opts.from ?? addDays(to, -6);
  checkDayOrder(from, to);
  return { from, to };
}

/** `--from` after `--to` is bad usage, in every command that takes both (either may be absent). */
export function checkDayOrder(from: string | undefined, to: string | undefined): void {
  if (from && to && from > to)
    throw new UsageError(`--from ${from} is after --to ${to}; give --from <= --to`);
}

/**
 * A day after today in Asia/Shanghai is bad usage for a run: nothing of it exists upstream yet, and
 * its units would be checkpointed as finished (empty), so the day would never be read once it came.
 */
export function checkNotAfterToday(flag: string, day: string, now: Date = new Date()): void {
  const today = shanghaiDay(now);
  if (day > today)
    throw new UsageError(
      `${flag} ${day} is after today (${today} in Asia/Shanghai): a day to come has nothing to sync yet; give a day up to today`,
    );
}

export function parseId(value: string): number {
  if (!/^\d+$/.test(value))
    throw new InvalidArgumentError(`expected an ID (a non-negative integer), got "${value}"`);
  return Number(value);
}

export function parsePositiveInt(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || !Number.isSafeInteger(Number(value)))
    throw new InvalidArgumentError(
      `expected a positive integer up to ${Number.MAX_SAFE_INTEGER}, got "${value}"`,
    );
  return Number(value);
}

export function parseNonNegativeInt(value: string): number {
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value)))
    throw new InvalidArgumentError(
      `expected a whole number (0 or more, up to ${Number.MAX_SAFE_INTEGER}), got "${value}"`,
    );
  return Number(value);
}

export function parsePort(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 65535)
    throw new InvalidArgumentError(`expected a TCP port (0 to 65535), got "${value}"`);
  return Number(value);
}

/**
 * A repeatable, comma-separated ID list. An empty list (`--task ""`, `--task ,`: an unset shell
 * variable) is bad usage, never "no filter": `state reset --task "$T"` must not forget every task.
 */
export function collectIds(value: string, previous: number[] = []): number[] {
  const parts = value.split(',').map((p) => p.trim());
  if (parts.every((p) => p === '')) {
    throw new InvalidArgumentError(
      `expected one or more IDs (comma-separated), got an empty list "${value}"`,
    );
  }
  if (parts.some((p) => p === '')) {
    throw new InvalidArgumentError(`expected comma-separated IDs with none empty, got "${value}"`);
  }
  return [...previous, ...parts.map(parseId)];
}

/** Options every command that talks to the API or the warehouse takes; they override config. */
export function withCommonOptions(cmd: Command): Command {
  return cmd
    .option('--config <file>', 'JSON config file (default: GEO_CONFIG)')
    .option('--base-url <url>', 'API base URL (GEO_BASE_URL)')
    .option('--warehouse <target>', 'duckdb:<file> or postgres:// URL (GEO_WAREHOUSE)')
    .option('--concurrency <n>', 'requests in flight at once (GEO_CONCURRENCY)', parsePositiveInt)
    .option(
      '--requests-per-second <n>',
      'request starts per second (GEO_REQUESTS_PER_SECOND)',
      parsePositiveInt,
    )
    .addOption(new Option('--log-level <level>', 'log level (GEO_LOG_LEVEL)'))
    .addOption(
      new Option('--log-format <format>', 'log format (GEO_LOG_FORMAT)').choices(['auto', 'json', 'pretty']),
    );
}

export interface CommonOpts {
  config?: string;
  baseUrl?: string;
  warehouse?: string;
  concurrency?: number;
  requestsPerSecond?: number;
  logLevel?: string;
  logFormat?: string;
}

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

/** Turns any error into one clear message and the exit code that tells its kind. */
export function exitOnError(e: unknown, command?: Command): never {
  if (isInterruption(e)) {
    // Stopped on purpose (SIGINT/SIGTERM): whatever was waiting ended with the signal's reason.
    process.stderr.write(`${e instanceof Error ? e.message : 'interrupted'}\n`);
    process.exit(EXIT.interrupted);
  }
  if (e instanceof ConfigError) {
    for (const p of e.problems) process.stderr.write(`config: ${p}\n`);
    process.exit(EXIT.usage);
  }
  if (e instanceof UsageError || e instanceof InvalidArgumentError) {
    process.stderr.write(`error: ${scrubSecrets(e.message)}\n`);
    process.exit(EXIT.usage);
  }
  if (e instanceof LockHeldError) {
    process.stderr.write(`${e.message}\n`);
    process.exit(EXIT.locked);
  }
  if (e instanceof ExportDirLockedError) {
    process.stderr.write(`${e.message}\n`);
    process.exit(EXIT.locked);
  }
  if (e instanceof WarehouseLockedError) {
    // A DuckDB file is open in another process: the same situation as a held lock.
    process.stderr.write(
      `another process has the warehouse open${e.holder ? `: ${e.holder}` : ''} ` +
        // Only sync and backfill can wait; export, report, state... are simply run again later.
        (command?.options.some((o) => o.long === '--wait-for-lock')
          ? '(use --wait-for-lock to wait)\n'
          : '(run it again once that process is done)\n'),
    );
    process.exit(EXIT.locked);
  }
  // DuckDB out of its buffer pool, wherever it was wrapped: the one line naming the setting.
  const outOfMemory = outOfMemoryError(e);
  if (outOfMemory) {
    process.stderr.write(`error: ${outOfMemory.message}\n`);
    process.exit(EXIT.failure);
  }
  const message = e instanceof Error ? e.message : String(e);
  process.stderr.write(`error: ${scrubSecrets(message)}\n`);
  process.exit(EXIT.failure);
}

/**
 * The process's stop: SIGINT and SIGTERM, handled here alone for every command (action() installs
 * the handlers before the command runs, so a signal at any moment is a clean stop). The first
 * signal aborts the one stop signal with an InterruptedError, which ends every wait at once (queue
 * pause, backoff, lock wait, the DuckDB file's, a connection being opened, polling), the requests
 * in flight, and the warehouse statement in flight of the commands that open it interruptible; the
 * command then releases what it holds (locks, scratch files) and exits 130. A second signal exits
 * at once. One per process: the CLI runs one command.
 */
interface ProcessStop {
  readonly controller: AbortController;
  /** Where the stop is announced once the command has its logger; stderr before that. */
  logger: Logger | undefined;
  /** Set once the command has settled: a signal then has nothing left to stop. */
  settled: boolean;
}

let processStop: ProcessStop | undefined;

function installStop(): ProcessStop {
  if (processStop) return processStop;
  const stop: ProcessStop = { controller: new AbortController(), logger: undefined, settled: false };
  // Every request in flight and every wait listens to it at once (tens at concurrency 32): not a
  // leak, so no MaxListenersExceededWarning on stderr.
  setMaxListeners(0, stop.controller.signal);
  const onSignal = (sig: NodeJS.Signals) => {
    if (stop.settled || stop.controller.signal.aborted) {
      if (!stop.settled) {
        const line =
          'second signal: exiting now; what was in flight is left as a kill leaves it (the next run redoes or removes it)';
        if (stop.logger) stop.logger.warn({ signal: sig }, line);
        else process.stderr.write(`${line}\n`);
      }
      process.exit(EXIT.interrupted);
    }
    const line =
      'stopping: every wait ends now, what runs is stopped or rolled back (signal again to exit at once)';
    if (stop.logger) stop.logger.warn({ signal: sig }, line);
    else process.stderr.write(`stopping on ${sig} (signal again to exit at once)\n`);
    stop.controller.abort(new InterruptedError(sig));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  processStop = stop;
  return stop;
}

/**
 * The process's stop signal (see ProcessStop): hand it to everything that waits. `logger`, once
 * the command has one, is where the stop is announced.
 */
export function stopSignal(logger?: Logger): AbortSignal {
  const stop = installStop();
  if (logger) stop.logger = logger;
  return stop.controller.signal;
}

export interface ActionOptions {
  /**
   * The command's own exit code stands after a stop (`schedule`: 0 when stopped between runs).
   * Otherwise a command stopped by a signal exits 130, whatever it came to.
   */
  readonly ownStopCode?: boolean;
}

/**
 * Wraps a command action: the process's signal handlers are installed before it runs, every
 * failure exits with a clear line and the right code, and a command stopped by a signal exits 130
 * once it has released what it held (its error, when the stop made it fail, is the stop's).
 */
export function action<A extends unknown[]>(
  fn: (...args: A) => Promise<number | void>,
  opts: ActionOptions = {},
) {
  return async (...args: A) => {
    const stop = installStop();
    const signal = stop.controller.signal;
    let code: number;
    try {
      code = (await fn(...args)) ?? 0;
    } catch (e) {
      stop.settled = true;
      // Whatever the stop made fail (an interrupted statement, a cancelled query) is the stop.
      if (signal.aborted) exitOnError(signal.reason);
      // commander hands the command itself to an action as its last argument.
      const command = args.at(-1);
      exitOnError(e, command instanceof Command ? command : undefined);
    }
    stop.settled = true;
    if (signal.aborted) {
      if (!opts.ownStopCode) exitOnError(signal.reason);
      // Exited now: what the stop left behind (a connection still being opened) is not waited for.
      process.exit(code);
    }
    process.exitCode = code;
  };
}
