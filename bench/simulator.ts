/**
 * The simulator as a separate process (`geo-sync simulate`), so its CPU is not the pipeline's:
 * spawned, its URL read from the first stdout line, stopped with SIGTERM. Its CPU time is read
 * from /proc (Linux) so a scenario can say how much of the machine's 2 cores it took.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { GEO_SYNC_BIN, REPO_ROOT } from './paths.ts';

export const BENCH_API_KEY = 'bench-key';

export interface SimulatorProcessOptions {
  seed: number;
  executionsPerDay: number;
  /** Days of history ending yesterday; the bench syncs the last one. @default 2 */
  days?: number;
  latencyMs?: number;
  latencyJitterMs?: number;
  /** Extra node flags for the simulator process (e.g. --cpu-prof). */
  nodeArgs?: string[];
}

export interface SimulatorProcess {
  url: string;
  pid: number;
  /** CPU seconds (user + system) the simulator process has used so far, or null off Linux. */
  cpuSeconds(): number | null;
  stop(): Promise<void>;
}

const CLOCK_TICKS = 100; // USER_HZ on Linux

/** CPU seconds of a process from /proc/<pid>/stat (utime + stime), or null. */
export function processCpuSeconds(pid: number): number | null {
  return statCpuSeconds(`/proc/${pid}/stat`);
}

/** CPU seconds of this process's main (JS) thread, or null off Linux. */
export function mainThreadCpuSeconds(): number | null {
  return statCpuSeconds(`/proc/self/task/${process.pid}/stat`);
}

function statCpuSeconds(file: string): number | null {
  try {
    const stat = readFileSync(file, 'utf8');
    // Fields after the command name (which may hold spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    return Number.isFinite(utime + stime) ? (utime + stime) / CLOCK_TICKS : null;
  } catch {
    return null;
  }
}

/** Busy CPU seconds of the whole machine so far (all cores: user, nice, system, irq, softirq of /proc/stat), or null. */
export function machineBusySeconds(): number | null {
  try {
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0] = cpu;
    return (user + nice + system + irq + softirq) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

export async function startSimulatorProcess(o: SimulatorProcessOptions): Promise<SimulatorProcess> {
  const args = [
    ...(o.nodeArgs ?? []),
    GEO_SYNC_BIN,
    'simulate',
    '--port',
    '0',
    '--seed',
    String(o.seed),
    '--days',
    String(o.days ?? 2),
    '--executions-per-day',
    String(o.executionsPerDay),
    '--api-key',
    BENCH_API_KEY,
  ];
  if (o.latencyMs !== undefined) args.push('--latency-ms', String(o.latencyMs));
  if (o.latencyJitterMs !== undefined) args.push('--latency-jitter-ms', String(o.latencyJitterMs));
  const child = spawn(process.execPath, args, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (d: string) => {
    stderr = (stderr + d).slice(-4000);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  const url = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    const timer = setTimeout(() => fail(new Error('the simulator did not start within 60 s')), 60_000);
    const fail = (e: Error) => {
      clearTimeout(timer);
      lines.close();
      child.kill('SIGKILL');
      reject(new Error(`${e.message}\n${stderr}`));
    };
    lines.once('line', (line) => {
      clearTimeout(timer);
      const m = /^listening on (http:\/\/\S+)$/.exec(line.trim());
      if (m) resolve(m[1]!);
      else fail(new Error(`unexpected first line from the simulator: ${line}`));
      // Keep draining stdout so the child never blocks on a full pipe.
      child.stdout!.resume();
    });
    child.once('exit', (code) => fail(new Error(`the simulator exited with code ${code} before listening`)));
  });

  return {
    url,
    pid: child.pid!,
    cpuSeconds: () => processCpuSeconds(child.pid!),
    stop: () => stopChild(child, exited),
  };
}

async function stopChild(child: ChildProcess, exited: Promise<number | null>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}
