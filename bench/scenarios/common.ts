/**
 * What every scenario shares: the shape of a scenario (bench/index.ts runs them), the log line,
 * a simulator process around a measurement, and the figures of a pipeline run and a bare loop.
 */
import { shanghaiYesterday } from '../../src/transform/time.ts';
import type { BareRun } from '../bare.ts';
import type { PipelineRun } from '../pipeline.ts';
import type { TableRow } from '../report.ts';
import { startSimulatorProcess, type SimulatorProcess } from '../simulator.ts';
import { C } from '../sizes.ts';

export interface ScenarioContext {
  /** The printed table: each scenario pushes its rows, numbered by scenario. */
  rows: TableRow[];
  /** bench/results.json: each scenario sets its figures (null until it runs). */
  results: Record<string, unknown>;
  /** Why PostgreSQL cannot be measured (its figures are then null), or null when it can. */
  pgReason: string | null;
}

export interface Scenario {
  /** Its name for `--only`. */
  name: string;
  /** The top-level figures of results.json it sets: null in every run, until it runs. */
  figures: readonly string[];
  /** Figures for information (not held to a target), listed after every scenario's `figures`. */
  infoFigures?: readonly string[];
  /** Its entries of results.json's `targets`. */
  targets: Readonly<Record<string, string>>;
  run(ctx: ScenarioContext): Promise<void>;
}

export const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);

export const best = <T extends { wallMs: number }>(runs: readonly T[]): T =>
  runs.reduce((a, b) => (b.wallMs < a.wallMs ? b : a));

export async function withSimulator<T>(
  opts: Parameters<typeof startSimulatorProcess>[0],
  fn: (sim: SimulatorProcess, date: string) => Promise<T>,
): Promise<T> {
  const sim = await startSimulatorProcess(opts);
  try {
    // The simulator's `now` is real time: its last day of history is yesterday in Shanghai.
    return await fn(sim, shanghaiYesterday());
  } finally {
    await sim.stop();
  }
}

export function pipelineFigures(r: PipelineRun) {
  return {
    wall_s: r.wallMs / 1000,
    requests: r.requests,
    rows: r.rows,
    rows_by_table: r.summary.counters.rows,
    cpu_s: r.cpuSeconds,
    // The sync process's CPU per request: what a request costs it (parsing, transforming,
    // writing), the figure that bounds a sync when the process, not the API, is busy.
    cpu_s_per_request: r.cpuSeconds / Math.max(1, r.requests),
    main_thread_cpu_s: r.mainThreadCpuSeconds,
    simulator_cpu_s: r.simulatorCpuSeconds,
    machine_busy_cpu_s: r.machineBusySeconds,
    machine_cores_busy: r.machineBusySeconds === null ? null : r.machineBusySeconds / (r.wallMs / 1000),
    mean_requests_in_flight: r.meanInflight,
    share_of_time_all_connections_busy: r.fullShare,
    phases: r.phases,
  };
}

export function bareFigures(r: BareRun) {
  return {
    wall_s: r.wallMs / 1000,
    requests: r.requests,
    non_200: r.non200,
    cpu_s: r.cpuSeconds,
    simulator_cpu_s: r.simulatorCpuSeconds,
    machine_busy_cpu_s: r.machineBusySeconds,
    machine_cores_busy: r.machineBusySeconds === null ? null : r.machineBusySeconds / (r.wallMs / 1000),
  };
}

/** Where the CPU went during a run: this process, the simulator, the whole machine; requests in flight. */
export function busy(r: PipelineRun | BareRun): string {
  const cores = r.machineBusySeconds === null ? '?' : (r.machineBusySeconds / (r.wallMs / 1000)).toFixed(2);
  const inflight =
    'meanInflight' in r
      ? `; ${r.meanInflight.toFixed(1)} requests in flight on average, all ${C} for ${(r.fullShare * 100).toFixed(0)}% of the time; ` +
        `phases s: scope ${r.phases.scope_s.toFixed(2)}, units ${r.phases.units_s.toFixed(2)}, tail ${r.phases.tail_s.toFixed(2)}`
      : '';
  const main = 'mainThreadCpuSeconds' in r ? ` (JS thread ${r.mainThreadCpuSeconds?.toFixed(2) ?? '?'})` : '';
  return `CPU s: this process ${r.cpuSeconds.toFixed(2)}${main}, simulator ${r.simulatorCpuSeconds?.toFixed(2) ?? '?'}, machine ${cores} of 2 cores busy${inflight}`;
}

export function executionsOf(r: PipelineRun): number {
  return r.summary.counters.rows.prompt_executions ?? 0;
}

/** The row of a figure not measured (PostgreSQL unreachable): the reason instead. */
export function naRow(scenario: string, reason: string): TableRow {
  return { scenario, size: reason, figure: 'null', baseline: '', ratio: 'n/a', target: '', met: 'n/a' };
}
