/**
 * DuckDB's direct bulk path (src/load/duckdb/direct.ts): mode 'insert' appends typed chunks
 * straight into the geo table. It must store exactly what the staging path's CAST stores: the
 * conversions are checked value by value against DuckDB's CAST, then whole rows loaded both
 * ways are compared column by column; then the execution batch's fast path over it (re-writing
 * a batch, the duplicate-key fallback to the safe path).
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { decimalValue, DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Connection, Driver } from '../../src/load/core/driver.ts';
import { CoreWarehouse } from '../../src/load/core/warehouse.ts';
import { parseDate, parseDecimal, parseTimestamptz } from '../../src/load/duckdb/direct.ts';
import { DuckDBDriver } from '../../src/load/duckdb/driver.ts';
import {
  columnsOf,
  EXECUTION_SOURCES,
  PROMPT_EXECUTIONS_STORED,
  type TableSpec,
} from '../../src/load/tables.ts';
import { silentLogger } from '../../src/log.ts';
import type { Json } from '../../src/transform/rows.ts';
import { createTempDuckDB, type TempDuckDB } from '../helpers/duckdb.ts';
import { batch, card, execution, products, rank, screenshot, source } from './fixtures.ts';

const DIRECT_TS = fileURLToPath(new URL('../../src/load/duckdb/direct.ts', import.meta.url));

// ---- the conversions, against DuckDB's CAST ---------------------------------------------------

let duck: DuckDBConnection;
let instance: DuckDBInstance;

beforeAll(async () => {
  instance = await DuckDBInstance.create(':memory:');
  duck = await instance.connect();
});
afterAll(() => {
  duck?.closeSync();
  instance?.closeSync();
});

/** One value of a SQL expression over the text `$1`; the error message when it fails. */
async function castOf(expr: string, text: string): Promise<unknown> {
  try {
    const r = await duck.runAndReadAll(`SELECT ${expr}`, [text]);
    return r.getRows()[0]![0];
  } catch (e) {
    return { error: (e as Error).message.split('\n')[0] };
  }
}

const OFFSETS = ['+08:00', 'Z', '-05:30', '+0530', '+08', '-00:00', '+14:00', '-12:00', '+23:59'];
const FRACTIONS = [
  '',
  '.0',
  '.1',
  '.123',
  '.000001',
  '.123456',
  '.1234567',
  '.9999999',
  '.123456789',
  '.999999999999',
];
const WALLS = [
  '2026-11-21T08:00:00',
  '2026-11-21 00:00:00',
  '2024-02-29T23:59:59',
  '1970-01-01T00:00:00',
  '1969-12-31T23:59:59',
  '0001-01-01T00:00:00',
  '9999-12-31T23:59:59',
  '1900-03-01T12:34:56',
];

describe('timestamptz: parseTimestamptz = CAST(text AS TIMESTAMPTZ)', () => {
  const cases = WALLS.flatMap((w) => FRACTIONS.flatMap((f) => OFFSETS.map((o) => `${w}${f}${o}`)));
  it(`${cases.length} offsets x fractions x walls`, async () => {
    for (const text of cases) {
      const micros = parseTimestamptz(text);
      expect(micros, text).not.toBeUndefined();
      expect(micros, text).toBe(await castOf('epoch_us(CAST($1 AS TIMESTAMPTZ))', text));
    }
  });

  it('digits after the sixth are truncated, as the CAST does (also before 1970)', async () => {
    expect(parseTimestamptz('2026-11-21T08:00:00.9999999+08:00')).toBe(1795219200999999n);
    expect(parseTimestamptz('1969-12-31T23:59:59.9999995Z')).toBe(-1n);
    expect(await castOf('epoch_us(CAST($1 AS TIMESTAMPTZ))', '1969-12-31T23:59:59.9999995Z')).toBe(-1n);
  });

  it.each([
    '2026-11-21T08:00:00', // no zone: the CAST reads it in the session's TimeZone
    '2026-11-21T08:00+08:00',
    '2026-11-21T24:00:00Z',
    '2026-11-21T08:60:00Z',
    '2026-11-21T08:00:60Z',
    '2026-02-30T08:00:00Z',
    '0000-01-01T00:00:00Z',
    '2026-11-21T08:00:00.Z',
    '2026-11-21T08:00:00+08:00:00',
    '2026-11-21T08:00:00 +08:00',
    ' 2026-11-21T08:00:00Z',
    '2026-11-21t08:00:00Z',
    '2026-11-21T08:00:00z',
    '2026-11-21T08:00:00 UTC',
    '+12026-11-21T08:00:00Z',
  ])('%j is left to the CAST', (text) => {
    expect(parseTimestamptz(text)).toBeUndefined();
  });
});

describe('date: parseDate = CAST(text AS DATE)', () => {
  it.each(['2026-11-21', '1970-01-01', '1969-12-31', '2024-02-29', '2000-02-29', '0001-01-01', '9999-12-31'])(
    '%s',
    async (text) => {
      const days = await castOf("CAST(CAST($1 AS DATE) - DATE '1970-01-01' AS BIGINT)", text);
      expect(BigInt(parseDate(text)!)).toBe(days);
    },
  );
  it.each([
    '2026-02-29',
    '1900-02-29',
    '2026-13-01',
    '2026-00-10',
    '2026-1-2',
    '2026-11-21 ',
    '0000-01-01',
    '20261121',
  ])('%j is left to the CAST', (text) => {
    expect(parseDate(text)).toBeUndefined();
  });
});

describe('money: parseDecimal = CAST(text AS DECIMAL(18, 4))', () => {
  const texts = [
    '0',
    '-0',
    '7',
    '-7',
    '1.5',
    '1.23',
    '1.234',
    '1.2345',
    '1.23456',
    '1.23455',
    '1.23445',
    '1.234449999',
    '1.234450000',
    '-1.23455',
    '-1.23454',
    '0.00005',
    '-0.00005',
    '0.00004',
    '-0.00004',
    '-0.00001',
    '0.99995',
    '-0.99995',
    '0001.10',
    '12345678901234.5678',
    '-12345678901234.5678',
    '99999999999999.9999',
    '-99999999999999.9999',
    '99999999999999.99994',
    '9007199254740993.1',
  ];
  it.each(texts)('%s', async (text) => {
    const cast = await castOf('CAST(CAST($1 AS DECIMAL(18, 4)) AS VARCHAR)', text);
    const unscaled = parseDecimal(text, 18, 4);
    if (typeof cast !== 'string') {
      expect(unscaled, JSON.stringify(cast)).toBeUndefined();
      return;
    }
    expect(decimalValue(unscaled!, 18, 4).toString()).toBe(cast);
  });

  it.each(['99999999999999.99995', '100000000000000', '-100000000000000'])(
    '%s overflows: left to the CAST, which fails',
    async (text) => {
      expect(parseDecimal(text, 18, 4)).toBeUndefined();
      expect(await castOf('CAST($1 AS DECIMAL(18, 4))', text)).toMatchObject({ error: /Could not convert/ });
    },
  );

  it.each(['1e3', '+1.5', ' 1.5', '.5', '5.', '1,5', '', '-', 'NaN'])('%j is left to the CAST', (text) => {
    expect(parseDecimal(text, 18, 4)).toBeUndefined();
  });
});

// ---- whole rows: direct path = staging path ---------------------------------------------------

interface KindsRow {
  id: number;
  big: number | null;
  int: number | null;
  dbl: number | null;
  flag: boolean | null;
  txt: string | null;
  day: string | null;
  ts: string | null;
  amount: string | null;
  doc: Json;
}

const KINDS = columnsOf<KindsRow>('direct_kinds', ['id'], {
  id: 'bigint',
  big: 'bigint?',
  int: 'integer?',
  dbl: 'double?',
  flag: 'boolean?',
  txt: 'text?',
  day: 'date?',
  ts: 'timestamptz?',
  amount: 'money?',
  doc: 'json?',
});

const KINDS_DDL = `CREATE TABLE IF NOT EXISTS geo.direct_kinds (
  id BIGINT PRIMARY KEY, big BIGINT, int INTEGER, dbl DOUBLE, flag BOOLEAN, txt VARCHAR, day DATE,
  ts TIMESTAMPTZ, amount DECIMAL(18, 4), doc JSON, synced_at TIMESTAMPTZ NOT NULL DEFAULT now())`;

/** Every column of direct_kinds as exact text (instants as epoch microseconds, money as decimal text). */
const EXACT = `SELECT id, big, int, dbl, flag, txt, CAST(day AS VARCHAR) AS day, epoch_us(ts) AS ts,
  CAST(amount AS VARCHAR) AS amount, CAST(doc AS VARCHAR) AS doc, typeof(doc) AS doc_type,
  epoch_us(synced_at) AS synced_at FROM geo.direct_kinds ORDER BY id`;

const DOCS: Json[] = [
  { a: 1, b: [true, false, null], c: { d: 'e' } },
  'unicode: 价格 ¥9.90 é ü 😀',
  'quotes " and \' and \\ backslash, \n newline, \t tab, \u0001 control',
  { member: null, nested: { deeper: [{ x: [1, 2, { y: null }] }] } },
  [1, 2.5, -3e-7, 1e21, 2 ** 60, Number.MAX_SAFE_INTEGER],
  '',
  0,
  false,
  [],
  {},
  { '': '', 'key with "quotes"': '价' },
];

function kindsRows(): KindsRow[] {
  const rows: KindsRow[] = [];
  let id = 1;
  const base = (o: Partial<KindsRow>): KindsRow => ({
    id: id++,
    big: null,
    int: null,
    dbl: null,
    flag: null,
    txt: null,
    day: null,
    ts: null,
    amount: null,
    doc: null,
    ...o,
  });
  // Nulls in every nullable kind.
  rows.push(base({}));
  for (const o of ['+08:00', 'Z', '-05:30'])
    for (const f of ['', '.1', '.123', '.123456', '.1234567', '.123456789'])
      rows.push(base({ ts: `2026-11-21T08:09:10${f}${o}` }));
  rows.push(base({ ts: '1969-12-31T23:59:59.9999995Z' }), base({ ts: '0001-01-01T00:00:00+08:00' }));
  for (const amount of [
    '0',
    '1',
    '-1',
    '1.5',
    '-1.25',
    '1.234',
    '-1.2345',
    '1.23455',
    '-1.23455',
    '1.234449',
    '0.00005',
    '-0.00005',
    '-0.00001',
    '99999999999999.9999',
    '-99999999999999.9999',
  ])
    rows.push(base({ amount }));
  for (const day of ['2026-11-21', '2024-02-29', '1969-12-31', '0001-01-01', '9999-12-31'])
    rows.push(base({ day }));
  for (const doc of DOCS) rows.push(base({ doc }));
  for (const big of [0, -1, 2 ** 53 - 1, -(2 ** 53 - 1), 9_007_199_254_740_000])
    rows.push(base({ big, int: -2_147_483_648, dbl: 0.1 + 0.2, flag: big > 0, txt: `t${big}\n价` }));
  rows.push(base({ id: 9_007_199_254_740_991, int: 2_147_483_647, dbl: -0, flag: false, txt: '' }));
  // Every kind at once.
  rows.push(
    base({
      big: 42,
      int: 7,
      dbl: 1.5,
      flag: true,
      txt: 'all',
      day: '2026-11-20',
      ts: '2026-11-20T23:59:59.999999+08:00',
      amount: '-12.3456',
      doc: { all: ['of', 'them'] },
    }),
  );
  return rows;
}

/** The rows with small ids (to offset them into a range of their own). */
function small(rows: KindsRow[]): KindsRow[] {
  return rows.filter((r) => r.id < 1000);
}

interface Db {
  file: TempDuckDB;
  driver: DuckDBDriver;
}

async function openDb(label: string): Promise<Db> {
  const file = createTempDuckDB(label);
  const driver = await DuckDBDriver.open({ path: file.path });
  await driver.connection((c) => c.execute(`CREATE SCHEMA IF NOT EXISTS geo; ${KINDS_DDL}`));
  return { file, driver };
}

async function closeDb(db: Db | undefined): Promise<void> {
  await db?.driver.close();
  db?.file.remove();
}

/** Whether this connection's last load went through the staging table (it exists only then). */
async function staged(c: Connection, spec: { table: string }): Promise<boolean> {
  const [r] = await c.rows<{ n: number }>(
    `SELECT count(*)::INTEGER AS n FROM duckdb_tables() WHERE temporary AND table_name = $1`,
    [`stage_${spec.table}`],
  );
  return r!.n > 0;
}

describe('direct path = staging path, column by column', () => {
  let direct: Db;
  let staging: Db;
  beforeAll(async () => {
    direct = await openDb('direct');
    staging = await openDb('staging');
  });
  afterAll(async () => {
    await closeDb(direct);
    await closeDb(staging);
  });

  it('stores every value as the CAST does', async () => {
    const rows = kindsRows();
    const a = await direct.driver.transaction(async (c) => {
      await c.load(KINDS, rows, 'insert');
      return {
        staged: await staged(c, KINDS),
        now: await c.rows<{ us: unknown }>('SELECT epoch_us(now()) AS us'),
      };
    });
    // On an empty table, upsert = insert, through the staging table and its CASTs.
    const b = await staging.driver.transaction(async (c) => {
      await c.load(KINDS, rows, 'upsert');
      return { staged: await staged(c, KINDS) };
    });
    expect(a.staged).toBe(false);
    expect(b.staged).toBe(true);

    const got = await direct.driver.connection((c) => c.rows<Record<string, unknown>>(EXACT));
    const want = await staging.driver.connection((c) => c.rows<Record<string, unknown>>(EXACT));
    expect(got).toHaveLength(rows.length);
    const strip = (r: Record<string, unknown>) => ({ ...r, synced_at: undefined });
    expect(got.map(strip)).toEqual(want.map(strip));
    for (const r of got) expect(r.doc_type).toBe('JSON');
    // synced_at: the transaction's now(), for every row (as the column's DEFAULT gives an INSERT).
    expect(new Set(got.map((r) => r.synced_at))).toEqual(new Set([a.now[0]!.us]));
  });

  it('in one transaction, direct and staged rows get the same synced_at', async () => {
    const rows = small(kindsRows()).map((r) => ({ ...r, id: r.id + 1_000_000 }));
    const half = Math.floor(rows.length / 2);
    await direct.driver.transaction(async (c) => {
      await c.load(KINDS, rows.slice(0, half), 'insert');
      await new Promise((r) => setTimeout(r, 5));
      await c.load(KINDS, rows.slice(half), 'upsert');
    });
    const [r] = await direct.driver.connection((c) =>
      c.rows<{ n: number }>(
        'SELECT count(DISTINCT synced_at)::INTEGER AS n FROM geo.direct_kinds WHERE id BETWEEN 1000000 AND 1999999',
      ),
    );
    expect(r!.n).toBe(1);
  });

  it('a value not converted in JS sends the whole load through the staging CASTs', async () => {
    const rows: KindsRow[] = [
      { ...kindsRows().at(-1)!, id: 2_000_001 },
      // No zone: the CAST reads it in the session's TimeZone (UTC here).
      { ...kindsRows()[0]!, id: 2_000_002, ts: '2026-11-21 08:00:00', amount: '1e3' },
    ];
    const wasStaged = await direct.driver.transaction(async (c) => {
      await c.load(KINDS, rows, 'insert');
      return staged(c, KINDS);
    });
    expect(wasStaged).toBe(true);
    const got = await direct.driver.connection((c) =>
      c.rows<{ ts: unknown; amount: unknown }>(
        'SELECT epoch_us(ts) AS ts, CAST(amount AS VARCHAR) AS amount FROM geo.direct_kinds WHERE id = 2000002',
      ),
    );
    expect(got).toEqual([{ ts: 1795248000000000, amount: '1000.0000' }]);
  });

  it('JSON text the CAST rejects (a lone surrogate) fails as before, nothing stored', async () => {
    const row = { ...kindsRows()[0]!, id: 3_000_001, doc: 'half a pair: \ud800' };
    await expect(direct.driver.transaction((c) => c.load(KINDS, [row], 'insert'))).rejects.toThrow(
      /surrogate/,
    );
    await expect(staging.driver.transaction((c) => c.load(KINDS, [row], 'upsert'))).rejects.toThrow(
      /surrogate/,
    );
    const [r] = await direct.driver.connection((c) =>
      c.rows<{ n: number }>('SELECT count(*)::INTEGER AS n FROM geo.direct_kinds WHERE id = 3000001'),
    );
    expect(r!.n).toBe(0);
  });

  it('a duplicate key fails the load with an error isDuplicateKey knows, and rolls back', async () => {
    const rows = [{ ...kindsRows()[0]!, id: 4_000_001 }];
    await direct.driver.transaction((c) => c.load(KINDS, rows, 'insert'));
    const fresh = { ...rows[0]!, id: 4_000_002 };
    let error: unknown;
    try {
      await direct.driver.transaction(async (c) => {
        await c.load(KINDS, [fresh], 'insert');
        await c.load(KINDS, rows, 'insert');
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(Error);
    expect(direct.driver.isDuplicateKey(error)).toBe(true);
    const ids = await direct.driver.connection((c) =>
      c.rows<{ id: number }>('SELECT id FROM geo.direct_kinds WHERE id IN (4000001, 4000002) ORDER BY id'),
    );
    expect(ids).toEqual([{ id: 4_000_001 }]);
  });

  it('a failed Appender is cleared: collected later, it does not abort a later transaction', () => {
    // In a child process with --expose-gc: garbage collection is what would flush its rows again.
    const script = `
      const { DuckDBInstance, DuckDBDataChunk } = await import('@duckdb/node-api');
      const { closeAppender } = await import(${JSON.stringify(DIRECT_TS)});
      const instance = await DuckDBInstance.create(':memory:');
      const c = await instance.connect();
      await c.run('CREATE TABLE t (id BIGINT PRIMARY KEY); INSERT INTO t VALUES (1)');
      await (async () => {
        await c.run('BEGIN');
        const appender = await c.createAppender('t');
        const chunk = DuckDBDataChunk.create([appender.columnType(0)], 1);
        chunk.setColumns([[1n]]);
        try { appender.appendDataChunk(chunk); appender.flushSync(); } catch { closeAppender(appender, false); }
        await c.run('ROLLBACK');
      })();
      await c.run('BEGIN');
      for (let i = 0; i < 3; i++) { globalThis.gc(); await new Promise((r) => setTimeout(r, 20)); }
      await c.run('INSERT INTO t VALUES (2)');
      await c.run('COMMIT');
      process.stdout.write('ok');`;
    const out = execFileSync(
      process.execPath,
      ['--expose-gc', '--import', 'tsx', '--input-type=module', '-e', script],
      { encoding: 'utf8' },
    );
    expect(out).toBe('ok');
  });

  it('deleting keys and appending the same keys in one transaction works (twice, too)', async () => {
    const rows = small(kindsRows()).map((r) => ({ ...r, id: r.id + 5_000_000 }));
    await direct.driver.transaction((c) => c.load(KINDS, rows, 'insert'));
    const ids = rows.map((r) => r.id);
    await direct.driver.transaction(async (c) => {
      for (const txt of ['first', 'second']) {
        await c.execute(`DELETE FROM geo.direct_kinds WHERE ${direct.driver.inIds('id', 1)}`, [ids]);
        await c.load(
          KINDS,
          rows.map((r) => ({ ...r, txt })),
          'insert',
        );
      }
    });
    const got = await direct.driver.connection((c) =>
      c.rows<{ txt: string; n: number }>(
        'SELECT txt, count(*)::INTEGER AS n FROM geo.direct_kinds WHERE id BETWEEN 5000000 AND 5999999 GROUP BY txt',
      ),
    );
    expect(got).toEqual([{ txt: 'second', n: rows.length }]);
  });
});

// ---- the execution batch over it --------------------------------------------------------------

describe('writeExecutionBatch on DuckDB over the direct path', () => {
  let file: TempDuckDB;
  let driver: DuckDBDriver;
  let w: CoreWarehouse;
  beforeAll(async () => {
    file = createTempDuckDB('direct-batch');
    driver = await DuckDBDriver.open({ path: file.path });
    w = new CoreWarehouse(driver as Driver, silentLogger);
    await w.migrate();
  });
  afterAll(async () => {
    await w?.close();
    file?.remove();
  });

  const ids = [7_000_000_001, 7_000_000_002];
  const day = batch({
    executions: ids.map((id, i) =>
      execution(id, {
        created_at: `2026-11-20T08:00:00.12345${i}789+08:00`,
        updated_at: i ? null : '2026-11-20T00:00:00.5Z',
        customer_id: i ? null : 9_007_199_254_740_991,
      }),
    ),
    ranks: ids.flatMap((id) => [rank(id, 0, 'Acme', 1), rank(id, 1, 'Beta', null)]),
    sources: ids.map((id, i) => source(8_000_000_000 + i, id, 'example.com')),
    screenshots: [screenshot(ids[0]!)],
    products: ids.map((id) => products(id, { field_labels: { q: 'say "hi" \\ 价' } })),
    cards: ids.flatMap((id) => [card(id, 1), card(id, 2, { card: null })]),
  });

  /** Every execution table's rows (instants as epoch microseconds, JSON as text), synced_at aside. */
  async function snapshot(): Promise<Record<string, unknown[]>> {
    const out: Record<string, unknown[]> = {};
    for (const table of [
      'prompt_executions',
      'execution_ranks',
      'execution_sources',
      'execution_screenshots',
      'execution_products',
      'product_cards',
    ]) {
      out[table] = await driver.connection((c) =>
        c.rows(`SELECT COLUMNS(c -> c <> 'synced_at')::VARCHAR FROM geo.${table} ORDER BY ALL`),
      );
    }
    return out;
  }

  it('writes a batch, and re-writes it unchanged (delete + append in one transaction)', async () => {
    await w.writeExecutionBatch(day);
    const first = await snapshot();
    expect(first.prompt_executions).toHaveLength(2);
    expect(first.execution_ranks).toHaveLength(4);
    expect(first.product_cards).toHaveLength(4);
    const [e] = await driver.connection((c) =>
      c.rows<{ us: number }>(
        `SELECT epoch_us(created_at) AS us FROM geo.prompt_executions WHERE prompt_task_id = ${ids[1]}`,
      ),
    );
    expect(e!.us).toBe(1795132800123451); // 7+ fraction digits truncated, as the CAST does
    await w.writeExecutionBatch(day);
    expect(await snapshot()).toEqual(first);
  });

  it('a key the fast path cannot clear (a moved source) takes the safe path', async () => {
    const other = 7_000_000_003;
    const moved = batch({
      executions: [execution(other)],
      sources: [source(8_000_000_000, other, 'moved.example')],
    });
    const isDuplicateKey = driver.isDuplicateKey.bind(driver);
    const seen: unknown[] = [];
    driver.isDuplicateKey = (e) => (seen.push(e), isDuplicateKey(e));
    try {
      await w.writeExecutionBatch(moved);
    } finally {
      driver.isDuplicateKey = isDuplicateKey;
    }
    // The fast path's Appender met the stored key, and the safe path wrote the batch.
    expect(seen).toHaveLength(1);
    expect(String(seen[0])).toMatch(/Failed to append: Duplicate key/);
    const rows = await driver.connection((c) =>
      c.rows<{ source_id: number; prompt_task_id: number; domain: string }>(
        'SELECT source_id, prompt_task_id, domain FROM geo.execution_sources WHERE source_id = 8000000000',
      ),
    );
    expect(rows).toEqual([{ source_id: 8_000_000_000, prompt_task_id: other, domain: 'moved.example' }]);
    // And the connection is fine afterwards.
    await w.writeExecutionBatch(day);
    expect((await snapshot()).prompt_executions).toHaveLength(3);
  });

  it('execution tables are filled whole by the direct path (no column left to a default)', async () => {
    // prompt_executions as the writer stores it: the execution and its children's counts.
    for (const spec of [PROMPT_EXECUTIONS_STORED, EXECUTION_SOURCES] as TableSpec<unknown>[]) {
      const [r] = await driver.connection((c) =>
        c.rows<{ n: number }>(
          `SELECT count(*)::INTEGER AS n FROM duckdb_columns() WHERE schema_name = 'geo' AND table_name = $1`,
          [spec.table],
        ),
      );
      expect(r!.n).toBe(spec.columns.length + 1);
    }
  });
});
