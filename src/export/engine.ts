/**
 * The export engine: a private in-memory DuckDB that writes the files. Its parquet and CSV
 * writers are built into the bundled DuckDB; extension auto-install and auto-load are switched
 * off so that nothing is ever downloaded (an export must work offline and never reach out).
 */
import {
  DuckDBInstance,
  DuckDBTypeId,
  quotedIdentifier,
  quotedString,
  type DuckDBConnection,
  type DuckDBValue,
} from '@duckdb/node-api';
import { DAY_COLUMN, type ExportFormat } from './tables.ts';

export interface Engine {
  readonly connection: DuckDBConnection;
  /** Runs one statement; returns the row count DuckDB reports for a COPY (0 otherwise). */
  run(sql: string, params?: readonly DuckDBValue[]): Promise<number>;
  close(): void;
}

/** The engine only stages and writes: beyond this DuckDB spills to the scratch folder. */
export const EXPORT_MEMORY_LIMIT = '128MB';

export async function openEngine(tempDirectory: string, memoryLimit = EXPORT_MEMORY_LIMIT): Promise<Engine> {
  const instance = await DuckDBInstance.create(':memory:', {
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
    // Bounded, and spilling into the export's own scratch folder rather than growing.
    memory_limit: memoryLimit,
    // One writer thread: each thread of the parquet writer holds its own row group in memory,
    // and an export is bound by reading the warehouse, not by encoding.
    threads: '1',
    temp_directory: tempDirectory,
  });
  const connection = await instance.connect();
  return {
    connection,
    async run(sql, params = []) {
      const reader = await connection.runAndReadAll(sql, params.length ? [...params] : undefined);
      const rows = reader.getRows();
      const first = rows[0]?.[0];
      return reader.columnNames()[0] === 'Count' && first !== undefined ? Number(first) : 0;
    },
    close() {
      connection.closeSync();
      instance.closeSync();
    },
  };
}

/**
 * The COPY of `select` into `target`: a folder of hive partitions by day (files named
 * `data_<uuid>`, so successive COPYs into one folder add files), or one file.
 */
export function copySql(select: string, target: string, format: ExportFormat, partitioned: boolean): string {
  const options = [format === 'parquet' ? 'FORMAT parquet' : 'FORMAT csv, HEADER'];
  if (partitioned) options.push(`PARTITION_BY (${DAY_COLUMN})`, 'APPEND', `FILENAME_PATTERN 'data_{uuid}'`);
  return `COPY (${select}) TO ${quotedString(target)} (${options.join(', ')})`;
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
  const shape = await engine.connection.runAndReadAll(
    `SELECT * FROM (${select}) LIMIT 0`,
    params.length ? [...params] : undefined,
  );
  const types = shape.columnTypes();
  const text = shape
    .columnNames()
    .filter((_, i) => types[i]!.typeId === DuckDBTypeId.VARCHAR && types[i]!.alias === undefined);
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
