/** Runs the real command line as a child process, as users and cron do. */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { killOnExit } from './children.ts';

export const BIN = fileURLToPath(new URL('../../bin/geo-sync.js', import.meta.url));

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliProcess {
  child: ChildProcess;
  /** Resolves when a stderr log line matches (JSON logs: the `msg`). */
  waitForLog(pattern: RegExp, count?: number): Promise<void>;
  /** Everything written to stderr so far. */
  stderr(): string;
  done: Promise<CliResult>;
}

export function startCli(args: string[], env: Record<string, string | undefined> = {}): CliProcess {
  const child = killOnExit(
    spawn(process.execPath, [BIN, ...args], {
      env: { ...process.env, GEO_LOG_FORMAT: 'json', GEO_LOG_LEVEL: 'info', CI: process.env.CI, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let stdout = '';
  let stderr = '';
  const waiters: { pattern: RegExp; count: number; seen: number; resolve: () => void }[] = [];
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => {
    const text = d.toString();
    stderr += text;
    for (const line of text.split('\n')) {
      for (const w of waiters) {
        if (w.pattern.test(line) && ++w.seen === w.count) w.resolve();
      }
    }
  });
  const done = new Promise<CliResult>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return {
    child,
    waitForLog(pattern, count = 1) {
      return new Promise<void>((resolve, reject) => {
        waiters.push({ pattern, count, seen: 0, resolve });
        void done.then(() =>
          reject(new Error(`process ended before ${count}x ${pattern}\n${stderr.slice(-3000)}`)),
        );
      });
    },
    stderr: () => stderr,
    done,
  };
}

export async function runCli(
  args: string[],
  env: Record<string, string | undefined> = {},
): Promise<CliResult> {
  return startCli(args, env).done;
}
