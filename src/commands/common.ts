/**
 * What every command's definition shares: global options, value parsers, the action wrapper and
 * the process's stop. Light on purpose: the CLI loads it (with commander) for every command and
 * for --help; what a command does lives in actions/, loaded when that command runs.
 */
import { setMaxListeners } from 'node:events';
import { Command, InvalidArgumentError, Option } from 'commander';
import type { Logger } from 'pino';
import { InterruptedError, stopWorkFinished } from '../abort.ts';
import { UsageError } from '../errors.ts';
import { EXIT } from '../sync/exit-codes.ts';
import { addDays, isStoredDay, shanghaiDay, shanghaiYesterday } from '../time.ts';

export function parseDay(value: string): string {
  if (!isStoredDay(value)) throw new InvalidArgumentError(`expected a day as YYYY-MM-DD, got "${value}"`);
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

/**
 * Exits with the error's message and code (exit.ts), loaded on a failure only: it knows every
 * error's class, and so most of the program.
 */
async function exitOnError(e: unknown, command?: Command): Promise<never> {
  const exit = await import('./exit.ts');
  return exit.exitOnError(e, command);
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
      if (signal.aborted) {
        await stopWorkFinished();
        return exitOnError(signal.reason);
      }
      // commander hands the command itself to an action as its last argument.
      const command = args.at(-1);
      return exitOnError(e, command instanceof Command ? command : undefined);
    }
    stop.settled = true;
    if (signal.aborted) {
      // What the stop started that must end first (a cancel request: abort.ts finishBeforeExit).
      await stopWorkFinished();
      if (!opts.ownStopCode) return exitOnError(signal.reason);
      // Exited now: what the stop left behind (a connection still being opened) is not waited for.
      process.exit(code);
    }
    process.exitCode = code;
  };
}
