/**
 * The memory scenario: `geo-sync sync` as its own process (the CLI, exactly as a user runs it),
 * with bench/rss-reporter.mjs preloaded to report the peak RSS on exit, against a simulator
 * process serving N executions per day. Per-execution legacy enrichments off, so the day's size, not
 * the legacy endpoints, decides the memory.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { GEO_SYNC_BIN, RSS_REPORTER, tempDir } from './paths.ts';
import { childEnv, runChild } from './child.ts';
import { BENCH_API_KEY } from './simulator.ts';

/** The enrichments of the memory scenario's sync: the per-execution legacy ones off. */
export const MEMORY_ENRICH = { legacySources: false, executionTimes: false } as const;

export interface MemoryRun {
  executionsPerDay: number;
  exitCode: number | null;
  /** The signal that ended the child, if one did (e.g. SIGTERM from the bench's own timeout). */
  signal: string | null;
  timedOut: boolean;
  wallMs: number;
  /** Peak RSS of the sync process, MB (MiB). */
  rssMb: number | null;
  /** Peaks sampled every 250 ms (MB): rss, heapUsed, heapTotal, external, arrayBuffers, nonHeap. */
  sampledPeakMb: Record<string, number> | null;
  /**
   * Resident MB by kind of mapping at the highest RSS sampled (bench/rss-reporter.mjs): V8 heap,
   * glibc's main heap, the largest anonymous mapping (DuckDB's allocator), other anonymous
   * mappings, the binaries. Null off Linux.
   */
  atPeakMb: Record<string, number> | null;
  /** CPU seconds of the sync process, all threads (user + system), or null. */
  cpuSeconds: number | null;
  requests: number | null;
  /** Rows written per table, from the summary the CLI prints. */
  rows: Record<string, number>;
  stdoutTail: string;
  stderrTail: string;
}

export type RssReport = Pick<MemoryRun, 'rssMb' | 'sampledPeakMb' | 'atPeakMb' | 'cpuSeconds'>;

/** What bench/rss-reporter.mjs wrote on the measured process's exit (all null if it wrote nothing). */
export function readRssReport(file: string): RssReport {
  try {
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    const last = JSON.parse(lines[lines.length - 1]!) as {
      maxRssKiB: number;
      sampledPeakMb?: Record<string, number>;
      atPeakMb?: Record<string, number> | null;
      cpuSeconds?: number;
    };
    return {
      rssMb: last.maxRssKiB / 1024,
      sampledPeakMb: last.sampledPeakMb ?? null,
      atPeakMb: last.atPeakMb ?? null,
      cpuSeconds: last.cpuSeconds ?? null,
    };
  } catch {
    return { rssMb: null, sampledPeakMb: null, atPeakMb: null, cpuSeconds: null };
  }
}

/** Parses the CLI's summary (src/sync/summary.ts). */
export function parseSummary(stdout: string): { requests: number | null; rows: Record<string, number> } {
  const requests = /^requests: (\d+)/m.exec(stdout);
  const rows: Record<string, number> = {};
  const at = stdout.indexOf('rows written:');
  if (at >= 0) {
    for (const line of stdout.slice(at).split('\n').slice(1)) {
      const m = /^\s+([a-z_]+)\s+(\d+)$/.exec(line);
      if (!m) break;
      rows[m[1]!] = Number(m[2]);
    }
  }
  return { requests: requests ? Number(requests[1]) : null, rows };
}

export async function runMemorySync(o: {
  baseUrl: string;
  date: string;
  executionsPerDay: number;
  concurrency: number;
  timeoutMs: number;
  /** Default: a fresh DuckDB file (the scenario); a postgres:// URL for diagnosis. */
  warehouse?: string;
  /** Default bin/geo-sync.js of this checkout; another checkout's for experiments. */
  bin?: string;
  /** Extra environment for the sync (e.g. GEO_DUCKDB_MEMORY_LIMIT), set after the bench's own. */
  env?: Record<string, string>;
}): Promise<MemoryRun> {
  const tmp = tempDir(`mem-${o.executionsPerDay}`);
  const rssFile = join(tmp.dir, 'rss.jsonl');
  const env = childEnv({
    GEO_BASE_URL: o.baseUrl,
    GEO_API_KEY: BENCH_API_KEY,
    GEO_CONCURRENCY: String(o.concurrency),
    GEO_REQUESTS_PER_SECOND: '100000',
    GEO_ENRICH_LEGACY_SOURCES: String(MEMORY_ENRICH.legacySources),
    GEO_ENRICH_EXECUTION_TIMES: String(MEMORY_ENRICH.executionTimes),
    GEO_LOG_LEVEL: 'warn',
    BENCH_RSS_FILE: rssFile,
    ...o.env,
  });
  const args = [
    '--import',
    pathToFileURL(RSS_REPORTER).href,
    o.bin ?? GEO_SYNC_BIN,
    'sync',
    '--date',
    o.date,
    '--warehouse',
    o.warehouse ?? `duckdb:${join(tmp.dir, 'memory.duckdb')}`,
    '--no-progress',
  ];
  try {
    const { exitCode, signal, timedOut, wallMs, stdout, stderr } = await runChild(args, env, {
      timeoutMs: o.timeoutMs,
    });
    const { rssMb, sampledPeakMb, atPeakMb, cpuSeconds } = readRssReport(rssFile);
    const { requests, rows } = parseSummary(stdout);
    return {
      executionsPerDay: o.executionsPerDay,
      exitCode,
      signal,
      timedOut,
      wallMs,
      rssMb,
      sampledPeakMb,
      atPeakMb,
      cpuSeconds,
      requests,
      rows,
      stdoutTail: stdout.slice(-2000),
      stderrTail: stderr.slice(-2000),
    };
  } finally {
    tmp.remove();
  }
}
