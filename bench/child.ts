/**
 * A `geo-sync` command (or any node script) as a child process, as a user runs it: the bench's
 * environment without its GEO_* settings plus the scenario's, stdout and stderr collected, stopped
 * with SIGTERM past a timeout. Every scenario that runs the CLI goes through here.
 */
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { REPO_ROOT } from './paths.ts';

export interface ChildRun {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  wallMs: number;
  /** Whole, or its last `keepStdout` characters. */
  stdout: string;
  /** Its last 8,000 characters. */
  stderr: string;
}

/** This process's environment without any GEO_* setting, then `settings`. */
export function childEnv(settings: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GEO_')) env[k] = v;
  return Object.assign(env, settings);
}

/** `node <args>` from the repository's root; resolves when it has exited and its pipes closed. */
export async function runChild(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  o: { timeoutMs: number; keepStdout?: number },
): Promise<ChildRun> {
  const t0 = performance.now();
  const child = spawn(process.execPath, args, { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const keep = o.keepStdout ?? Infinity;
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
    if (stdout.length > keep) stdout = stdout.slice(-keep);
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-8000)));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGTERM');
  }, o.timeoutMs);
  const [exitCode, signal] = await new Promise<[number | null, string | null]>((resolve) =>
    child.once('close', (code, sig) => resolve([code, sig])),
  );
  clearTimeout(timer);
  return { exitCode, signal, timedOut, wallMs: performance.now() - t0, stdout, stderr };
}
