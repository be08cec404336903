/**
 * `geo-sync simulate`: run the simulator as a standalone server. The first stdout line is
 * `listening on <url>` (scripts wait for it); SIGINT/SIGTERM close it cleanly. A bad flag value
 * gives one line naming the flag and what it expects, and exit code 2.
 */
import type { CommanderError } from 'commander';
import { Command, InvalidArgumentError, Option } from 'commander';
import type { FaultOptions, SimulatorOptions } from './index.ts';
import { UsageError } from '../errors.ts';
import { MAX_EXECUTIONS_PER_DAY } from './limits.ts';

/** Exit code of a usage error (bad flag or value). */
export const USAGE_EXIT_CODE = 2;

function integer(min: number, max = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isSafeInteger(n) || n < min || n > max)
      throw new InvalidArgumentError(
        max === Number.MAX_SAFE_INTEGER
          ? `expected an integer >= ${min}`
          : `expected an integer from ${min} to ${max}`,
      );
    return n;
  };
}

function nonNegative(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0)
    throw new InvalidArgumentError('expected a number >= 0');
  return n;
}

function rate(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1)
    throw new InvalidArgumentError('expected a number from 0 to 1');
  return n;
}

function collect(value: string, previous: string[] | undefined): string[] {
  if (value.trim() === '') throw new InvalidArgumentError('expected a non-empty key');
  return [...(previous ?? []), value];
}

export interface SimulateFlags {
  host: string;
  port: number;
  seed: number;
  days: number;
  apiKey?: string[];
  executionsPerDay: number;
  latencyMs?: number;
  latencyJitterMs?: number;
  rateLimit?: number;
  rateLimitEvery?: number;
  retryAfter?: number;
  errorRate?: number;
  resetRate?: number;
  malformedRate?: number;
  slowRate?: number;
  slowMs?: number;
  diagnosisStepMs: number;
  unstableTotals?: boolean;
  unknownMembers?: boolean;
  oddValues?: boolean;
}

/** Parsed flags -> simulator options. */
export function toSimulatorOptions(f: SimulateFlags): SimulatorOptions {
  const faults: FaultOptions = {};
  if (f.latencyMs !== undefined) faults.latencyMs = f.latencyMs;
  if (f.latencyJitterMs !== undefined) faults.latencyJitterMs = f.latencyJitterMs;
  if (f.rateLimit !== undefined) faults.rateLimitPerSecond = f.rateLimit;
  if (f.rateLimitEvery !== undefined) faults.rateLimitEvery = f.rateLimitEvery;
  if (f.retryAfter !== undefined) faults.retryAfterSeconds = f.retryAfter;
  if (f.errorRate !== undefined) faults.errorRate = f.errorRate;
  if (f.resetRate !== undefined) faults.resetRate = f.resetRate;
  if (f.malformedRate !== undefined) faults.malformedRate = f.malformedRate;
  if (f.slowRate !== undefined) faults.slowRate = f.slowRate;
  if (f.slowMs !== undefined) faults.slowMs = f.slowMs;
  if (f.unknownMembers) faults.unknownMembers = true;
  if (f.oddValues) faults.oddValues = true;
  const opts: SimulatorOptions = {
    host: f.host,
    port: f.port,
    seed: f.seed,
    days: f.days,
    executionsPerDay: f.executionsPerDay,
    diagnosisStepMs: f.diagnosisStepMs,
    unstableTotals: f.unstableTotals ?? false,
    faults,
  };
  if (f.apiKey && f.apiKey.length > 0) opts.apiKeys = f.apiKey;
  return opts;
}

export function simulateCommand(): Command {
  const cmd = new Command('simulate')
    .description('run the API simulator: a deterministic, fault-injecting server of the whole v2 API')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <n>', 'port (0 = any free port)', integer(0, 65_535), 0)
    .option('--seed <n>', 'seed of the generated world', integer(0), 1)
    .option('--days <n>', 'days of history ending yesterday (Asia/Shanghai)', integer(1, 3650), 7)
    .option('--api-key <key>', 'accepted API key (repeatable; default sim-key)', collect)
    .option(
      '--executions-per-day <n>',
      'executions per day over all platform tasks',
      integer(0, MAX_EXECUTIONS_PER_DAY),
      2000,
    )
    .option('--latency-ms <n>', 'mean added latency per response', nonNegative)
    .option('--latency-jitter-ms <n>', 'uniform +/- jitter around the mean latency', nonNegative)
    .option('--rate-limit <n>', 'requests per second per token before 429', nonNegative)
    .option('--rate-limit-every <n>', 'answer every n-th request 429, whatever the rate', integer(1))
    .option('--retry-after <n>', 'Retry-After seconds sent with 429', nonNegative)
    .option('--error-rate <x>', 'share of requests answered 500/502/503 (0-1)', rate)
    .option('--reset-rate <x>', 'share of requests whose connection is reset (0-1)', rate)
    .option('--malformed-rate <x>', 'share answered 200 with a broken body (0-1)', rate)
    .option('--slow-rate <x>', 'share of requests delayed by --slow-ms (0-1)', rate)
    .option('--slow-ms <n>', 'delay of slow requests', nonNegative)
    .option('--diagnosis-step-ms <n>', 'duration of each site-diagnosis state', integer(1), 15_000)
    .addOption(new Option('--unstable-totals', 'vary `total` of paged responses between pages'))
    .addOption(
      new Option('--unknown-members', 'add members the spec does not name to every JSON object sent'),
    )
    .addOption(
      new Option(
        '--odd-values',
        'rewrite answers with values at the edges of their types (rank numbers as "-" or "３", integers past INTEGER, 1e400, money NUMERIC(18,4) would round), decided from the seed',
      ),
    )
    .exitOverride((err: CommanderError) => {
      // Help and version are not errors; every usage error exits 2 after commander's one line.
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version') process.exit(0);
      process.exit(USAGE_EXIT_CODE);
    })
    .action(async (flags: SimulateFlags) => {
      // Loaded when it runs: the rest of the CLI never loads the simulator.
      const { startSimulator } = await import('./index.ts');
      let sim: Awaited<ReturnType<typeof startSimulator>>;
      try {
        sim = await startSimulator(toSimulatorOptions(flags));
      } catch (e) {
        // Bad configuration (GEO_SIM_WORLD_SHIFT): its one line, exit 2, as for a bad flag.
        if (!(e instanceof UsageError)) throw e;
        process.stderr.write(`error: ${e.message}\n`);
        process.exit(USAGE_EXIT_CODE);
      }
      process.stdout.write(`listening on ${sim.url}\n`);
      await new Promise<void>((resolve) => {
        const stop = () => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          resolve();
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
      await sim.close();
      process.stderr.write(`simulator closed after ${sim.stats.total} requests\n`);
    });
  return cmd;
}
