/**
 * Scenario 8, dashboards: a year of an account of 2,400 and of 10,000 executions a day, grown from
 * a synced day on both warehouses; the aggregates refreshed (timed), proven equal to a
 * recomputation, and each dashboard query timed warm against the views now and as they were
 * before the per-day aggregates (bench/dashboards.ts).
 */
import { runDashboards, type DashboardRun } from '../dashboards.ts';
import { int, met, ratio, seconds, type TableRow } from '../report.ts';
import { DASHBOARDS } from '../sizes.ts';
import { log, naRow, type Scenario } from './common.ts';

/** Every dashboard query warm (p95), ms, by executions a day: right after the run, JIT as set. */
const dashboardMs = (executionsPerDay: number) => (executionsPerDay <= 2400 ? 300 : 600);

async function runDashboardsScenario(
  rows: TableRow[],
  results: Record<string, unknown>,
  pgReason: string | null,
): Promise<void> {
  const runs: DashboardRun[] = [];
  // --dashboards-per-day N[,N]: only the years of those sizes (a year of 10,000 a day takes long).
  const i = process.argv.indexOf('--dashboards-per-day');
  const only = i < 0 ? null : new Set((process.argv[i + 1] ?? '').split(',').map(Number));
  const sizes = only ? DASHBOARDS.filter((d) => only.has(d.executionsPerDay)) : DASHBOARDS;
  if (only && sizes.length === 0)
    throw new Error(
      `--dashboards-per-day expects some of ${DASHBOARDS.map((d) => d.executionsPerDay).join(',')}`,
    );
  // --dashboards-on duckdb|postgres: one warehouse only (its year alone takes long).
  const on = process.argv.indexOf('--dashboards-on');
  const dialects = (['duckdb', 'postgres'] as const).filter((d) => on < 0 || process.argv[on + 1] === d);
  if (dialects.length === 0) throw new Error('--dashboards-on expects duckdb or postgres');
  for (const size of sizes) {
    for (const dialect of dialects) {
      const label = `${dialect === 'duckdb' ? 'DuckDB' : 'PostgreSQL'}, ${int(size.executionsPerDay)}/day`;
      if (dialect === 'postgres' && pgReason) {
        rows.push(naRow(`8 dashboards (${label})`, pgReason));
        continue;
      }
      log(`dashboards (${label}): ${size.days} days`);
      const r = await runDashboards(dialect, size, log);
      runs.push(r);
      const bound = dashboardMs(size.executionsPerDay);
      const worst = Math.max(...r.queries.map((q) => q.p95));
      const unequal = r.queries.filter((q) => q.equal === false).length;
      rows.push({
        scenario: `8 dashboards (${label})`,
        size: `${int(r.rows.prompt_executions!)} exec, ${int(r.rows.execution_sources!)} sources; refresh ${seconds(r.refreshMs)}, rollups_match ${r.mismatches} rows`,
        figure: `slowest query p95 ${worst.toFixed(0)} ms`,
        baseline: `${r.queries.filter((q) => q.beforeTimedOut).length} before > ${size.beforeTimeoutMs / 1000} s`,
        ratio: `${r.queries.length - unequal}/${r.queries.length} equal`,
        target: `< ${bound} ms`,
        met: met(worst < bound && r.mismatches === 0 && unequal === 0),
      });
      if (dialect === 'postgres') {
        const untidied = Math.max(...r.queries.map((q) => q.untidied?.p95 ?? 0));
        const jitOff = Math.max(...r.queries.map((q) => q.jitOff?.p95 ?? 0));
        rows.push({
          scenario: `8 dashboards (${label}) before the run's tidy`,
          size: `the year as written; the tidy (${r.tidied.length} tables) took ${seconds(r.tidyMs)}`,
          figure: `slowest query p95 ${untidied.toFixed(0)} ms`,
          baseline: `${worst.toFixed(0)} ms after it`,
          ratio: ratio(untidied / worst),
          target: 'info',
          met: 'n/a',
        });
        rows.push({
          scenario: `8 dashboards (${label}) with jit = off`,
          size: 'the BI role’s setting',
          figure: `slowest query p95 ${jitOff.toFixed(0)} ms`,
          baseline: `${worst.toFixed(0)} ms jit on`,
          ratio: ratio(jitOff / worst),
          target: 'info',
          met: 'n/a',
        });
      }
      for (const q of r.queries) {
        rows.push({
          scenario: `8 dashboards (${label})`,
          size: q.name,
          figure: `${q.p50.toFixed(0)} / ${q.p95.toFixed(0)} / ${q.max.toFixed(0)} ms`,
          baseline: q.before
            ? `${q.before.p50.toFixed(0)} ms before`
            : `> ${size.beforeTimeoutMs / 1000} s before`,
          ratio: q.before ? ratio(q.p50 / q.before.p50) : 'n/a',
          target: `< ${bound} ms`,
          met: met(q.p95 < bound),
        });
      }
    }
  }
  results.dashboards = runs;
}

export const dashboards: Scenario = {
  name: 'dashboards',
  figures: ['dashboards'],
  targets: { dashboards: 'every query p95 < 300 ms at 2,400 executions a day, < 600 ms at 10,000' },
  run: ({ rows, results, pgReason }) => runDashboardsScenario(rows, results, pgReason),
};
