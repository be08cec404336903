/**
 * Commands against a small DuckDB buffer pool, through the real command line: `export` honours
 * GEO_DUCKDB_MEMORY_LIMIT for the engine it opens (from a DuckDB file and from PostgreSQL) and
 * writes day by day within it; where the limit binds, a command says so in one line naming the
 * setting (exit 1).
 *
 * The warehouse: a day synced from the simulator (40 executions), copied 40 times onto it and
 * each of the 9 days before, answers 5 times as long (~1 KB): 16,000 executions, ~17 MB, which
 * one COPY partitioned by day (as export wrote them before) could not write within 48MB; written
 * here within a 32MB pool. (Much longer answers would not test the export: DuckDB reads 2,048
 * rows at a time, and a scan of ~40 KB answers needs 128 MB whatever the query.)
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.ts';
import { runCli } from '../helpers/cli.ts';
import { syncOnce, withWarehouse } from '../helpers/sync.ts';
import { warehouseTargets } from '../helpers/targets.ts';

const DAYS = 10;
const COPIES = 40;
const REPEAT = 5;
/** Holds a day's file being written, not every day's at once. */
const POOL = '32MB';
/** Too small for any statement of the export or the checks. */
const TINY = '1MB';
const ONE_LINE =
  /^error: DuckDB ran out of memory at its limit of 1MB \(GEO_DUCKDB_MEMORY_LIMIT\): raise it, e.g. GEO_DUCKDB_MEMORY_LIMIT=1GB\n$/;

let sim: RunningSimulator;
beforeAll(async () => {
  sim = await startSimulator({ seed: 61, days: 1, executionsPerDay: 40 });
});
afterAll(async () => {
  await sim?.close();
});

/**
 * The warehouse's executions copied COPIES times onto their day and each of the DAYS - 1 days
 * before (new IDs: the simulator's are below 2^42), day by day as syncs append them, answers
 * REPEAT times as long. Through the dialect's own client.
 */
async function grow(dialect: 'duckdb' | 'postgres', target: string): Promise<void> {
  const run = await client(dialect, target);
  try {
    const columns = (
      await run.rows(
        `SELECT column_name AS c FROM information_schema.columns
         WHERE table_schema = 'geo' AND table_name = 'prompt_executions' ORDER BY ordinal_position`,
      )
    ).map((r) => String(r.c));
    const made: Record<string, string> = {
      prompt_task_id: `s.prompt_task_id + (d.v * ${COPIES} + c.v + 1) * 4398046511104`,
      date_time: 'CAST(s.date_time - CAST(d.v AS INTEGER) AS DATE)',
      answer: `repeat(s.answer, ${REPEAT})`,
    };
    const series = (n: number) =>
      dialect === 'postgres' ? `generate_series(0, ${n - 1})` : `range(0, ${n})`;
    await run.exec(
      `INSERT INTO geo.prompt_executions (${columns.join(', ')})
       SELECT ${columns.map((c) => made[c] ?? `s.${c}`).join(', ')}
       FROM geo.prompt_executions s CROSS JOIN ${series(DAYS)} AS d(v) CROSS JOIN ${series(COPIES)} AS c(v)
       ORDER BY d.v DESC, c.v`,
    );
  } finally {
    await run.close();
  }
}

/** Rows of the exported files, read as a BI tool reads them (DuckDB with its own defaults). */
async function readFiles(sql: string): Promise<Record<string, unknown>[]> {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  try {
    return (await c.runAndReadAll(sql)).getRowObjectsJS();
  } finally {
    c.closeSync();
    db.closeSync();
  }
}

async function client(dialect: 'duckdb' | 'postgres', target: string) {
  if (dialect === 'postgres') {
    const pg = (await import('pg')).default;
    const c = new pg.Client(target);
    await c.connect();
    return {
      rows: async (sql: string) => (await c.query(sql)).rows as Record<string, unknown>[],
      exec: async (sql: string) => void (await c.query(sql)),
      close: () => c.end(),
    };
  }
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  await c.run(`ATTACH '${target.replace(/^duckdb:/, '').replace(/'/g, "''")}' AS wh`);
  await c.run('USE wh');
  return {
    rows: async (sql: string) => (await c.runAndReadAll(sql)).getRowObjectsJS(),
    exec: async (sql: string) => void (await c.run(sql)),
    close: async () => {
      c.closeSync();
      db.closeSync();
    },
  };
}

for (const target of warehouseTargets('memory-limit')) {
  describe.skipIf(target.skip)(`a small DuckDB pool (${target.dialect})`, () => {
    let url: string;
    let out: string;
    beforeAll(async () => {
      url = await target.create();
      await syncOnce({ baseUrl: sim.url, target: url, dates: sim.world.dates() });
      await grow(target.dialect, url);
      out = mkdtempSync(join(tmpdir(), 'geo-memory-limit-'));
    }, 60_000);
    afterAll(async () => {
      await target.drop();
      rmSync(out, { recursive: true, force: true });
    });

    it.each(['parquet', 'csv'] as const)(
      `export --format %s writes every day within GEO_DUCKDB_MEMORY_LIMIT=${POOL}, a folder a day`,
      { timeout: 60_000 },
      async (format) => {
        const dir = join(out, format);
        const temp = join(out, `temp-${format}`);
        const r = await runCli(
          ['export', '--format', format, '--out', dir, '--tables', 'prompt_executions'],
          {
            GEO_WAREHOUSE: url,
            GEO_DUCKDB_MEMORY_LIMIT: POOL,
            GEO_DUCKDB_TEMP_DIR: temp,
          },
        );
        expect(r.code, r.stderr).toBe(0);
        const folder = join(dir, 'prompt_executions');
        const days = readdirSync(folder).sort();
        expect(days).toHaveLength(DAYS);
        // From DuckDB a day is one COPY, one file; from PostgreSQL a file per row group's worth of text.
        for (const day of days) {
          const files = readdirSync(join(folder, day));
          if (target.dialect === 'duckdb') expect(files, day).toHaveLength(1);
          else expect(files.length, day).toBeGreaterThan(0);
        }
        // The engine's spill folder inside GEO_DUCKDB_TEMP_DIR is removed with the export.
        expect(readdirSync(temp)).toEqual([]);

        const rows = `CAST(prompt_task_id AS VARCHAR) AS id, CAST(day AS VARCHAR) AS day, md5(answer) AS answer`;
        const expected = await withWarehouse(url, (w) =>
          w.query(
            `SELECT ${rows.replace('CAST(day', 'CAST(date_time')} FROM geo.prompt_executions ORDER BY prompt_task_id`,
          ),
        );
        const read =
          format === 'parquet'
            ? `read_parquet('${folder}/**/*.parquet', hive_partitioning = true)`
            : `read_csv('${folder}/**/*.csv', hive_partitioning = true, header = true, allow_quoted_nulls = false)`;
        const files = await readFiles(`SELECT ${rows} FROM ${read} ORDER BY prompt_task_id`);
        expect(files.length).toBe(expected.length);
        expect(files).toEqual(expected);
        expect(
          Number(
            (
              await withWarehouse(url, (w) =>
                w.query('SELECT sum(length(answer)) AS n FROM geo.prompt_executions'),
              )
            )[0]!.n,
          ),
        ).toBeGreaterThan(12e6);
      },
    );

    // check opens the warehouse itself: a DuckDB file's engine only (PostgreSQL has no such limit).
    const tooSmall: [string, string[]][] = [['export', ['export', '--format', 'parquet', '--out', 'DIR']]];
    if (target.dialect === 'duckdb') tooSmall.push(['check', ['check']]);
    it.each(tooSmall)(
      '%s at a limit too small says so in one line naming the setting (exit 1)',
      { timeout: 60_000 },
      async (_, args) => {
        const r = await runCli(
          args.map((a) => (a === 'DIR' ? join(out, 'tiny') : a)),
          { GEO_WAREHOUSE: url, GEO_DUCKDB_MEMORY_LIMIT: TINY },
        );
        expect(r.code, r.stderr).toBe(1);
        expect(r.stderr).toMatch(ONE_LINE);
      },
    );
  });
}
