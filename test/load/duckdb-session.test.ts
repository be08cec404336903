/**
 * The DuckDB session keeps its parameterized statements prepared (src/load/duckdb/session.ts):
 * a kept statement must answer exactly as a statement prepared anew would, whatever happened
 * between two uses: the catalog changed (a migration), its last run failed, a transaction was
 * rolled back, other statements pushed it out of the cache, or two callers used it at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  acquireDatabase,
  connect,
  releaseDatabase,
  type SharedDatabase,
} from '../../src/load/duckdb/database.ts';
import { Session } from '../../src/load/duckdb/session.ts';
import { createTempDuckDB, type TempDuckDB } from '../helpers/duckdb.ts';

describe('DuckDB session: kept prepared statements', () => {
  let file: TempDuckDB;
  let db: SharedDatabase;
  let s: Session;

  beforeAll(async () => {
    file = createTempDuckDB('session');
    db = await acquireDatabase(file.path);
    s = new Session(await connect(db), db);
    await s.run('CREATE TABLE t (id BIGINT PRIMARY KEY, a VARCHAR)');
  });
  afterAll(() => {
    s.close();
    releaseDatabase(db);
    file.remove();
  });

  const byIds = 'SELECT * FROM t WHERE id IN (SELECT unnest(CAST($1 AS BIGINT[]))) ORDER BY id';
  const insert = 'INSERT INTO t (id, a) VALUES ($1, $2)';

  it('binds new values each time (lists included) and counts the rows changed', async () => {
    expect(await s.run(insert, [1, 'one'])).toBe(1);
    expect(await s.run(insert, [2, 'two'])).toBe(1);
    expect(await s.rows(byIds, [[1]])).toEqual([{ id: 1, a: 'one' }]);
    expect(await s.rows(byIds, [[1, 2, 3]])).toEqual([
      { id: 1, a: 'one' },
      { id: 2, a: 'two' },
    ]);
    expect(await s.rows(byIds, [[]])).toEqual([]);
  });

  it('answers with the catalog as it is now: a column added, a table re-created', async () => {
    expect(await s.rows(byIds, [[1]])).toEqual([{ id: 1, a: 'one' }]);
    await s.run('ALTER TABLE t ADD COLUMN b INTEGER DEFAULT 7');
    expect(await s.rows(byIds, [[1]])).toEqual([{ id: 1, a: 'one', b: 7 }]);
    await s.run('DROP TABLE t; CREATE TABLE t (id BIGINT PRIMARY KEY, a VARCHAR, c DOUBLE)');
    await s.run('INSERT INTO t VALUES (1, $1, $2)', ['again', 2.5]);
    expect(await s.rows(byIds, [[1, 2]])).toEqual([{ id: 1, a: 'again', c: 2.5 }]);
  });

  it('a run that failed (a duplicate key, in a transaction rolled back) leaves the statement usable', async () => {
    const sql = 'INSERT INTO t (id, a, c) VALUES ($1, $2, $3)';
    await expect(s.run(sql, [1, 'dup', 0])).rejects.toThrow(/duplicate key|PRIMARY KEY|constraint/i);
    await expect(
      s.transaction(async () => {
        await s.run(sql, [10, 'ten', 1]);
        await s.run(sql, [10, 'ten again', 1]);
      }),
    ).rejects.toThrow(/duplicate key|PRIMARY KEY|constraint/i);
    expect(await s.rows(byIds, [[10]])).toEqual([]);
    expect(await s.run(sql, [11, 'eleven', 1])).toBe(1);
    expect(await s.rows(byIds, [[11]])).toEqual([{ id: 11, a: 'eleven', c: 1 }]);
  });

  // Lists are bound as their text where every item reads back the same from it (ids, dates),
  // as LISTs otherwise; one statement text meets both, kept prepared between them.
  const ids = Array.from({ length: 5000 }, (_, i) => i * 7 - 3);
  it.each([
    ['no id', 'BIGINT', []],
    ['one id', 'BIGINT', [0]],
    ['ids at the edges of a safe integer', 'BIGINT', [-(2 ** 53 - 1), -5, 2 ** 53 - 1]],
    ['5,000 ids', 'BIGINT', ids],
    ['dates', 'VARCHAR', ['2026-11-01', '2026-11-02', '1999-01-31']],
    [
      'texts a list text would misread',
      'VARCHAR',
      ['a,b', 'NULL', "it's", ' spaced ', '[x]', '', '"q"', '2026-11-01'],
    ],
    ['dates again', 'VARCHAR', ['2026-11-03']],
  ] as const)('a list of %s is read back exactly', async (_label, type, list) => {
    const sql = `SELECT CAST($1 AS ${type}[]) AS l, (SELECT count(*) FROM (SELECT unnest(CAST($1 AS ${type}[])))) AS n`;
    for (let i = 0; i < 2; i++) {
      expect(await s.rows(sql, [list as readonly number[] | readonly string[]])).toEqual([
        { l: [...list], n: list.length },
      ]);
    }
  });

  it('a value of another type than the last (an integer, a BIGINT, a double, null) is bound as itself', async () => {
    const sql = 'SELECT $1 + 1 AS w';
    expect(await s.rows(sql, [1])).toEqual([{ w: 2 }]);
    expect(await s.rows(sql, [2 ** 40])).toEqual([{ w: 2 ** 40 + 1 }]);
    expect(await s.rows(sql, [1.5])).toEqual([{ w: 2.5 }]);
    expect(await s.rows(sql, [1e300])).toEqual([{ w: 1e300 }]);
    expect(await s.rows(sql, [null])).toEqual([{ w: null }]);
    expect(await s.rows(sql, [3])).toEqual([{ w: 4 }]);
  });

  it('more statements than it keeps: each still answers right, whether kept, let go or kept again', async () => {
    const texts = Array.from({ length: 100 }, (_, i) => `SELECT $1 + ${i} AS v`);
    // Met once (not kept), twice (kept, the first let go past the limit), three times.
    for (const round of [1, 2, 3])
      for (const [i, sql] of texts.entries()) expect(await s.rows(sql, [round])).toEqual([{ v: round + i }]);
  });

  it('several statements in one text with parameters run as before, every time', async () => {
    const sql = 'CREATE OR REPLACE TEMP TABLE several AS SELECT 41 AS x; SELECT x + $1 AS v FROM several';
    for (const n of [1, 2, 3]) expect(await s.rows(sql, [n])).toEqual([{ v: 41 + n }]);
  });

  it('callers of one statement at once each get their own answer, before and after it is kept', async () => {
    const sql = 'SELECT $1 * 2 AS v, count(*) AS n FROM range(200000)';
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all([1, 2, 3, 4].map((x) => s.rows(sql, [x + round])));
      expect(answers.map((r) => r[0])).toEqual([1, 2, 3, 4].map((x) => ({ v: 2 * (x + round), n: 200000 })));
    }
  });
});
