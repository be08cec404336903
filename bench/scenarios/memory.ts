/**
 * Scenario 4, memory: peak RSS of `geo-sync sync` (a child process) on a day of 10,000 and of
 * 100,000 executions, into DuckDB and into PostgreSQL (bench/memory.ts). Scenario 4b, for
 * information: the floor under the DuckDB figures, the same batches stored by a process that
 * does nothing else (bench/duckdb-floor.ts).
 */
import { runDuckdbFloor } from '../duckdb-floor.ts';
import { MEMORY_ENRICH, runMemorySync, type MemoryRun } from '../memory.ts';
import { createDatabase } from '../postgres.ts';
import { int, met, ratio, seconds, type TableRow } from '../report.ts';
import { MEMORY } from '../sizes.ts';
import { log, naRow, withSimulator, type Scenario } from './common.ts';

const TARGET = {
  /** The larger day's peak RSS against the smaller's: memory does not grow with the day. */
  rssGrowth: 1.3,
  /** Either day's peak RSS, MB. */
  rssMb: 300,
};

/**
 * `rss 482 = largest anonymous mapping 150 (of 190 mapped) + other anonymous 160 (holding the V8
 * heap, heapTotal 126) + glibc [heap] 25 + ...`, from bench/rss-reporter.mjs's split.
 */
function residentSplit(m: Record<string, number>): string {
  const f = (k: string) => (m[k] ?? 0).toFixed(0);
  return (
    `rss ${f('rss')} = largest anonymous mapping ${f('anonLargest')} (of ${f('anonLargestSize')} mapped) ` +
    `+ other anonymous ${f('anonOther')} (holding the V8 heap, heapTotal ${f('v8HeapTotal')}) ` +
    `+ glibc [heap] ${f('glibcHeap')} + node ${f('node')} + libduckdb ${f('libduckdb')} + other named mappings ${f('otherNamed')}`
  );
}

async function runMemory(
  rows: TableRow[],
  results: Record<string, unknown>,
  pgReason: string | null,
): Promise<void> {
  const out: Record<string, unknown> = {};
  results.memory = out;
  for (const dialect of ['duckdb', 'postgres'] as const) {
    const label = dialect === 'duckdb' ? 'DuckDB' : 'PostgreSQL';
    // The original keys stay the DuckDB figures; PostgreSQL's carry a suffix.
    const suffix = dialect === 'duckdb' ? '' : '_postgres';
    if (dialect === 'postgres' && pgReason) {
      out[dialect] = { error: pgReason };
      rows.push(naRow(`4 memory (${label})`, pgReason));
      continue;
    }
    const runs: MemoryRun[] = [];
    for (const n of MEMORY.sizes) {
      log(
        `memory (${label}): ${int(n)} executions/day, geo-sync sync in a child process, C=${MEMORY.concurrency}`,
      );
      const db = dialect === 'postgres' ? await createDatabase(`memory_${n}`) : null;
      try {
        const run = await withSimulator({ seed: MEMORY.seed, executionsPerDay: n }, (sim, date) =>
          runMemorySync({
            baseUrl: sim.url,
            date,
            executionsPerDay: n,
            concurrency: MEMORY.concurrency,
            timeoutMs: MEMORY.timeoutMs,
            ...(db ? { warehouse: db.url } : {}),
          }),
        );
        runs.push(run);
        log(
          `  exit ${run.exitCode ?? run.signal}${run.timedOut ? ' (timed out)' : ''} in ${seconds(run.wallMs)} (CPU ${run.cpuSeconds?.toFixed(1) ?? '?'} s); peak RSS ${run.rssMb?.toFixed(1) ?? '?'} MB; ${run.requests ?? '?'} requests` +
            (run.atPeakMb ? `; resident MB at the sampled peak: ${residentSplit(run.atPeakMb)}` : ''),
        );
        if (run.exitCode !== 0) log(`  sync failed:\n${run.stdoutTail}\n${run.stderrTail}`);
      } finally {
        await db?.drop().catch(() => undefined);
      }
    }
    // --smoke runs the smaller day only (the larger runs the same code on more executions).
    const [small, large] = runs as [MemoryRun, MemoryRun | undefined];
    const ok = (r: MemoryRun) => r.exitCode === 0 && r.rssMb !== null;
    const rssSmall = ok(small) ? small.rssMb : null;
    const rssLarge = large && ok(large) ? large.rssMb : null;
    const growth = rssSmall !== null && rssLarge !== null ? rssLarge / rssSmall : null;
    results[`rss_mb_10k${suffix}`] = rssSmall;
    results[`rss_mb_100k${suffix}`] = rssLarge;
    results[`rss_ratio_100k_10k${suffix}`] = growth;
    const describe = (r: MemoryRun) => ({
      executions_per_day: r.executionsPerDay,
      exit_code: r.exitCode,
      signal: r.signal,
      timed_out: r.timedOut,
      wall_s: r.wallMs / 1000,
      peak_rss_mb: r.rssMb,
      sampled_peak_mb: r.sampledPeakMb,
      resident_at_peak_mb: r.atPeakMb,
      cpu_s: r.cpuSeconds,
      requests: r.requests,
      rows: r.rows,
      ...(r.exitCode !== 0 ? { stdout_tail: r.stdoutTail, stderr_tail: r.stderrTail } : {}),
    });
    out[dialect] = {
      small: describe(small),
      large: large ? describe(large) : null,
      growth,
      concurrency: MEMORY.concurrency,
      enrichments: 'defaults except legacySources=false, executionTimes=false',
      target: `larger <= ${TARGET.rssGrowth} x smaller and < ${TARGET.rssMb} MB`,
    };
    const sizeOf = (r: MemoryRun) =>
      `${int(r.rows.prompt_executions ?? 0)} exec, ${int(r.rows.execution_sources ?? 0)} sources, ${int(r.rows.product_cards ?? 0)} cards, ${int(r.requests ?? 0)} req in ${seconds(r.wallMs)}`;
    const under = (mb: number | null) => (mb === null ? null : mb < TARGET.rssMb);
    rows.push({
      scenario: `4 memory 10k/day (${label})`,
      size: ok(small)
        ? sizeOf(small)
        : `FAILED (exit ${small.exitCode ?? small.signal}) after ${seconds(small.wallMs)}`,
      figure: rssSmall === null ? 'n/a' : `${rssSmall.toFixed(1)} MB peak RSS`,
      baseline: '',
      ratio: '',
      target: `< ${TARGET.rssMb} MB`,
      met: met(under(rssSmall)),
    });
    const largeOk =
      growth === null || rssLarge === null ? null : growth <= TARGET.rssGrowth && rssLarge < TARGET.rssMb;
    if (large)
      rows.push({
        scenario: `4 memory 100k/day (${label})`,
        size: ok(large)
          ? sizeOf(large)
          : `FAILED (${large.timedOut ? 'timed out, ' : ''}exit ${large.exitCode ?? large.signal}) after ${seconds(large.wallMs)}`,
        figure: rssLarge === null ? 'n/a' : `${rssLarge.toFixed(1)} MB peak RSS`,
        baseline: rssSmall === null ? 'n/a' : `${rssSmall.toFixed(1)} MB (10k)`,
        ratio: ratio(growth),
        target: `<= ${TARGET.rssGrowth}x, < ${TARGET.rssMb} MB`,
        met: met(largeOk),
      });
    if (dialect === 'duckdb') await duckdbFloor(rows, results, out);
  }
}

/**
 * The floor under the DuckDB figures: each day's batches, from the real pipeline, stored by a
 * child process that does nothing else (bench/duckdb-floor.ts). What DuckDB in the process costs
 * whatever the pipeline does.
 */
async function duckdbFloor(
  rows: TableRow[],
  results: Record<string, unknown>,
  out: Record<string, unknown>,
): Promise<void> {
  const floors: Record<string, unknown> = {};
  out.duckdb_floor = floors;
  const peaks: (number | null)[] = [];
  for (const n of MEMORY.sizes) {
    log(
      `memory floor (DuckDB alone): ${int(n)} executions/day, the same batches stored by a process that only stores them`,
    );
    const run = await withSimulator({ seed: MEMORY.seed, executionsPerDay: n }, (sim, date) =>
      runDuckdbFloor({ baseUrl: sim.url, date, concurrency: MEMORY.concurrency, enrich: MEMORY_ENRICH }),
    );
    const ok = run.exitCode === 0 && run.rssMb !== null;
    const rowCount = Object.values(run.rows).reduce((a, b) => a + b, 0);
    log(
      `  exit ${run.exitCode} in ${seconds(run.wallMs)} (CPU ${run.cpuSeconds?.toFixed(1) ?? '?'} s); peak RSS ${run.rssMb?.toFixed(1) ?? '?'} MB; ${int(rowCount)} rows in ${run.transactions?.count ?? '?'} transactions of up to ${run.transactions?.maxExecutions ?? '?'} executions` +
        (run.atPeakMb ? `; resident MB at the sampled peak: ${residentSplit(run.atPeakMb)}` : ''),
    );
    if (!ok) log(`  floor failed:\n${run.stderrTail}`);
    peaks.push(ok ? run.rssMb : null);
    const key = n === MEMORY.small ? 'rss_mb_10k_duckdb_floor' : 'rss_mb_100k_duckdb_floor';
    results[key] = ok ? run.rssMb : null;
    floors[String(n)] = {
      executions_per_day: n,
      exit_code: run.exitCode,
      wall_s: run.wallMs / 1000,
      peak_rss_mb: run.rssMb,
      sampled_peak_mb: run.sampledPeakMb,
      resident_at_peak_mb: run.atPeakMb,
      cpu_s: run.cpuSeconds,
      requests: run.requests,
      rows: run.rows,
      transactions: run.transactions,
      note: "a child process that only stores the sync's batches (Appender into the keyed tables, one transaction per batch, garbage collected after each), the product's DuckDB settings",
    };
    rows.push({
      scenario: `4 memory floor ${n === MEMORY.small ? '10k' : '100k'}/day (DuckDB alone)`,
      size: ok
        ? `${int(rowCount)} rows, the same batches, stored by a process that only stores them`
        : `FAILED (exit ${run.exitCode})`,
      figure: ok ? `${run.rssMb!.toFixed(1)} MB peak RSS` : 'n/a',
      baseline: '',
      ratio: '',
      target: 'info',
      met: 'n/a',
    });
  }
  const [small, large] = peaks;
  results.rss_ratio_100k_10k_duckdb_floor = small && large ? large / small : null;
}

export const memory: Scenario = {
  name: 'memory',
  // The original keys are the DuckDB figures; PostgreSQL's carry a suffix.
  figures: [
    'rss_mb_10k',
    'rss_mb_100k',
    'rss_ratio_100k_10k',
    'rss_mb_10k_postgres',
    'rss_mb_100k_postgres',
    'rss_ratio_100k_10k_postgres',
  ],
  // The floor under DuckDB's memory.
  infoFigures: ['rss_mb_10k_duckdb_floor', 'rss_mb_100k_duckdb_floor', 'rss_ratio_100k_10k_duckdb_floor'],
  targets: { rss: `100k <= ${TARGET.rssGrowth} x 10k and < ${TARGET.rssMb} MB` },
  run: ({ rows, results, pgReason }) => runMemory(rows, results, pgReason),
};
