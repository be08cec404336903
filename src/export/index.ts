/**
 * `geo-sync export`: the warehouse's data tables as Parquet or CSV files for a data lake, one
 * folder per table, day-partitioned tables as hive partitions (`<table>/day=YYYY-MM-DD/`):
 *
 *   read_parquet('DIR/prompt_executions/**' + '/*.parquet', hive_partitioning = true)
 */
import { mkdir, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseWarehouseTarget } from '../load/target.ts';
import type { DataTable } from '../load/warehouse.ts';
import { duckdbSource } from './duckdb-source.ts';
import { openEngine } from './engine.ts';
import { createScratch, replaceDays, replaceTable } from './files.ts';
import { postgresSource } from './postgres-source.ts';
import type { ExportSource } from './source.ts';
import { DAY_RULES, type DayRange, type ExportFormat } from './tables.ts';

export { DAY_RULES, EXPORT_FORMATS, parseTables, type DayRange, type ExportFormat } from './tables.ts';

export interface ExportOptions {
  /** GEO_WAREHOUSE: `duckdb:<file>` or a `postgres://` URL. */
  readonly warehouse: string;
  /** The output folder; created when missing. */
  readonly out: string;
  readonly format: ExportFormat;
  readonly tables: readonly DataTable[];
  /** Days of the day-partitioned tables; unpartitioned tables are always exported whole. */
  readonly range?: DayRange;
  /**
   * CSV only: a text cell beginning with `=`, `+`, `-`, `@`, a tab or a carriage return gets a
   * leading `'`, so a spreadsheet does not run it as a formula (the files then differ from the
   * warehouse). @default false
   */
  readonly csvSafe?: boolean;
  /** The export engine's DuckDB buffer pool (DuckDB's syntax). @default "128MB" */
  readonly memoryLimit?: string;
}

export interface ExportedTable {
  table: DataTable;
  rows: number;
  /** The day partitions written (partitioned tables only). */
  days?: string[];
}

export async function exportWarehouse(opts: ExportOptions): Promise<ExportedTable[]> {
  const target = parseWarehouseTarget(opts.warehouse);
  const out = resolve(opts.out);
  const range = opts.range ?? {};
  await mkdir(out, { recursive: true });
  const scratch = await createScratch(out);
  const engine = await openEngine(join(scratch, '.spill'), opts.memoryLimit);
  let source: ExportSource | undefined;
  try {
    source =
      target.dialect === 'duckdb'
        ? await duckdbSource(engine, target.path)
        : await postgresSource(engine, target.url);
    const written: ExportedTable[] = [];
    for (const table of opts.tables) {
      const rows = await source.writeTable(table, range, join(scratch, table), opts.format, opts.csvSafe);
      written.push({ table, rows });
    }
    // Everything is written: only now are the previous files replaced.
    for (const w of written) {
      const fresh = join(scratch, w.table);
      if (DAY_RULES[w.table] === null) await replaceTable(fresh, join(out, w.table));
      else w.days = await replaceDays(fresh, join(out, w.table), range);
    }
    return written;
  } finally {
    await source?.close().catch(() => undefined);
    engine.close();
    await rm(scratch, { recursive: true, force: true });
  }
}
