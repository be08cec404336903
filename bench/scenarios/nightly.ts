/**
 * Scenario 6, nightly: backfill 4 days, change ~15% of their executions, one scheduled run:
 * requests per execution of its window, against a run that reads only what changed
 * (bench/nightly.ts). Its own re-sync ratio (change detection on), and what keeping the per-day
 * aggregates costs the night: the same night again with and without them.
 */
import { runNightly } from '../nightly.ts';
import { int, met, ratio, seconds, type TableRow } from '../report.ts';
import { NIGHTLY } from '../sizes.ts';
import { log, type Scenario } from './common.ts';

const TARGET = {
  /** The night's requests against what a run reading only the changed executions asks. */
  nightlyRatio: 1.2,
  /** A re-sync of an unchanged day against its first sync. */
  resyncRatio: 0.3,
  /**
   * A nightly run with the per-day aggregates against the same night without them: at latency 0
   * (the writes are all there is), and at 50 ms an answer, where the writes overlap the waits and
   * the aggregates should all but vanish.
   */
  nightlyRollups: 1.05,
  nightlyRollupsAtLatency: 1.02,
};

async function runNightlyScenario(rows: TableRow[], results: Record<string, unknown>): Promise<void> {
  log(
    `nightly: ${NIGHTLY.days} days x ${int(NIGHTLY.executionsPerDay)} executions, ~${NIGHTLY.changedShare * 100}% changed, DuckDB`,
  );
  const r = await runNightly(NIGHTLY.rollupPairs);
  log(
    `nightly: ${int(r.requests)} requests for ${int(r.executions)} executions (${int(r.changed)} changed; ` +
      `${int(r.summary.read)} read, ${int(r.summary.unchanged)} unchanged); ideal ${int(Math.round(r.idealRequests))}`,
  );
  results.nightly_requests_per_execution = r.nightlyRequestsPerExecution;
  results.nightly_ratio = r.nightlyRatio;
  // The own-cost scenario's re-sync is measured too when it runs; this one has change detection on.
  results.resync_ratio_nightly = r.resync.ratio;
  results.resync_ratio ??= r.resync.ratio;
  results.nightly = {
    ...r,
    note: "ideal = the run's own non-execution requests (scope, list pages, account data; task/prompts only where a stored execution is no longer listed: none) + per changed execution the backfill's requests per execution besides products and screenshot, a screenshot request where its item names one, a products request but one per unsupported platform task",
  };
  rows.push({
    scenario: '6 nightly (DuckDB)',
    size: `${int(r.executions)} exec in window, ${int(r.changed)} changed`,
    figure: `${r.nightlyRequestsPerExecution.toFixed(2)} req/exec (${int(r.requests)})`,
    baseline: `${int(Math.round(r.idealRequests))} ideal req`,
    ratio: ratio(r.nightlyRatio),
    target: `<= ${TARGET.nightlyRatio}`,
    met: met(r.nightlyRatio <= TARGET.nightlyRatio),
  });
  if (r.rollupsAtLatency) results.nightly_rollups_ratio_latency_50ms = r.rollupsAtLatency.ratio;
  for (const [label, cost, target] of [
    ['latency 0', r.rollups, TARGET.nightlyRollups],
    ['latency 50 ms', r.rollupsAtLatency, TARGET.nightlyRollupsAtLatency],
  ] as const) {
    if (!cost) continue;
    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
    rows.push({
      scenario: '6 nightly, per-day aggregates (DuckDB)',
      size: `the same night ${cost.withMs.length}x each way, alternated, ${label}`,
      figure: `${seconds(med(cost.withMs))} with`,
      baseline: `${seconds(med(cost.withoutMs))} without`,
      ratio: ratio(cost.ratio),
      target: `<= ${target}`,
      met: met(cost.ratio <= target),
    });
  }
  if (r.rollups) results.nightly_rollups_ratio = r.rollups.ratio;
  rows.push({
    scenario: '6 nightly re-sync (DuckDB)',
    size: `${int(r.resync.executions)} exec, unchanged day, --force; ${int(r.resync.secondRequests)} vs ${int(r.resync.firstRequests)} req`,
    figure: `${seconds(r.resync.secondMs)} second`,
    baseline: `${seconds(r.resync.firstMs)} first`,
    ratio: ratio(r.resync.ratio),
    target: `<= ${TARGET.resyncRatio}`,
    met: met(r.resync.ratio <= TARGET.resyncRatio),
  });
}

export const nightly: Scenario = {
  name: 'nightly',
  figures: [
    'nightly_requests_per_execution',
    'nightly_ratio',
    'resync_ratio_nightly',
    'nightly_rollups_ratio',
    'nightly_rollups_ratio_latency_50ms',
  ],
  targets: {
    resync_ratio: `<= ${TARGET.resyncRatio}`,
    nightly_ratio: `<= ${TARGET.nightlyRatio}`,
    nightly_rollups_ratio: `<= ${TARGET.nightlyRollups}`,
    nightly_rollups_ratio_latency_50ms: `<= ${TARGET.nightlyRollupsAtLatency}`,
  },
  run: ({ rows, results }) => runNightlyScenario(rows, results),
};
