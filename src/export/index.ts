/**
 * `geo-sync export`: the warehouse's data tables as Parquet or CSV files for a data lake, one
 * folder per table, day-partitioned tables as hive partitions (`<table>/day=YYYY-MM-DD/`):
 *
 *   read_parquet('DIR/prompt_executions/**' + '/*.parquet', hive_partitioning = true)
 */
import { mkdir, rm } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { abortReason } from '../abort.ts';
import type { DuckDBSettings } from '../load/duckdb/database.ts';
import { withMemoryLimit } from '../load/duckdb/out-of-memory.ts';
import { parseWarehouseTarget } from '../load/target.ts';
import type { DataTable } from '../load/warehouse.ts';
import { duckdbSource } from './duckdb-source.ts';
import { openEngine } from './engine.ts';
import { applyMoves, createScratch, dayMoves, daysWritten, removeLeftovers, type Move } from './files.ts';
import { lockExportDir } from './lock.ts';
import { postgresSource } from './postgres-source.ts';
import type { ExportSource } from './source.ts';
import { stopBeforeMoves, stoppableEngine } from './stop.ts';
import { DAY_RULES, type DayRange, type ExportFormat } from './tables.ts';

export { DAY_RULES, EXPORT_FORMATS, parseTables, type DayRange, type ExportFormat } from './tables.ts';
export { ExportDirLockedError } from './lock.ts';

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
  /**
   * The export engine's DuckDB settings, the warehouse's (GEO_DUCKDB_*): its buffer pool
   * (default 128MB), threads (default 1 for export) and where it spills (default a folder inside
   * the export's scratch folder; with `tempDirectory`, a folder of this export's inside it).
   */
  readonly duckdb?: DuckDBSettings;
  /** Told what the export did besides writing, e.g. the leftovers of a killed export removed. */
  readonly onNote?: (message: string) => void;
  /**
   * The process's stop: what is being written stops at once, the scratch folder is removed, the
   * lock released, the lake left as it was (stop.ts), and the export rejects with its reason. Once
   * the files move into place the export goes on to its end.
   */
  readonly signal?: AbortSignal;
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
  const lock = await lockExportDir(out);
  try {
    const left = await removeLeftovers(out);
    if (left.removed > 0)
      opts.onNote?.(
        `removed ${left.removed} scratch folder(s) that stopped exports left in ${out}` +
          (left.undone ? `, after putting back the previous files ${left.undone} of them had moved` : ''),
      );
    opts.signal?.throwIfAborted();
    const scratch = await createScratch(out);
    let written: ExportedTable[];
    try {
      written = await writeTables(opts, target, scratch, range);
    } catch (e) {
      await rm(scratch, { recursive: true, force: true });
      // A query the stop cancelled fails with PostgreSQL's words: the stop is the reason.
      throw opts.signal?.aborted ? abortReason(opts.signal) : e;
    }
    // Everything is written: only now are the previous files replaced.
    await stopBeforeMoves(scratch, opts.signal);
    const moves: Move[] = [];
    for (const w of written) {
      if (DAY_RULES[w.table] === null) moves.push({ target: w.table, fresh: w.table });
      else {
        const days = await dayMoves(out, scratch, w.table, range);
        w.days = daysWritten(days);
        moves.push(...days);
      }
    }
    await applyMoves(out, scratch, moves);
    return written;
  } finally {
    await lock.unlock();
  }
}

/** Every table into the scratch folder; the engine's spill files go with it (or into GEO_DUCKDB_TEMP_DIR). */
async function writeTables(
  opts: ExportOptions,
  target: ReturnType<typeof parseWarehouseTarget>,
  scratch: string,
  range: DayRange,
): Promise<ExportedTable[]> {
  const spill = spillDirectory(scratch, opts.duckdb?.tempDirectory);
  // DuckDB creates the folder it spills into when it first spills, but not its parents.
  await mkdir(dirname(spill), { recursive: true });
  const engine = stoppableEngine(await openEngine(spill, opts.duckdb), opts.signal);
  let source: ExportSource | undefined;
  try {
    source =
      target.dialect === 'duckdb'
        ? await duckdbSource(engine, target.path)
        : await postgresSource(engine, target.url, opts.signal);
    const written: ExportedTable[] = [];
    for (const table of opts.tables) {
      const rows = await source.writeTable(table, range, join(scratch, table), opts.format, opts.csvSafe);
      written.push({ table, rows });
    }
    return written;
  } catch (e) {
    // Out of memory outside a statement too (the PostgreSQL source's appender): name the setting.
    throw withMemoryLimit(e, engine.memoryLimit);
  } finally {
    await source?.close().catch(() => undefined);
    engine.close();
    await rm(spill, { recursive: true, force: true });
  }
}

/**
 * Where the export engine spills: a folder of its own inside GEO_DUCKDB_TEMP_DIR when that is set
 * (two exports at once must not share DuckDB's spill files), else inside the scratch folder.
 */
function spillDirectory(scratch: string, tempDirectory: string | undefined): string {
  return tempDirectory
    ? join(resolve(tempDirectory), `geo-sync-export-${basename(scratch).replace(/^\.geo-sync-export-/, '')}`)
    : join(scratch, '.spill');
}
