/** `geo-sync simulate`: flag parsing in-process, and one real process for stdout, signals, exit codes. */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import { simulateCommand, toSimulatorOptions } from '../../src/simulator/command.ts';
import type { SimulateFlags } from '../../src/simulator/command.ts';
import { killOnExit } from '../helpers/children.ts';

/** Parse flags without starting anything: the action is replaced, errors throw instead of exiting. */
async function parse(args: string[]): Promise<{ flags?: SimulateFlags; error?: string }> {
  const cmd = simulateCommand();
  let flags: SimulateFlags | undefined;
  let err = '';
  cmd.action((f: SimulateFlags) => {
    flags = f;
  });
  cmd.exitOverride().configureOutput({ writeErr: (s) => (err += s), writeOut: () => undefined });
  try {
    await cmd.parseAsync(args, { from: 'user' });
    return { flags: flags! };
  } catch (e) {
    if (e instanceof CommanderError) return { error: err.trim() };
    throw e;
  }
}

describe('flags', () => {
  it('defaults', async () => {
    const { flags } = await parse([]);
    expect(toSimulatorOptions(flags!)).toEqual({
      host: '127.0.0.1',
      port: 0,
      seed: 1,
      days: 7,
      executionsPerDay: 2000,
      diagnosisStepMs: 15000,
      unstableTotals: false,
      faults: {},
    });
  });

  it('every flag maps to its option; --api-key repeats', async () => {
    const { flags } = await parse(
      (
        '--port 8123 --seed 9 --days 3 --api-key a --api-key b --executions-per-day 100000 --latency-ms 5 ' +
        '--latency-jitter-ms 2 --rate-limit 50 --retry-after 2 --error-rate 0.1 --reset-rate 0.05 ' +
        '--malformed-rate 0.01 --slow-rate 0.2 --slow-ms 300 --diagnosis-step-ms 500 --unstable-totals --unknown-members ' +
        '--odd-values'
      ).split(' '),
    );
    expect(toSimulatorOptions(flags!)).toEqual({
      host: '127.0.0.1',
      port: 8123,
      seed: 9,
      days: 3,
      apiKeys: ['a', 'b'],
      executionsPerDay: 100000,
      diagnosisStepMs: 500,
      unstableTotals: true,
      faults: {
        latencyMs: 5,
        latencyJitterMs: 2,
        rateLimitPerSecond: 50,
        retryAfterSeconds: 2,
        errorRate: 0.1,
        resetRate: 0.05,
        malformedRate: 0.01,
        slowRate: 0.2,
        slowMs: 300,
        unknownMembers: true,
        oddValues: true,
      },
    });
  });

  it.each([
    [['--seed', 'abc'], /--seed.*abc.*integer/],
    [['--port', '70000'], /--port.*integer from 0 to 65535/],
    [['--days', '0'], /--days.*integer from 1/],
    [['--executions-per-day', '2000000'], /--executions-per-day.*1000000/],
    [['--error-rate', '1.5'], /--error-rate.*from 0 to 1/],
    [['--latency-ms', '-1'], /--latency-ms.*>= 0/],
    [['--diagnosis-step-ms', '0'], /--diagnosis-step-ms.*>= 1/],
    [['--bogus'], /unknown option '--bogus'/],
  ])('%j: one line naming the flag', async (args, message) => {
    const { error } = await parse(args);
    expect(error).toMatch(message);
    expect(error!.split('\n')).toHaveLength(1);
  });
});

describe('process', () => {
  const script = fileURLToPath(new URL('./fixtures/simulate-cli.ts', import.meta.url));
  const cwd = fileURLToPath(new URL('../..', import.meta.url));
  const run = (args: string[], env: NodeJS.ProcessEnv = process.env) =>
    killOnExit(
      spawn(process.execPath, ['--import', 'tsx', script, 'simulate', ...args], {
        cwd,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
  const exit = (child: ReturnType<typeof run>) =>
    new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  it('prints `listening on URL` first, serves, and closes cleanly on SIGTERM', async () => {
    const child = run(['--port', '0', '--executions-per-day', '50', '--days', '1']);
    const done = exit(child);
    let out = '';
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const line = out.split('\n')[0]!;
        if (out.includes('\n')) {
          const m = /^listening on (http:\/\/127\.0\.0\.1:\d+)$/.exec(line);
          if (m) resolve(m[1]!);
          else reject(new Error(`unexpected first line: ${line}`));
        }
      });
      child.once('exit', () => reject(new Error('exited before listening')));
    });
    const r = await fetch(`${url}/api/v2/finance/balance`, { headers: { authorization: 'Bearer sim-key' } });
    expect(r.status).toBe(200);
    child.kill('SIGTERM');
    expect(await done).toBe(0);
  });

  it('exits 2 on an invalid flag value', async () => {
    const child = run(['--error-rate', 'lots']);
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    expect(await exit(child)).toBe(2);
    expect(err).toMatch(/--error-rate/);
  });

  it('exits 2 with one line on a bad GEO_SIM_WORLD_SHIFT', async () => {
    const child = run(['--port', '0'], { ...process.env, GEO_SIM_WORLD_SHIFT: 'abc' });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    expect(await exit(child)).toBe(2);
    expect(err.trim()).toBe(
      'error: GEO_SIM_WORLD_SHIFT: expected a whole number, got "abc" (unset it for today\'s world)',
    );
  });
});
