/**
 * The memory floor of a DuckDB sync (the memory scenario's companion): the same day's rows, read
 * and transformed here by the real pipeline with its execution writes skipped, are handed batch by
 * batch to a child process, bench/duckdb-floor.mjs, that only stores them in a fresh DuckDB
 * warehouse with the product's settings (the Appender straight into the keyed tables, one
 * transaction per batch the sync's writer would commit, garbage collected after each). The child's
 * peak RSS is what DuckDB costs in a Node process with the least JavaScript around it: a sync of
 * the same day holds all of it plus the pipeline.
 *
 * The child is paced by this pipeline, about as fast as the sync itself runs (it waits on the
 * child's pipe, as the sync's reads wait on its writer).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { readRssReport, type RssReport } from './memory.ts';
import { BENCH_DIR, RSS_REPORTER, tempDir } from './paths.ts';
import { runPipeline, type EnrichOverrides } from './pipeline.ts';

export interface FloorRun extends RssReport {
  exitCode: number | null;
  wallMs: number;
  /** Rows per table as the child's DuckDB counts them at the end. */
  rows: Record<string, number>;
  /** The transactions that stored them, and the most executions in one. */
  transactions: { count: number; maxExecutions: number } | null;
  requests: number;
  stderrTail: string;
}

export async function runDuckdbFloor(o: {
  baseUrl: string;
  date: string;
  concurrency: number;
  enrich: EnrichOverrides;
}): Promise<FloorRun> {
  const tmp = tempDir('duckdb-floor');
  const rssFile = join(tmp.dir, 'rss.jsonl');
  try {
    // GEO_FLOOR_MEMORY_LIMIT, when set for the bench, reaches the child (another pool size).
    const env: NodeJS.ProcessEnv = { ...process.env, BENCH_RSS_FILE: rssFile };
    const t0 = performance.now();
    const child = spawn(
      process.execPath,
      [
        '--expose-gc',
        '--import',
        pathToFileURL(RSS_REPORTER).href,
        join(BENCH_DIR, 'duckdb-floor.mjs'),
        join(tmp.dir, 'floor.duckdb'),
      ],
      { env, stdio: ['pipe', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-4000)));
    // A child that died mid-run closes its pipe: reported by its exit code and stderr, not EPIPE.
    child.stdin.on('error', () => undefined);
    const closed = once(child, 'close') as Promise<[number | null, string | null]>;
    let requests = 0;
    try {
      const run = await runPipeline({
        baseUrl: o.baseUrl,
        // Scope and the run log only: the execution batches go to the child.
        warehouse: `duckdb:${join(tmp.dir, 'scope.duckdb')}`,
        date: o.date,
        concurrency: o.concurrency,
        enrich: o.enrich,
        skipWrites: true,
        onExecutionBatch: async (batch) => {
          const ended = () => new Error(`the floor's DuckDB process ended: ${stderr.trim()}`);
          if (child.exitCode !== null) throw ended();
          // A child that dies while its pipe is full never drains it: wait for either.
          if (!child.stdin.write(`${JSON.stringify(batch)}\n`))
            await Promise.race([once(child.stdin, 'drain'), closed]);
          if (child.exitCode !== null) throw ended();
        },
      });
      requests = run.requests;
    } finally {
      // The child stores what it has and exits; it is gone before its directory is removed.
      child.stdin.end();
      await closed;
    }
    const [exitCode] = await closed;
    const wallMs = performance.now() - t0;
    let report: Pick<FloorRun, 'rows' | 'transactions'> = { rows: {}, transactions: null };
    try {
      report = { ...report, ...(JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as object) };
    } catch {
      // No report: the child failed (exitCode and stderrTail say how).
    }
    return {
      ...readRssReport(rssFile),
      ...report,
      exitCode,
      wallMs,
      requests,
      stderrTail: stderr.slice(-2000),
    };
  } finally {
    tmp.remove();
  }
}
