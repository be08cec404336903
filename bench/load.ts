/**
 * The load scenario: the same rows written (1) through geo-sync's adapter,
 * Warehouse.writeExecutionBatch, batch after batch into a fresh, migrated warehouse, and (2) by
 * the raw path into plain tables with the same columns and types and no keys: DuckDB Appender
 * (typed data chunks of 2048 rows, the database opened with a run's settings), PostgreSQL COPY
 * (text format, escaped). The raw path runs in
 * one pass (one Appender / one COPY per table for all the rows: the ceiling, which the ratio is
 * taken against) and in the adapter's batches (one commit per batch: how much of the gap is the
 * batching itself). Rows per second count every row of every table. Warehouse creation and
 * migration are not timed. For information, the raw path in the adapter's batches also runs with
 * the warehouse's primary keys on its tables: what keeping the keys costs any writer.
 */
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  DuckDBDataChunk,
  dateValue,
  timestampTZValue,
  type DuckDBConnection,
  type DuckDBValue,
} from '@duckdb/node-api';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { openWarehouse, RUN_DUCKDB_THREADS } from '../src/load/index.ts';
import { rollupsMatchSqls } from '../src/load/core/rollups.ts';
import { RollupRefresher } from '../src/sync/rollup-refresh.ts';
import {
  acquireDatabase,
  connect,
  releaseDatabase,
  type SharedDatabase,
} from '../src/load/duckdb/database.ts';
import { SQL_TYPE as DUCKDB_SQL_TYPE } from '../src/load/duckdb/staging.ts';
import { SQL_TYPE as PG_SQL_TYPE } from '../src/load/postgres/driver.ts';
import {
  EXECUTION_PRODUCTS,
  EXECUTION_RANKS,
  EXECUTION_SCREENSHOTS,
  EXECUTION_SOURCES,
  PRODUCT_CARDS,
  PROMPT_EXECUTIONS,
  type AnyTableSpec,
  type ColumnKind,
} from '../src/load/tables.ts';
import { ConfigSchema } from '../src/config.ts';
import { silentLogger } from '../src/log.ts';
import { GroupWriter, writerLimits } from '../src/sync/writer.ts';
import type { ExecutionBatch } from '../src/transform/rows.ts';
import type { LoadData } from './load-data.ts';
import { tempDir } from './paths.ts';

/** Each collection of an ExecutionBatch and the table it lands in. */
const COLLECTIONS: readonly {
  key: Exclude<keyof ExecutionBatch, 'kept' | 'fingerprints' | 'sourcesMerged'>;
  spec: AnyTableSpec;
}[] = [
  { key: 'executions', spec: PROMPT_EXECUTIONS },
  { key: 'ranks', spec: EXECUTION_RANKS },
  { key: 'sources', spec: EXECUTION_SOURCES },
  { key: 'screenshots', spec: EXECUTION_SCREENSHOTS },
  { key: 'products', spec: EXECUTION_PRODUCTS },
  { key: 'cards', spec: PRODUCT_CARDS },
];

export interface LoadRun {
  wallMs: number;
  rows: number;
  rowsPerSecond: number;
  /** The adapter's transactions (the raw path's are not counted). */
  transactions?: number;
}

function result(wallMs: number, rows: number): LoadRun {
  return { wallMs, rows, rowsPerSecond: rows / (wallMs / 1000) };
}

// ---- geo-sync's adapter -----------------------------------------------------------------------

export interface AdapterLoadOptions {
  /** Keep the per-day aggregates, as a run does by default. @default true */
  keepRollups?: boolean;
  /**
   * Hand the batches to the run's group-commit writer (GroupWriter, with the bounds a run at the
   * default config gives it) instead of one transaction per batch. All the rows are ready at once,
   * as when the writer is what bounds a run: it commits up to four batches a transaction. Not
   * all of a run: the batches are the load data's (not each unit's rows apart), and no unit
   * completion (checkpoint, deletion of unlisted executions) goes with them.
   * @default false
   */
  groupCommit?: boolean;
}

/**
 * The adapter, into the warehouse `target` (fresh, migrated here): every batch written, one
 * transaction each or through the run's writer (`groupCommit`), and (with the aggregates kept,
 * the default) the units they marked stale refreshed as a run refreshes them (RollupRefresher:
 * every so many executions, and at the end), inside the timing. Afterwards, outside it, the
 * aggregates are checked equal to a recomputation (check rollups_match): a figure of a wrong
 * write is none.
 */
export async function adapterLoad(
  target: string,
  data: LoadData,
  { keepRollups = true, groupCommit = false }: AdapterLoadOptions = {},
): Promise<LoadRun> {
  // As a run opens it (its DuckDB threads).
  const warehouse = await openWarehouse(target, {
    logger: silentLogger,
    migrate: true,
    keepRollups,
    duckdb: { threads: RUN_DUCKDB_THREADS },
  });
  try {
    const refresher = new RollupRefresher(warehouse, silentLogger);
    const commit = async (b: ExecutionBatch) => {
      await warehouse.writeExecutionBatch(b);
      if (keepRollups) await refresher.wrote(b.executions.length);
    };
    let transactions = 0;
    const t0 = performance.now();
    if (groupCommit) {
      const bounds = writerLimits(ConfigSchema.parse({}));
      // The writer fails a transaction's units, not its caller (no completions wait here): the
      // first failure is kept and thrown once the writer is drained.
      let failed: { error: unknown } | null = null;
      const writer = new GroupWriter(
        (b) =>
          commit(b).catch((error: unknown) => {
            failed ??= { error };
            throw error;
          }),
        bounds.maxPendingExecutions,
        {},
        bounds.maxPendingExecutions,
        undefined,
        bounds.linger,
      );
      for (const b of data.batches) {
        const first = b.executions[0]!;
        await writer.add(first.task_id, first.date_time, b);
      }
      await writer.drain();
      if (failed) throw (failed as { error: unknown }).error;
      transactions = writer.transactions;
    } else {
      for (const b of data.batches) await commit(b);
      transactions = data.batches.length;
    }
    if (keepRollups) await refresher.finish();
    const wallMs = performance.now() - t0;
    const counts = (await warehouse.counts()) as Record<string, number>;
    await checkCount(data, async (table) => counts[table] ?? -1);
    if (keepRollups) {
      for (const sql of rollupsMatchSqls(warehouse)) {
        const wrong = await warehouse.query(sql, ['0001-01-01', '9999-12-31']);
        if (wrong.length > 0)
          throw new Error(`load: the aggregates differ from the rows: ${JSON.stringify(wrong[0])}`);
      }
    }
    return { ...result(wallMs, data.rows), transactions };
  } finally {
    await warehouse.close();
  }
}

export async function adapterLoadDuckdb(data: LoadData, options: AdapterLoadOptions = {}): Promise<LoadRun> {
  const tmp = tempDir('load-adapter');
  try {
    return await adapterLoad(`duckdb:${join(tmp.dir, 'adapter.duckdb')}`, data, options);
  } finally {
    tmp.remove();
  }
}

// ---- raw DuckDB: Appender into plain tables ---------------------------------------------------

const DAY_MS = 86_400_000;

function duckValue(kind: ColumnKind, v: unknown): DuckDBValue {
  if (v === null || v === undefined) return null;
  switch (kind) {
    case 'bigint':
      return BigInt(v as number);
    case 'date':
      return dateValue(Date.parse(`${v as string}T00:00:00Z`) / DAY_MS);
    case 'timestamptz':
      return timestampTZValue(BigInt(Date.parse(v as string)) * 1000n);
    case 'json':
      return JSON.stringify(v);
    case 'money':
    case 'text':
      return String(v);
    default:
      return v as number | boolean;
  }
}

const CHUNK_ROWS = 2048;

async function appendRaw(c: DuckDBConnection, spec: AnyTableSpec, rows: readonly unknown[]): Promise<void> {
  if (rows.length === 0) return;
  const appender = await c.createAppender(`raw_${spec.table}`);
  try {
    const types = spec.columns.map((_, i) => appender.columnType(i));
    for (let start = 0; start < rows.length; start += CHUNK_ROWS) {
      const part = rows.slice(start, start + CHUNK_ROWS) as Record<string, unknown>[];
      const chunk = DuckDBDataChunk.create(types, part.length);
      chunk.setColumns(spec.columns.map((col) => part.map((r) => duckValue(col.kind, r[col.name]))));
      appender.appendDataChunk(chunk);
    }
    appender.flushSync();
  } finally {
    appender.closeSync();
  }
}

/** The raw tables' column list, and with `keys` the primary key the warehouse's table has. */
function rawColumns(spec: AnyTableSpec, sqlType: Record<ColumnKind, string>, keys: boolean): string {
  const cols = spec.columns.map((col) => `"${col.name}" ${sqlType[col.kind]}`).join(', ');
  return keys ? `${cols}, PRIMARY KEY (${spec.key.map((k) => `"${k}"`).join(', ')})` : cols;
}

/**
 * Raw DuckDB. `perBatch`: one Appender per table per batch, in one transaction per batch, the
 * adapter's transaction granularity; otherwise one Appender per table for all the rows, flushed
 * once at the end: the ceiling. `keys`: the tables have the warehouse's primary keys (DuckDB
 * keeps an ART index for each, on every append).
 */
export async function rawLoadDuckdb(data: LoadData, perBatch: boolean, keys = false): Promise<LoadRun> {
  const tmp = tempDir('load-raw');
  // Opened as a run opens its warehouse (its threads, buffer pool and checkpoint threshold): with
  // DuckDB's defaults (every core, a checkpoint every 16MB of WAL, each rewriting the keys' ART
  // indexes) the raw path was 0.8x as fast in one pass and 0.6x with the keys, in its batches.
  let db: SharedDatabase | null = null;
  let c: DuckDBConnection | null = null;
  try {
    db = await acquireDatabase(join(tmp.dir, 'raw.duckdb'), { settings: { threads: RUN_DUCKDB_THREADS } });
    const conn = (c = await connect(db));
    for (const { spec } of COLLECTIONS) {
      await c.run(`CREATE TABLE raw_${spec.table} (${rawColumns(spec, DUCKDB_SQL_TYPE, keys)})`);
    }
    const all = perBatch ? null : allRows(data);
    const t0 = performance.now();
    if (all) {
      for (const { key, spec } of COLLECTIONS) await appendRaw(c, spec, all[key]);
    } else {
      for (const b of data.batches) {
        await c.run('BEGIN TRANSACTION');
        for (const { key, spec } of COLLECTIONS) await appendRaw(c, spec, b[key]);
        await c.run('COMMIT');
      }
    }
    const wallMs = performance.now() - t0;
    await checkCount(data, async (table) => {
      const r = await conn.runAndReadAll(`SELECT count(*)::INTEGER AS n FROM raw_${table}`);
      return Number(r.getRows()[0]![0]);
    });
    return result(wallMs, data.rows);
  } finally {
    c?.closeSync();
    if (db) releaseDatabase(db);
    tmp.remove();
  }
}

// ---- raw PostgreSQL: COPY into plain tables ---------------------------------------------------

const COPY_SPECIAL = /[\\\n\r\t]/g;
const COPY_ESCAPE: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** A value in COPY text format: `\N` for NULL, backslash, newline, CR and tab escaped. */
function copyValue(kind: ColumnKind, v: unknown): string {
  if (v === null || v === undefined) return '\\N';
  if (kind === 'boolean') return v ? 't' : 'f';
  const s = kind === 'json' ? JSON.stringify(v) : String(v);
  return s.replace(COPY_SPECIAL, (ch) => COPY_ESCAPE[ch]!);
}

/** COPY text lines for `rows`, in chunks of about 1 MB. */
function* copyChunks(spec: AnyTableSpec, rows: readonly unknown[]): Generator<string> {
  let buf = '';
  for (const row of rows as Record<string, unknown>[]) {
    buf += spec.columns.map((col) => copyValue(col.kind, row[col.name])).join('\t') + '\n';
    if (buf.length >= 1 << 20) {
      yield buf;
      buf = '';
    }
  }
  if (buf) yield buf;
}

async function copyInto(client: pg.Client, spec: AnyTableSpec, rows: readonly unknown[]): Promise<void> {
  if (rows.length === 0) return;
  const cols = spec.columns.map((col) => `"${col.name}"`).join(', ');
  const stream = client.query(copyFrom(`COPY raw_${spec.table} (${cols}) FROM STDIN`));
  await pipeline(Readable.from(copyChunks(spec, rows)), stream);
}

/**
 * Raw PostgreSQL. `perBatch`: one transaction per batch with a COPY per table, the adapter's
 * transaction granularity; otherwise one COPY per table for all the rows: the ceiling. `keys`:
 * the tables have the warehouse's primary keys.
 */
export async function rawLoadPostgres(
  url: string,
  data: LoadData,
  perBatch: boolean,
  keys = false,
): Promise<LoadRun> {
  const client = new pg.Client(url);
  await client.connect();
  try {
    for (const { spec } of COLLECTIONS) {
      await client.query(`CREATE TABLE raw_${spec.table} (${rawColumns(spec, PG_SQL_TYPE, keys)})`);
    }
    const all = perBatch ? null : allRows(data);
    const t0 = performance.now();
    if (all) {
      for (const { key, spec } of COLLECTIONS) await copyInto(client, spec, all[key]);
    } else {
      for (const b of data.batches) {
        await client.query('BEGIN');
        for (const { key, spec } of COLLECTIONS) await copyInto(client, spec, b[key]);
        await client.query('COMMIT');
      }
    }
    const wallMs = performance.now() - t0;
    await checkCount(data, async (table) => {
      const r = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM raw_${table}`);
      return r.rows[0]!.n;
    });
    return result(wallMs, data.rows);
  } finally {
    await client.end();
  }
}

/** Every batch's rows, concatenated per collection (built before the clock starts). */
function allRows(data: LoadData): ExecutionBatch {
  const out: ExecutionBatch = {
    executions: [],
    ranks: [],
    sources: [],
    screenshots: [],
    products: [],
    cards: [],
  };
  for (const b of data.batches) {
    for (const { key } of COLLECTIONS) (out[key] as unknown[]).push(...b[key]);
  }
  return out;
}

/** Every row landed, in each table. */
async function checkCount(data: LoadData, count: (table: string) => Promise<number>): Promise<void> {
  for (const { spec } of COLLECTIONS) {
    const n = await count(spec.table);
    if (n !== data.perTable[spec.table]) {
      throw new Error(`raw load: ${spec.table} has ${n} rows, expected ${data.perTable[spec.table]}`);
    }
  }
}
