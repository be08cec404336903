/**
 * A first read as a user runs it: `geo-sync backfill` of scenario 7's eight days (~1,060
 * executions over ~320 units, every enrichment on) as a child process, from a shell's point of
 * view (node's start, DuckDB's load, the migrations of a fresh file, the run, the last refresh
 * of the aggregates and the checkpoint when the file closes), against an API that answers in
 * 50 +/- 10 ms (the simulator in a process of its own), C=16.
 *
 * The figure is the wall time over the least any client could take for the requests the run
 * asked (requests x 50 ms / C): what is left is everything that is not waiting for the API. The
 * requests are the run's own count (its summary line), so a change that asks fewer requests
 * shrinks the bound with them: the ratio is the overhead, not the request count.
 */
import { join } from 'node:path';
import { addDays, shanghaiYesterday } from '../src/time.ts';
import { parseSummary } from './memory.ts';
import { GEO_SYNC_BIN, tempDir } from './paths.ts';
import { childEnv, runChild } from './child.ts';
import { BENCH_API_KEY, startSimulatorProcess } from './simulator.ts';
import { C, FIRST_READ } from './sizes.ts';

export interface CliFirstReadRun {
  wallMs: number;
  requests: number;
  /** wallMs / (requests x latency / C). */
  ratio: number;
}

export interface CliFirstRead {
  latencyMs: number;
  jitterMs: number;
  concurrency: number;
  executions: number;
  runs: CliFirstReadRun[];
  /** The median run's ratio. */
  ratio: number;
}

/** `runs` first reads, each into a fresh DuckDB file, from one simulator. */
export async function runCliFirstRead(o: {
  latencyMs: number;
  jitterMs: number;
  runs: number;
}): Promise<CliFirstRead> {
  const sim = await startSimulatorProcess({
    seed: FIRST_READ.seed,
    days: FIRST_READ.days,
    executionsPerDay: FIRST_READ.executionsPerDay,
    latencyMs: o.latencyMs,
    latencyJitterMs: o.jitterMs,
  });
  const to = shanghaiYesterday();
  const from = addDays(to, -(FIRST_READ.days - 1));
  const tmp = tempDir('first-read-cli');
  const out: CliFirstRead = {
    latencyMs: o.latencyMs,
    jitterMs: o.jitterMs,
    concurrency: C,
    executions: 0,
    runs: [],
    ratio: 0,
  };
  try {
    for (let i = 0; i < o.runs; i++) {
      const env = childEnv({
        GEO_BASE_URL: sim.url,
        GEO_API_KEY: BENCH_API_KEY,
        GEO_CONCURRENCY: String(C),
        // The API's own pace, not a client-side limit: the bound is the latency alone.
        GEO_REQUESTS_PER_SECOND: '100000',
        GEO_LOG_LEVEL: 'warn',
      });
      const args = [
        GEO_SYNC_BIN,
        'backfill',
        '--from',
        from,
        '--to',
        to,
        '--warehouse',
        `duckdb:${join(tmp.dir, `first-read-${i}.duckdb`)}`,
        '--no-progress',
      ];
      const {
        exitCode: code,
        timedOut,
        wallMs,
        stdout,
        stderr,
      } = await runChild(args, env, {
        timeoutMs: FIRST_READ.cliTimeoutMs,
      });
      const { requests, rows } = parseSummary(stdout);
      if (code !== 0 || requests === null)
        throw new Error(
          `first read (CLI): ${timedOut ? 'timed out' : `exit ${code}`}, no summary\n${stdout.slice(-2000)}\n${stderr}`,
        );
      out.executions = rows.prompt_executions ?? 0;
      out.runs.push({ wallMs, requests, ratio: wallMs / ((requests * o.latencyMs) / C) });
    }
    const sorted = [...out.runs].sort((a, b) => a.ratio - b.ratio);
    out.ratio = sorted[Math.floor((sorted.length - 1) / 2)]!.ratio;
    return out;
  } finally {
    await sim.stop();
    tmp.remove();
  }
}
