/**
 * `npm run bench`: geo-sync's performance figures against their bounds and baselines. Each
 * scenario lives in bench/scenarios/ with its figures, targets and table rows:
 *
 * 1. extraction, small-units: wall time of a sync over a simulator with 50 +/- 10 ms latency,
 *    against the bound `requests x 50 ms / concurrency` (one day of few large units; ~400 units
 *    of 3-9 executions with every enrichment on).
 * 2. own-cost: the full pipeline against a bare undici loop fetching the same URLs at the same
 *    concurrency, simulator latency 0, into DuckDB and PostgreSQL; 5. its re-sync of the same day.
 * 3. load: rows/s through Warehouse.writeExecutionBatch against the raw path on the same rows.
 * 4. memory: peak RSS of `geo-sync sync` on a day of 10,000 and of 100,000 executions.
 * 6. nightly: a scheduled run after ~15% of the look-back window changed, against a run that
 *    reads only what changed; what keeping the per-day aggregates costs the night.
 * 7. first-read: the requests of a first read of ~1,060 executions over ~320 units, by category.
 * 8. dashboards: each dashboard query on a year of a large account, against the views as they were.
 * 9. commands: every command that reads the warehouse, run as a user runs it on that year.
 *
 * The simulator always runs as its own process. Prints a table and writes bench/results.json.
 * `npm run bench -- --only load,own-cost` runs a subset (extraction, small-units, own-cost, load, memory,
 * nightly, first-read, dashboards, commands); `--smoke` runs each at a tiny size (the test suite's check that all still
 * run), `--results FILE` writes the figures there instead of bench/results.json.
 */
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { RESULTS_FILE } from './paths.ts';
import { postgresUnavailableReason } from './postgres.ts';
import { formatTable, seconds, type TableRow } from './report.ts';
import { commands } from './scenarios/commands.ts';
import { log, type Scenario } from './scenarios/common.ts';
import { dashboards } from './scenarios/dashboards.ts';
import { extraction } from './scenarios/extraction.ts';
import { firstRead } from './scenarios/first-read.ts';
import { load } from './scenarios/load.ts';
import { memory } from './scenarios/memory.ts';
import { nightly } from './scenarios/nightly.ts';
import { ownCost } from './scenarios/own-cost.ts';
import { smallUnits } from './scenarios/small-units.ts';
import { SMOKE } from './sizes.ts';

/** Every scenario, in the order `--only` lists them and `scenarios_run` reports them. */
const SCENARIOS: readonly Scenario[] = [
  extraction,
  smallUnits,
  ownCost,
  load,
  memory,
  nightly,
  firstRead,
  dashboards,
  commands,
];

/**
 * The order they run in: own-cost before nightly, so `resync_ratio` is own-cost's re-sync when
 * both run (nightly fills it only when it is still null).
 */
const RUN_ORDER: readonly Scenario[] = [
  load,
  ownCost,
  extraction,
  smallUnits,
  memory,
  nightly,
  firstRead,
  dashboards,
  commands,
];

const NAMES = SCENARIOS.map((s) => s.name);

/** `--only a,b`: the scenarios to run (every one without it). */
function selected(): Set<string> {
  const i = process.argv.indexOf('--only');
  if (i < 0) return new Set(NAMES);
  const names = (process.argv[i + 1] ?? '').split(',').filter(Boolean);
  const bad = names.filter((n) => !NAMES.includes(n));
  if (bad.length || names.length === 0) {
    throw new Error(`--only expects a comma-separated list of ${NAMES.join(', ')}; got ${names.join(',')}`);
  }
  return new Set(names);
}

/** `--results FILE`: where results.json goes (the smoke test keeps the real one). */
function resultsFile(): string {
  const i = process.argv.indexOf('--results');
  return i < 0 ? RESULTS_FILE : process.argv[i + 1]!;
}

async function main(): Promise<void> {
  const only = selected();
  const started = Date.now();
  const rows: TableRow[] = [];
  // Every scenario's figures are in every results.json, null when it did not run; then the
  // figures for information (the ceiling of any load-side change, the floor under DuckDB's memory).
  const results: Record<string, unknown> = Object.fromEntries(
    [...SCENARIOS.flatMap((s) => s.figures), ...SCENARIOS.flatMap((s) => s.infoFigures ?? [])].map((k) => [
      k,
      null,
    ]),
  );
  const pgReason = await postgresUnavailableReason();
  if (pgReason) log(`${pgReason}: PostgreSQL figures will be null`);
  const errors: string[] = [];
  for (const scenario of RUN_ORDER) {
    if (!only.has(scenario.name)) continue;
    const t0 = Date.now();
    try {
      await scenario.run({ rows, results, pgReason });
    } catch (e) {
      const msg = `${scenario.name}: ${(e as Error).stack ?? String(e)}`;
      errors.push(msg);
      log(`FAILED ${msg}`);
    }
    log(`${scenario.name} took ${seconds(Date.now() - t0)}`);
  }

  // By scenario number; rows of one scenario keep their order (stable sort).
  rows.sort((a, b) => parseInt(a.scenario, 10) - parseInt(b.scenario, 10));
  const totalS = (Date.now() - started) / 1000;
  Object.assign(results, {
    node: process.version,
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, cpu_model: cpus()[0]?.model ?? null, platform: process.platform },
    postgres: pgReason ?? 'available',
    scenarios_run: [...only],
    total_s: totalS,
    targets: Object.assign({}, ...SCENARIOS.map((s) => s.targets)) as Record<string, string>,
    smoke: SMOKE,
    errors,
  });
  const file = resultsFile();
  writeFileSync(file, JSON.stringify(results, null, 2) + '\n');
  process.stdout.write(`\n${formatTable(rows)}\n\n`);
  process.stdout.write(`node ${process.version}, ${cpus().length} cores; total ${totalS.toFixed(0)} s; `);
  process.stdout.write(
    `figures in ${file}${SMOKE ? ' (--smoke: tiny sizes, the figures mean nothing)' : ''}\n`,
  );
  if (errors.length) {
    process.stdout.write(`errors:\n${errors.map((e) => `  ${e.split('\n')[0]}`).join('\n')}\n`);
    process.exitCode = 1;
  }
}

await main();
