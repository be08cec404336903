/**
 * Scenario 3, load: rows/s through Warehouse.writeExecutionBatch, with the per-day aggregates kept
 * as a run keeps them (the units marked stale refreshed every so many executions and at the end,
 * inside the timing; the aggregates checked equal to a recomputation after it), against the raw
 * path on the same rows (DuckDB Appender, PostgreSQL COPY into plain tables), in one pass (the
 * ratio) and in the adapter's batches (for information: what batching alone costs the raw path,
 * and batching with the warehouse's primary keys on the raw tables).
 * Twice: a day of 40 platform tasks (units of 250 executions, interleaved as a run of concurrent
 * units writes them), and a first read of many small units (10 executions each, one after the
 * other). For information, what keeping the aggregates costs: the same writes without them; and
 * the same batches through the run's group-commit writer, which merges up to four a transaction
 * as it does when it is a run's bound.
 */
import { adapterLoad, adapterLoadDuckdb, rawLoadDuckdb, rawLoadPostgres, type LoadRun } from '../load.ts';
import { generateLoadData } from '../load-data.ts';
import { withDatabase } from '../postgres.ts';
import { int, met, ratio, type TableRow } from '../report.ts';
import { LOAD } from '../sizes.ts';
import { best, log, naRow, type Scenario } from './common.ts';

/** The adapter's rows/s against the raw path's, best of the runs on each side. */
const LOAD_TARGET = 0.5;

async function runLoad(
  rows: TableRow[],
  results: Record<string, unknown>,
  pgReason: string | null,
): Promise<void> {
  const data = generateLoadData(LOAD.executions, LOAD.batchSize);
  const smallData = generateLoadData(LOAD.executions, LOAD.batchSize, undefined, LOAD.smallUnits);
  const size = `${int(data.executions)} exec, ${int(data.rows)} rows, batches of ${LOAD.batchSize}`;
  log(`load: ${size} (${JSON.stringify(data.perTable)})`);
  const out: Record<string, unknown> = {
    executions: data.executions,
    rows: data.rows,
    per_table: data.perTable,
  };
  results.load = out;
  for (const dialect of ['duckdb', 'postgres'] as const) {
    const key = `load_ratio_${dialect}`;
    const label = dialect === 'duckdb' ? 'DuckDB' : 'PostgreSQL';
    if (dialect === 'postgres' && pgReason) {
      results[key] = null;
      out[dialect] = { error: pgReason };
      rows.push(naRow(`3 load (${label})`, pgReason));
      continue;
    }
    const adapter: LoadRun[] = [];
    const raw: LoadRun[] = [];
    const without: LoadRun[] = [];
    const runAdapter = (keepRollups = true, d = data, groupCommit = false) =>
      dialect === 'duckdb'
        ? adapterLoadDuckdb(d, { keepRollups, groupCommit })
        : withDatabase('load_adapter', (url) => adapterLoad(url, d, { keepRollups, groupCommit }));
    const runRaw = (perBatch: boolean, keys = false, d = data) =>
      dialect === 'duckdb'
        ? rawLoadDuckdb(d, perBatch, keys)
        : withDatabase('load_raw', (url) => rawLoadPostgres(url, d, perBatch, keys));
    /** The raw path's name in the table. */
    const rawPath = dialect === 'duckdb' ? 'Appender' : 'COPY';
    // The same batches through the run's group-commit writer at the default bounds, which merges
    // up to four a transaction as it does when it is a run's bound; and the raw path in the
    // adapter's batches, without and with the warehouse's keys. Each alternated with the others,
    // best of the repeats, as the ratio's own sides are.
    const grouped: LoadRun[] = [];
    const groupedWithout: LoadRun[] = [];
    const rawBatchedRuns: LoadRun[] = [];
    const rawKeyedRuns: LoadRun[] = [];
    for (let i = 0; i < LOAD.repeats; i++) {
      adapter.push(await runAdapter());
      raw.push(await runRaw(false));
      without.push(await runAdapter(false));
      grouped.push(await runAdapter(true, data, true));
      rawBatchedRuns.push(await runRaw(true));
      groupedWithout.push(await runAdapter(false, data, true));
      rawKeyedRuns.push(await runRaw(true, true));
      log(
        `  ${dialect} #${i + 1}: adapter ${int(adapter[i]!.rowsPerSecond)} rows/s (${int(without[i]!.rowsPerSecond)} without the aggregates), raw ${int(raw[i]!.rowsPerSecond)} rows/s`,
      );
    }
    // A first read of many small units, aggregates kept, against the raw path on its rows.
    const small: LoadRun[] = [];
    const smallRaw: LoadRun[] = [];
    const groupedSmall: LoadRun[] = [];
    for (let i = 0; i < LOAD.repeats; i++) {
      small.push(await runAdapter(true, smallData));
      smallRaw.push(await runRaw(false, false, smallData));
      groupedSmall.push(await runAdapter(true, smallData, true));
    }
    const xs = best(small).rowsPerSecond / best(smallRaw).rowsPerSecond;
    const cost = best(adapter).wallMs / best(without).wallMs;
    results[`load_ratio_small_units_${dialect}`] = xs;
    results[`load_rollups_cost_${dialect}`] = cost;
    log(
      `  ${dialect}: small units ${int(best(small).rowsPerSecond)} rows/s, ratio ${ratio(xs)}; aggregates cost ${ratio(cost)}`,
    );
    const g = best(grouped).rowsPerSecond / best(raw).rowsPerSecond;
    const gs = best(groupedSmall).rowsPerSecond / best(smallRaw).rowsPerSecond;
    const gCost = best(grouped).wallMs / best(groupedWithout).wallMs;
    results[`load_ratio_group_commit_${dialect}`] = g;
    results[`load_ratio_group_commit_small_units_${dialect}`] = gs;
    results[`load_rollups_cost_group_commit_${dialect}`] = gCost;
    log(
      `  ${dialect}: through the run's writer ${int(best(grouped).rowsPerSecond)} rows/s in ${best(grouped).transactions} transactions, ratio ${ratio(g)}; small units ${ratio(gs)}; aggregates cost ${ratio(gCost)}`,
    );
    const rawBatched = best(rawBatchedRuns);
    const rawKeyed = best(rawKeyedRuns);
    log(
      `  ${dialect}: raw in the adapter's batches ${int(rawBatched.rowsPerSecond)} rows/s, with the warehouse's keys ${int(rawKeyed.rowsPerSecond)} rows/s`,
    );
    const a = best(adapter);
    const r = best(raw);
    const x = a.rowsPerSecond / r.rowsPerSecond;
    const xb = a.rowsPerSecond / rawBatched.rowsPerSecond;
    // What an adapter that cost nothing but committed every batch, as the adapter must, could
    // reach against the one-pass ceiling: the raw path's own loss to batching.
    const ceiling = rawBatched.rowsPerSecond / r.rowsPerSecond;
    // And one that also kept the warehouse's primary keys, as any writer of these tables must,
    // committing as often as the adapter (a writer that commits less often can go above it).
    const keysCeiling = rawKeyed.rowsPerSecond / r.rowsPerSecond;
    results[key] = x;
    results[`load_batching_ceiling_${dialect}`] = ceiling;
    results[`load_keys_ceiling_${dialect}`] = keysCeiling;
    out[dialect] = {
      ratio: x,
      adapter_rows_per_s: a.rowsPerSecond,
      raw_rows_per_s: r.rowsPerSecond,
      adapter_wall_s: a.wallMs / 1000,
      raw_wall_s: r.wallMs / 1000,
      adapter_runs_s: adapter.map((q) => q.wallMs / 1000),
      raw_runs_s: raw.map((q) => q.wallMs / 1000),
      raw_path:
        dialect === 'duckdb'
          ? 'Appender (typed 2048-row data chunks) into plain tables, same columns and types, no keys, one Appender per table for all rows'
          : 'COPY text format (pg-copy-streams) into plain tables, same columns and types, no keys, one COPY per table for all rows',
      raw_in_adapter_batches_rows_per_s: rawBatched.rowsPerSecond,
      raw_in_adapter_batches_wall_s: rawBatched.wallMs / 1000,
      ratio_vs_raw_in_adapter_batches: xb,
      batching_ceiling: ceiling,
      batching_ceiling_note: 'raw path in the adapter batches against the raw path in one pass',
      raw_with_keys_in_adapter_batches_rows_per_s: rawKeyed.rowsPerSecond,
      keys_ceiling: keysCeiling,
      keys_ceiling_note:
        "raw path in the adapter batches, its tables with the warehouse's primary keys, against the raw path in one pass",
      ratio_vs_raw_with_keys_in_adapter_batches: a.rowsPerSecond / rawKeyed.rowsPerSecond,
      target: LOAD_TARGET,
      met: x >= LOAD_TARGET,
      aggregates_kept: true,
      without_aggregates_rows_per_s: best(without).rowsPerSecond,
      without_aggregates_runs_s: without.map((q) => q.wallMs / 1000),
      rollups_cost: cost,
      group_commit: {
        note: "the run's group-commit writer at the default bounds, every batch ready at once (the writer the run's bound)",
        ratio: g,
        adapter_rows_per_s: best(grouped).rowsPerSecond,
        adapter_runs_s: grouped.map((q) => q.wallMs / 1000),
        transactions: best(grouped).transactions,
        without_aggregates_runs_s: groupedWithout.map((q) => q.wallMs / 1000),
        rollups_cost: gCost,
        small_units_ratio: gs,
        small_units_runs_s: groupedSmall.map((q) => q.wallMs / 1000),
        small_units_transactions: best(groupedSmall).transactions,
      },
      small_units: {
        units: LOAD.smallUnits,
        ratio: xs,
        adapter_rows_per_s: best(small).rowsPerSecond,
        raw_rows_per_s: best(smallRaw).rowsPerSecond,
        adapter_runs_s: small.map((q) => q.wallMs / 1000),
        target: LOAD_TARGET,
        met: xs >= LOAD_TARGET,
      },
    };
    rows.push({
      scenario: `3 load (${label})`,
      size,
      figure: `${int(a.rowsPerSecond)} rows/s adapter`,
      baseline: `${int(r.rowsPerSecond)} rows/s ${rawPath}`,
      ratio: ratio(x),
      target: `>= ${LOAD_TARGET}`,
      met: met(x >= LOAD_TARGET),
    });
    rows.push({
      scenario: `3 load (${label}), ${int(LOAD.smallUnits)} small units`,
      size: `same executions, ${int(LOAD.executions / LOAD.smallUnits)} a unit, aggregates kept`,
      figure: `${int(best(small).rowsPerSecond)} rows/s adapter`,
      baseline: `${int(best(smallRaw).rowsPerSecond)} rows/s ${rawPath}`,
      ratio: ratio(xs),
      target: `>= ${LOAD_TARGET}`,
      met: met(xs >= LOAD_TARGET),
    });
    rows.push({
      scenario: `3 load (${label}) through the run's writer`,
      size: `same batches, ${best(grouped).transactions} transactions (group commit, default bounds); aggregates cost ${ratio(gCost)}`,
      figure: `${int(best(grouped).rowsPerSecond)} rows/s adapter`,
      baseline: `${int(r.rowsPerSecond)} rows/s ${rawPath}`,
      ratio: ratio(g),
      target: 'info',
      met: 'n/a',
    });
    rows.push({
      scenario: `3 load (${label}), small units, through the run's writer`,
      size: `same batches, ${best(groupedSmall).transactions} transactions (group commit, default bounds)`,
      figure: `${int(best(groupedSmall).rowsPerSecond)} rows/s adapter`,
      baseline: `${int(best(smallRaw).rowsPerSecond)} rows/s ${rawPath}`,
      ratio: ratio(gs),
      target: 'info',
      met: 'n/a',
    });
    rows.push({
      scenario: `3 load (${label}) aggregates' cost`,
      size: 'the same writes without the aggregates',
      figure: `${(best(adapter).wallMs / 1000).toFixed(2)} s with`,
      baseline: `${(best(without).wallMs / 1000).toFixed(2)} s without`,
      ratio: ratio(cost),
      target: 'info',
      met: 'n/a',
    });
    rows.push({
      scenario: `3 load (${label}) vs raw per batch`,
      size: `same rows; raw also commits every ${LOAD.batchSize} exec`,
      figure: `${int(a.rowsPerSecond)} rows/s adapter`,
      baseline: `${int(rawBatched.rowsPerSecond)} rows/s ${rawPath}/batch`,
      ratio: ratio(xb),
      target: 'info',
      met: 'n/a',
    });
    rows.push({
      scenario: `3 load (${label}) keys ceiling`,
      size: `raw path: every ${LOAD.batchSize} exec committed, the warehouse's keys, vs one pass`,
      figure: `${int(rawKeyed.rowsPerSecond)} rows/s raw/batch, keys`,
      baseline: `${int(r.rowsPerSecond)} rows/s raw one pass`,
      ratio: ratio(keysCeiling),
      target: 'info',
      met: 'n/a',
    });
    rows.push({
      scenario: `3 load (${label}) batching ceiling`,
      size: `raw path: every ${LOAD.batchSize} exec committed vs one pass`,
      figure: `${int(rawBatched.rowsPerSecond)} rows/s raw/batch`,
      baseline: `${int(r.rowsPerSecond)} rows/s raw one pass`,
      ratio: ratio(ceiling),
      target: 'info',
      met: 'n/a',
    });
  }
}

export const load: Scenario = {
  name: 'load',
  figures: [
    'load_ratio_duckdb',
    'load_ratio_postgres',
    'load_ratio_small_units_duckdb',
    'load_ratio_small_units_postgres',
  ],
  infoFigures: [
    'load_rollups_cost_duckdb',
    'load_rollups_cost_postgres',
    'load_batching_ceiling_duckdb',
    'load_batching_ceiling_postgres',
    'load_ratio_group_commit_duckdb',
    'load_ratio_group_commit_postgres',
    'load_ratio_group_commit_small_units_duckdb',
    'load_ratio_group_commit_small_units_postgres',
    'load_rollups_cost_group_commit_duckdb',
    'load_rollups_cost_group_commit_postgres',
    'load_keys_ceiling_duckdb',
    'load_keys_ceiling_postgres',
  ],
  targets: { load_ratio: `>= ${LOAD_TARGET}` },
  run: ({ rows, results, pgReason }) => runLoad(rows, results, pgReason),
};
