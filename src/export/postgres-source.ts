/**
 * Export from PostgreSQL: each table is read through a server-side cursor in chunks, as text,
 * appended into a staging table of the export engine (an in-memory DuckDB), cast there to the
 * column's DuckDB type and COPYed out whenever the staging table holds FLUSH_BYTES of text. Memory
 * is bounded by one fetch in JavaScript and one flush in DuckDB, whatever the size of a day.
 *
 * Every table is read in one REPEATABLE READ transaction, so children and their executions come
 * from the same snapshot.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { untilAborted } from '../abort.ts';
import { cancelClientOnAbort } from '../load/postgres/cancel.ts';
import { connectTimeoutMs } from '../load/postgres/pool.ts';
import type { DataTable } from '../load/warehouse.ts';
import { copySql, csvSafeSelect, extension, type Engine } from './engine.ts';
import type { ExportSource } from './source.ts';
import { DAY_COLUMN, DAY_RULES, exportSelect, type DayRange, type ExportFormat } from './tables.ts';

/** Rows per FETCH: the most JavaScript holds at once. */
const FETCH_ROWS = 5000;
/**
 * Text staged in DuckDB before it is written out (one file per flush and day). Counted in bytes,
 * not rows: an execution's answer is kilobytes, a rank a few bytes. The parquet writer holds a
 * flush's row groups in memory, so this bounds the export's memory with it.
 */
const FLUSH_BYTES = 16 * 1024 * 1024;
const STAGE = 'export_stage';

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
    const partitioned = DAY_RULES[table] !== null;
    const columns = await columnsOf(client, table);
    const staged = partitioned ? [...columns, { name: DAY_COLUMN, type: 'DATE' }] : columns;
    await engine.run(
      `CREATE OR REPLACE TABLE ${STAGE} (${staged.map((c) => `${quote(c.name)} VARCHAR`).join(', ')})`,
    );
    // The staged text, cast back to each column's type on the way out.
    const cast = `SELECT ${staged.map((c) => `CAST(${quote(c.name)} AS ${c.type}) AS ${quote(c.name)}`).join(', ')} FROM ${STAGE}`;
    const typed = csvSafe ? await csvSafeSelect(engine, cast) : cast;
    const { sql, params } = exportSelect(table, range, {
      q: (t) => `geo.${t}`,
      shanghaiDay: (c) => `CAST(${c} AT TIME ZONE 'Asia/Shanghai' AS DATE)`,
    });
    const asText = `SELECT ${staged.map((c) => `x.${quote(c.name)}::text`).join(', ')} FROM (${sql}) x`;
    await mkdir(dir, { recursive: true });

    let files = 0;
    let pending = 0;
    let pendingBytes = 0;
    let total = 0;
    const flush = async () => {
      const target = partitioned ? dir : join(dir, `data_${files}.${extension(format)}`);
      await engine.run(copySql(typed, target, format, partitioned));
      await engine.run(`DELETE FROM ${STAGE}`);
      files++;
      pending = 0;
      pendingBytes = 0;
    };

    await client.query(`DECLARE export_cursor NO SCROLL CURSOR FOR ${asText}`, params);
    try {
      for (;;) {
        const r = await client.query({ text: `FETCH ${FETCH_ROWS} FROM export_cursor`, rowMode: 'array' });
        if (r.rows.length === 0) break;
        const appender = await engine.connection.createAppender(STAGE);
        try {
          for (const row of r.rows as (string | null)[][]) {
            for (const v of row) {
              if (v === null) appender.appendNull();
              else {
                appender.appendVarchar(v);
                pendingBytes += Buffer.byteLength(v);
              }
            }
            appender.endRow();
          }
          appender.flushSync();
        } finally {
          appender.closeSync();
        }
        pending += r.rows.length;
        total += r.rows.length;
        if (pendingBytes >= FLUSH_BYTES) await flush();
      }
      // An unpartitioned table always gets a file, even an empty one: it carries the schema.
      if (pending > 0 || (!partitioned && files === 0)) await flush();
    } finally {
      await client.query('CLOSE export_cursor').catch(() => undefined);
    }
    await engine.run(`DROP TABLE ${STAGE}`);
    return total;
  }

  return {
    writeTable,
    async close() {
      offCancel();
      await client.query('ROLLBACK').catch(() => undefined);
      await client.end();
    },
  };
}
