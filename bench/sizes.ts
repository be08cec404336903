/**
 * How large each scenario runs. `--smoke` runs every scenario at a tiny size, so that the test
 * suite sees at once that each still runs (test/bench/smoke.test.ts); its figures mean nothing.
 */
export const SMOKE = process.argv.includes('--smoke');

export const C = 16;
export const EXTRACTION = { executionsPerDay: SMOKE ? 60 : 2000, latencyMs: 50, jitterMs: 10, seed: 101 };
/** Many small units: ~400 (platform task, day) units of 2-10 executions (mean 6), all enrichments on. */
export const SMALL_UNITS = {
  units: SMOKE ? 12 : 400,
  // --smoke: 2 a unit (the fewest that still gives most units more than one execution).
  meanExecutions: SMOKE ? 2 : 6,
  latencyMs: 50,
  jitterMs: 10,
  seed: 104,
};
// Three pairs: on this shared 2-core VM the best of two still moved by +-0.3 between runs of the bench.
export const OWN_COST = { executionsPerDay: SMOKE ? 60 : 2000, seed: 202, pairs: SMOKE ? 1 : 3 };
export const LOAD = {
  executions: SMOKE ? 400 : 10_000,
  batchSize: 200,
  repeats: SMOKE ? 1 : 2,
  /** A first read of many small units: the same executions over this many (platform task, day) units. */
  smallUnits: SMOKE ? 40 : 1_000,
};
export const MEMORY = {
  small: SMOKE ? 100 : 10_000,
  large: 100_000,
  /** The days synced: --smoke only the smaller (the larger runs the same code, on more executions). */
  get sizes(): number[] {
    return SMOKE ? [this.small] : [this.small, this.large];
  },
  concurrency: 32,
  seed: 303,
  timeoutMs: 8 * 60_000,
};
// --smoke: a window of 2 days, the fewest with a day to backfill besides the re-synced one (each
// day is ~50 units whatever its executions, and units are what a run's time goes to).
export const NIGHTLY = {
  seed: 606,
  days: SMOKE ? 2 : 4,
  executionsPerDay: SMOKE ? 40 : 500,
  lookbackDays: SMOKE ? 1 : 3,
  changedShare: 0.15,
  /** Nights run again with and without the per-day aggregates (what keeping them costs). */
  rollupPairs: SMOKE ? 1 : 3,
  /**
   * Those nights again at an API's latency (50 +/- 10 ms an answer); --smoke leaves them out:
   * the same runs, only the simulator slower.
   */
  rollupsAtLatency: !SMOKE,
};
/** A first read shaped like a real account's medium day: ~1,060 executions over ~320 units (a run per day), and its nightly. */
export const FIRST_READ = {
  seed: 30,
  // --smoke: 2 days, a first read of each and a nightly over both (units are what the time goes to).
  days: SMOKE ? 2 : 8,
  executionsPerDay: SMOKE ? 20 : 133,
  lookbackDays: SMOKE ? 1 : 3,
  changedShare: 0.15,
  /** The first read again with and without the aggregates, alternated, this many times each. */
  rollupPairs: SMOKE ? 1 : 3,
  /** The first read run as a user runs it (`geo-sync backfill`), at an API's latency, this many times. */
  cliRuns: SMOKE ? 1 : 3,
  cliLatencyMs: 50,
  cliJitterMs: 10,
  /** A run that takes longer has hung (one takes ~18 s here). */
  cliTimeoutMs: 5 * 60_000,
};
/**
 * A year of a large account: of 2,400 executions a day (a real large account's size) and of
 * 10,000 (the target's); each query timed warm `runs` times, `beforeRuns` against the old views.
 */
export const DASHBOARDS = SMOKE
  ? // Two days: the synced day and one grown from it (what the growth and the ranged queries need).
    [{ executionsPerDay: 400, days: 2, runs: 1, beforeRuns: 1, beforeTimeoutMs: 60_000 }]
  : [
      { executionsPerDay: 2400, days: 365, runs: 20, beforeRuns: 3, beforeTimeoutMs: 60_000 },
      { executionsPerDay: 10_000, days: 365, runs: 20, beforeRuns: 2, beforeTimeoutMs: 60_000 },
    ];
/**
 * Every read-side command on a year of the dashboards' account of 2,400 executions a day (a
 * real medium account had ~670k executions, ~5M sources); the export and report of the last
 * `recentDays` days besides the whole year.
 */
export const COMMANDS = SMOKE
  ? [
      {
        executionsPerDay: 400,
        // Two days: a ranged command (the last day) differs from a whole one.
        days: 2,
        recentDays: 1,
        timeoutMs: 3 * 60_000,
        // verify asks the API at its polite defaults (20 requests a second): 5 executions, not 50.
        verifySample: 5,
        // One of each command (the ranged and the whole exports differ only in their days).
        keys: ['refresh', 'check', 'export-parquet-1', 'export-csv-year', 'report-1', 'state', 'verify'],
      },
    ]
  : [{ executionsPerDay: 2400, days: 365, recentDays: 30, timeoutMs: 30 * 60_000 }];
