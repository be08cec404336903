/**
 * Export from PostgreSQL: each table is read through a server-side cursor in chunks, as text,
 * appended into a staging table of the export engine (an in-memory DuckDB), cast there to the
 * column's DuckDB type and COPYed out into a file whenever the staging table holds a parquet row
 * group's bytes of text (engine.ts; 16 MB at the default limit). A day-partitioned table is read
 * day by day (a cursor per day, on the executions' date index), each day into its own folder.
 * Memory is bounded by one fetch in JavaScript and one flush in DuckDB, whatever the size of a day.
 *
 * Every table is read in one REPEATABLE READ transaction, so children and their executions come
 * from the same snapshot.
 */
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { stopWorkFinished, untilAborted } from '../abort.ts';
import { cancelClientOnAbort } from '../load/postgres/cancel.ts';
import { connectTimeoutMs } from '../load/postgres/pool.ts';
import type { DataTable } from '../load/warehouse.ts';
import { copySql, csvSafeSelect, dayFileName, extension, type Engine } from './engine.ts';
import type { ExportSource } from './source.ts';
import {
  DAY_RULES,
  dayFolder,
  exportDaysSql,
  exportSelect,
  type DayRange,
  type ExportFormat,
} from './tables.ts';

/** Rows per FETCH: the most JavaScript holds at once. */
const FETCH_ROWS = 5000;
const STAGE = 'export_stage';

/** The warehouse's tables and the Asia/Shanghai day of an instant, in PostgreSQL's SQL. */
const DIALECT = {
  q: (t: string) => `geo.${t}`,
  shanghaiDay: (c: string) => `CAST(${c} AT TIME ZONE 'Asia/Shanghai' AS DATE)`,
};

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * A PostgreSQL column type (format_type) as the DuckDB type it is exported as. Types the
 * warehouse does not use fall back to VARCHAR (their text), so a new column never breaks export.
 */
export function duckdbType(pgType: string): string {
  const t = pgType.toLowerCase();
  const numeric = /^numeric\((\d+),\s*(\d+)\)$/.exec(t);
  if (numeric) return Number(numeric[1]) <= 38 ? `DECIMAL(${numeric[1]}, ${numeric[2]})` : 'VARCHAR';
  const simple: Record<string, string> = {
    bigint: 'BIGINT',
    integer: 'INTEGER',
    smallint: 'SMALLINT',
    boolean: 'BOOLEAN',
    'double precision': 'DOUBLE',
    real: 'FLOAT',
    date: 'DATE',
    'timestamp with time zone': 'TIMESTAMPTZ',
    'timestamp without time zone': 'TIMESTAMP',
    json: 'JSON',
    jsonb: 'JSON',
    uuid: 'UUID',
    text: 'VARCHAR',
  };
  return simple[t] ?? 'VARCHAR';
}

interface Column {
  name: string;
  type: string;
}

async function columnsOf(client: pg.Client, table: DataTable): Promise<Column[]> {
  const r = await client.query<{ name: string; type: string }>(
    `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type
       FROM pg_attribute a
      WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped
      ORDER BY a.attnum`,
    [`geo.${table}`],
  );
  if (r.rows.length === 0) throw new Error(`table geo.${table} not found (run geo-sync migrate first)`);
  return r.rows.map((c) => ({ name: c.name, type: duckdbType(c.type) }));
}

/**
 * `signal`: the process's stop, which ends the connecting and cancels the query in flight
 * (stop.ts). The connection has the warehouse's connect timeout (load/postgres/pool.ts).
 */
export async function postgresSource(
  engine: Engine,
  url: string,
  signal?: AbortSignal,
): Promise<ExportSource> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: connectTimeoutMs(url) });
  await untilAborted(client.connect(), signal);
  const offCancel = cancelClientOnAbort(client, signal);
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  } catch (e) {
    offCancel();
    await stopWorkFinished();
    await client.end().catch(() => undefined);
    throw e;
  }

  async function writeTable(
    table: DataTable,
    range: DayRange,
    dir: string,
    format: ExportFormat,
    csvSafe = false,
  ) {
    const columns = await columnsOf(client, table);
    await createStage(columns);
    // The staged text, cast back to each column's type on the way out.
    const cast = `SELECT ${columns.map((c) => `CAST(${quote(c.name)} AS ${c.type}) AS ${quote(c.name)}`).join(', ')} FROM ${STAGE}`;
    const typed = csvSafe ? await csvSafeSelect(engine, cast) : cast;
    await mkdir(dir, { recursive: true });
    let total = 0;
    if (DAY_RULES[table] === null) {
      // An unpartitioned table always gets a file, even an empty one: it carries the schema.
      total = await stream(exportSelect(table, range, DIALECT), columns, typed, format, (n) =>
        join(dir, `data_${n}.${extension(format)}`),
      );
    } else {
      const days = exportDaysSql(table, range, DIALECT);
      for (const { day } of (await client.query<{ day: string }>(days.sql, days.params)).rows) {
        const folder = dayFolder(dir, day);
        total += await stream(
          exportSelect(table, { from: day, to: day }, DIALECT),
          columns,
          typed,
          format,
          () => join(folder, dayFileName(format)),
          false,
        );
      }
    }
    await engine.run(`DROP TABLE ${STAGE}`);
    return total;
  }

  /**
   * The rows of `select` (its table's `columns`; a `day` column it has is left out) through a
   * cursor into the staging table, and out by `typed` into the file `file(n)` every flush (the
   * n-th, from 0; its folder created then). `always`: a file even when there are no rows.
   */
  async function stream(
    select: { sql: string; params: string[] },
    columns: readonly Column[],
    typed: string,
    format: ExportFormat,
    file: (n: number) => string,
    always = true,
  ): Promise<number> {
    const asText = `SELECT ${columns.map((c) => `x.${quote(c.name)}::text`).join(', ')} FROM (${select.sql}) x`;
    let files = 0;
    let pending = 0;
    let pendingBytes = 0;
    let total = 0;
    const flush = async () => {
      const target = file(files);
      await mkdir(dirname(target), { recursive: true });
      await engine.run(copySql(typed, target, format, engine.rowGroupBytes));
      await createStage(columns);
      files++;
      pending = 0;
      pendingBytes = 0;
    };

    await client.query(`DECLARE export_cursor NO SCROLL CURSOR FOR ${asText}`, select.params);
    try {
      for (;;) {
        const r = await client.query({ text: `FETCH ${FETCH_ROWS} FROM export_cursor`, rowMode: 'array' });
        if (r.rows.length === 0) break;
        pendingBytes += await append(r.rows as (string | null)[][]);
        pending += r.rows.length;
        total += r.rows.length;
        // A flush holds a parquet row group's bytes of text at most (its file's row group).
        if (pendingBytes >= engine.rowGroupBytes) await flush();
      }
      if (pending > 0 || (always && files === 0)) await flush();
    } finally {
      await client.query('CLOSE export_cursor').catch(() => undefined);
    }
    return total;
  }

  /**
   * A new, empty staging table. Replaced after each flush, never emptied by DELETE: deleted rows
   * keep their storage in an in-memory database (nothing checkpoints it), so the staging table
   * grew with everything a table ever staged and a 75 MB table ran out of 32MB.
   */
  async function createStage(columns: readonly Column[]): Promise<void> {
    await engine.run(
      `CREATE OR REPLACE TABLE ${STAGE} (${columns.map((c) => `${quote(c.name)} VARCHAR`).join(', ')})`,
    );
  }

  /** Fetched rows into the staging table; returns the bytes of text appended. */
  async function append(rows: (string | null)[][]): Promise<number> {
    let bytes = 0;
    const appender = await engine.connection.createAppender(STAGE);
    try {
      for (const row of rows) {
        for (const v of row) {
          if (v === null) appender.appendNull();
          else {
            appender.appendVarchar(v);
            bytes += Buffer.byteLength(v);
          }
        }
        appender.endRow();
      }
      appender.flushSync();
    } finally {
      appender.closeSync();
    }
    return bytes;
  }

  return {
    writeTable,
    async close() {
      offCancel();
      await client.query('ROLLBACK').catch(() => undefined);
      await stopWorkFinished();
      await client.end();
    },
  };
}
