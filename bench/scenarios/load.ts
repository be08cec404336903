/**
 * Scenario 3, load: rows/s through Warehouse.writeExecutionBatch against the raw path on the same
 * rows (DuckDB Appender, PostgreSQL COPY into plain tables), in one pass (the ratio) and in the
 * adapter's batches (for information: what batching alone costs the raw path).
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
    const runAdapter = () =>
      dialect === 'duckdb'
        ? adapterLoadDuckdb(data)
        : withDatabase('load_adapter', (url) => adapterLoad(url, data));
    const runRaw = (perBatch: boolean) =>
      dialect === 'duckdb'
        ? rawLoadDuckdb(data, perBatch)
        : withDatabase('load_raw', (url) => rawLoadPostgres(url, data, perBatch));
    for (let i = 0; i < LOAD.repeats; i++) {
      adapter.push(await runAdapter());
      raw.push(await runRaw(false));
      log(
        `  ${dialect} #${i + 1}: adapter ${int(adapter[i]!.rowsPerSecond)} rows/s, raw ${int(raw[i]!.rowsPerSecond)} rows/s`,
      );
    }
    const rawBatched = await runRaw(true);
    log(`  ${dialect}: raw in the adapter's batches ${int(rawBatched.rowsPerSecond)} rows/s`);
    const a = best(adapter);
    const r = best(raw);
    const x = a.rowsPerSecond / r.rowsPerSecond;
    const xb = a.rowsPerSecond / rawBatched.rowsPerSecond;
    // What an adapter that cost nothing but committed every batch, as the adapter must, could
    // reach against the one-pass ceiling: the raw path's own loss to batching.
    const ceiling = rawBatched.rowsPerSecond / r.rowsPerSecond;
    results[key] = x;
    results[`load_batching_ceiling_${dialect}`] = ceiling;
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
      target: LOAD_TARGET,
      met: x >= LOAD_TARGET,
    };
    rows.push({
      scenario: `3 load (${label})`,
      size,
      figure: `${int(a.rowsPerSecond)} rows/s adapter`,
      baseline: `${int(r.rowsPerSecond)} rows/s ${dialect === 'duckdb' ? 'Appender' : 'COPY'}`,
      ratio: ratio(x),
      target: `>= ${LOAD_TARGET}`,
      met: met(x >= LOAD_TARGET),
    });
    rows.push({
      scenario: `3 load (${label}) vs raw per batch`,
      size: `same rows; raw also commits every ${LOAD.batchSize} exec`,
      figure: `${int(a.rowsPerSecond)} rows/s adapter`,
      baseline: `${int(rawBatched.rowsPerSecond)} rows/s ${dialect === 'duckdb' ? 'Appender' : 'COPY'}/batch`,
      ratio: ratio(xb),
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
  figures: ['load_ratio_duckdb', 'load_ratio_postgres'],
  targets: { load_ratio: `>= ${LOAD_TARGET}` },
  run: ({ rows, results, pgReason }) => runLoad(rows, results, pgReason),
};
