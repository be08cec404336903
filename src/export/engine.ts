/**
 * The export engine: a private in-memory DuckDB that writes the files. Its parquet and CSV
 * writers are built into the bundled DuckDB; extension auto-install and auto-load are switched
 * off so that nothing is ever downloaded (an export must work offline and never reach out).
 */
import { randomUUID } from 'node:crypto';
import {
  DuckDBInstance,
  DuckDBTypeId,
  quotedIdentifier,
  quotedString,
  type DuckDBConnection,
  type DuckDBValue,
} from '../load/duckdb/node-api.ts';
import { DEFAULT_MEMORY_LIMIT, type DuckDBSettings } from '../load/duckdb/database.ts';
import { namingMemoryLimit } from '../load/duckdb/out-of-memory.ts';
import { sizeInBytes } from '../load/duckdb/size.ts';
import type { ExportFormat } from './tables.ts';

export interface Engine {
  readonly connection: DuckDBConnection;
  /** The buffer pool's limit (DuckDB's syntax): GEO_DUCKDB_MEMORY_LIMIT, as the warehouse's. */
  readonly memoryLimit: string;
  /** Bytes of a parquet row group, at most: what one writer holds before it writes them out. */
  readonly rowGroupBytes: number;
  /** Runs one statement; returns the row count DuckDB reports for a COPY (0 otherwise). */
  run(sql: string, params?: readonly DuckDBValue[]): Promise<number>;
  /** The rows of one statement, as JavaScript values. */
  rows(sql: string, params?: readonly DuckDBValue[]): Promise<Record<string, unknown>[]>;
  close(): void;
}

/** Threads of the engine unless GEO_DUCKDB_THREADS says otherwise (see openEngine). */
export const EXPORT_THREADS = 1;

/**
 * The engine, with the warehouse's DuckDB settings (GEO_DUCKDB_MEMORY_LIMIT, GEO_DUCKDB_THREADS;
 * the checkpoint threshold has no use in an engine that stores nothing), spilling into
 * `tempDirectory`. What bounds its memory, whatever the size of the export:
 * - every day of a day-partitioned table is its own COPY into its own file (duckdb-source.ts,
 *   postgres-source.ts), so one file is being written at a time: DuckDB's partitioned writes
 *   (PARTITION_BY) keep a writer and its buffered rows per partition open at once, and ran out of
 *   128MB on a year of 2,400 executions a day;
 * - a parquet row group is written out at `rowGroupBytes` (ROW_GROUP_SIZE_BYTES, which DuckDB
 *   honours with preserve_insertion_order off; one thread writes in scan order anyway), not only
 *   at 122,880 rows, hundreds of MB when answers are kilobytes;
 * - one thread unless told: each thread's parquet writer holds a row group of its own.
 */
export async function openEngine(tempDirectory: string, settings: DuckDBSettings = {}): Promise<Engine> {
  const memoryLimit = settings.memoryLimit ?? DEFAULT_MEMORY_LIMIT;
  const threads = settings.threads ?? EXPORT_THREADS;
  const instance = await DuckDBInstance.create(':memory:', {
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
    // Bounded, and spilling into the export's own folder rather than growing.
    memory_limit: memoryLimit,
    threads: String(threads),
    temp_directory: tempDirectory,
    preserve_insertion_order: 'false',
  });
  const connection = await instance.connect();
  const named = <T>(fn: () => Promise<T>) => namingMemoryLimit(memoryLimit, fn);
  return {
    connection,
    memoryLimit,
    rowGroupBytes: rowGroupBytes(memoryLimit, threads),
    run: (sql, params = []) =>
      named(async () => {
        const reader = await connection.runAndReadAll(sql, params.length ? [...params] : undefined);
        const rows = reader.getRows();
        const first = rows[0]?.[0];
        return reader.columnNames()[0] === 'Count' && first !== undefined ? Number(first) : 0;
      }),
    rows: (sql, params = []) =>
      named(async () =>
        (await connection.runAndReadAll(sql, params.length ? [...params] : undefined)).getRowObjectsJS(),
      ),
    close() {
      connection.closeSync();
      instance.closeSync();
    },
  };
}

/**
 * A parquet row group's bytes at most: an eighth of the pool per thread (the rest is the scan,
 * the join of a child table to its executions' day, and what DuckDB holds besides), between
 * 1 MB and 64 MB. 16 MB at the default 128MB.
 */
export function rowGroupBytes(memoryLimit: string, threads: number): number {
  const pool = sizeInBytes(memoryLimit) ?? 128e6;
  return Math.round(Math.min(64e6, Math.max(1e6, pool / 8 / threads)));
}

/** The COPY of `select` into the file `target`: Parquet in row groups of `rowGroupBytes`, or CSV with a header. */
export function copySql(select: string, target: string, format: ExportFormat, rowGroupBytes: number): string {
  const options =
    format === 'parquet' ? `FORMAT parquet, ROW_GROUP_SIZE_BYTES ${rowGroupBytes}` : 'FORMAT csv, HEADER';
  return `COPY (${select}) TO ${quotedString(target)} (${options})`;
}

/** A new file name in a day's folder: `data_<uuid>`, so a re-exported day's files are all new. */
export function dayFileName(format: ExportFormat): string {
  return `data_${randomUUID()}.${extension(format)}`;
}

/**
 * What a spreadsheet reads as the start of a formula (OWASP, "CSV Injection"): a cell of API text
 * beginning with one of these can run as a formula when the CSV is opened in Excel or LibreOffice.
 */
export const FORMULA_STARTS = ['=', '+', '-', '@', '\t', '\r'] as const;

/**
 * `--csv-safe`: `select` with every text column's value that begins with a FORMULA_STARTS
 * character prefixed with `'`, as OWASP recommends, so a spreadsheet shows it as text. Only
 * VARCHAR columns: numbers (a negative one starts with `-`), dates and JSON are left as they are.
 * The columns are the select's own, read from DuckDB (`params` are the select's parameters).
 */
export async function csvSafeSelect(
  engine: Engine,
  select: string,
  params: readonly DuckDBValue[] = [],
): Promise<string> {
  return guardFormulas(select, await textColumns(engine, select, params));
}

/** The select's VARCHAR columns (not JSON, an alias of VARCHAR), read from DuckDB without running it. */
export async function textColumns(
  engine: Engine,
  select: string,
  params: readonly DuckDBValue[] = [],
): Promise<string[]> {
  const shape = await engine.connection.runAndReadAll(
    `SELECT * FROM (${select}) LIMIT 0`,
    params.length ? [...params] : undefined,
  );
  const types = shape.columnTypes();
  return shape
    .columnNames()
    .filter((_, i) => types[i]!.typeId === DuckDBTypeId.VARCHAR && types[i]!.alias === undefined);
}

/** `select` with each of `text`'s cells beginning with a FORMULA_STARTS character prefixed with `'`. */
export function guardFormulas(select: string, text: readonly string[]): string {
  if (text.length === 0) return select;
  const starts = FORMULA_STARTS.map((c) => quotedString(c)).join(', ');
  const guarded = text.map((name) => {
    const col = quotedIdentifier(name);
    return `CASE WHEN left(${col}, 1) IN (${starts}) THEN ${quotedString("'")} || ${col} ELSE ${col} END AS ${col}`;
  });
  return `SELECT * REPLACE (${guarded.join(', ')}) FROM (${select})`;
}

export function extension(format: ExportFormat): string {
  return format === 'parquet' ? 'parquet' : 'csv';
}
