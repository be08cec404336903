/**
 * A pipeline-only run for profiling: the own-cost scenario's sync (simulator in its own process,
 * latency 0, C=16, default enrichments) once into a fresh DuckDB file or PostgreSQL database.
 *
 *   node --cpu-prof --cpu-prof-dir=/tmp/geo-bench-profiles --import tsx bench/profile.ts [duckdb|postgres]
 *        [--executions N] [--profile-simulator] [--no-legacy]
 *   node --import tsx bench/profile-top.ts /tmp/geo-bench-profiles/<file>.cpuprofile --window /tmp/geo-bench-profiles/window.json
 *
 * `--profile-simulator` also runs the simulator under --cpu-prof (its profile lands in the same
 * directory, written when it is stopped), to see what it costs on the same 2 cores. The timed
 * interval is written to /tmp/geo-bench-profiles/window.json for profile-top's --window.
 * `--no-legacy` turns the per-execution legacy enrichments off (as the extraction and memory
 * scenarios do).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { shanghaiYesterday } from '../src/transform/time.ts';
import { tempDir } from './paths.ts';
import { runPipeline } from './pipeline.ts';
import { createDatabase } from './postgres.ts';
import { startSimulatorProcess } from './simulator.ts';

const args = process.argv.slice(2);
const dialect = args.includes('postgres') ? 'postgres' : 'duckdb';
const at = args.indexOf('--executions');
const executionsPerDay = at >= 0 ? Number(args[at + 1]) : 2000;
const profileDir = join(tmpdir(), 'geo-bench-profiles');
const profileSimulator = args.includes('--profile-simulator');
mkdirSync(profileDir, { recursive: true });

const sim = await startSimulatorProcess({
  seed: 202,
  executionsPerDay,
  ...(profileSimulator ? { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] } : {}),
});
const tmp = tempDir('profile');
const db = dialect === 'postgres' ? await createDatabase('profile') : null;
try {
  const run = await runPipeline({
    baseUrl: sim.url,
    warehouse: db ? db.url : `duckdb:${join(tmp.dir, 'profile.duckdb')}`,
    date: shanghaiYesterday(),
    concurrency: 16,
    ...(args.includes('--no-legacy') ? { enrich: { legacySources: false, executionTimes: false } } : {}),
    simulatorCpu: sim.cpuSeconds,
  });
  writeFileSync(join(profileDir, 'window.json'), JSON.stringify(run.window) + '\n');
  process.stdout.write(
    `${dialect}: ${(run.wallMs / 1000).toFixed(2)} s, ${run.requests} requests, ${run.rows} rows; ` +
      `CPU: pipeline ${run.cpuSeconds.toFixed(2)} s (JS thread ${run.mainThreadCpuSeconds?.toFixed(2) ?? '?'} s), simulator ${run.simulatorCpuSeconds?.toFixed(2) ?? '?'} s, ` +
      `machine ${run.machineBusySeconds?.toFixed(2) ?? '?'} s; ${run.meanInflight.toFixed(1)} requests in flight on average; ` +
      `phases ${JSON.stringify(run.phases)}\n`,
  );
} finally {
  await sim.stop();
  tmp.remove();
  await db?.drop();
}
