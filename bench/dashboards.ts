/**
 * Scenario 8, dashboards: a year of a large account, grown from a day synced from the
 * simulator (bench/dashboards-grow.ts), on PostgreSQL or DuckDB. `rollups refresh` then fills the
 * per-day aggregates (timed; rollups_match then proves them equal to a recomputation over the
 * whole year), and each dashboard tile (bench/dashboards-queries.ts) is timed warm against the
 * views as they are and as they were before (bench/dashboards/before-views.*.sql, in schema
 * bench_raw), and the two answers compared.
 *
 * Queries run as a BI tool runs them: PostgreSQL through a client of its own, with a statement
 * timeout for the old views; DuckDB in an instance of its own on the file with DuckDB's defaults
 * (as the duckdb CLI or a BI tool opens it), interrupted at the same timeout.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import pg from 'pg';
import { createApi, runLocked } from '../dist/app.js';
import { batchDays } from '../dist/load/core/rollups.js';
import { loadConfig } from '../dist/config.js';
import { rollupsMatchSqls } from '../dist/load/core/rollups.js';
import { GEO_TABLES } from '../dist/load/tables.js';
import { openWarehouse } from '../dist/load/index.js';
import { silentLogger } from '../dist/log.js';
import { startSimulator } from '../dist/simulator/index.js';
import { comparable, DASHBOARD_QUERIES, type DashboardParams } from './dashboards-queries.ts';
import { growYear } from './dashboards-grow.ts';
import { BENCH_DIR, tempDir } from './paths.ts';
import { createDatabase } from './postgres.ts';

type Dialect = 'postgres' | 'duckdb';

export interface DashboardSize {
  executionsPerDay: number;
  days: number;
  /** Timed runs of each query after its warm-up run. */
  runs: number;
  /** Timed runs against the old views (each may take up to the timeout). */
  beforeRuns: number;
  /** A query on the old views longer than this is stopped and reported as `> timeout`. */
  beforeTimeoutMs: number;
}

/** The synced day the year grows from: the simulator's 400 executions over 50 platform tasks. */
const SEED = { seed: 707, executionsPerDay: 400 };

export interface QueryFigure {
  name: string;
  rows: number;
  /** Warm: p50, p95 and max of the timed runs, ms. */
  p50: number;
  p95: number;
  max: number;
  /** The same over the old views; null when it ran out of time (`beforeTimedOut`). */
  before: { p50: number; p95: number; max: number } | null;
  beforeTimedOut: boolean;
  /** Both answers equal (numbers to 9 digits); null when the old views ran out of time. */
  equal: boolean | null;
  /**
   * PostgreSQL: the same query right after the year was written, before the run's tidy (VACUUM
   * (ANALYZE) of the tables it grew), as autovacuum may not yet have come; null on DuckDB.
   */
  untidied: { p50: number; p95: number; max: number } | null;
  /** PostgreSQL: the same query with `jit = off` (the BI role's setting); null on DuckDB. */
  jitOff: { p50: number; p95: number; max: number } | null;
}

export interface DashboardRun {
  dialect: Dialect;
  executionsPerDay: number;
  days: number;
  rows: Record<string, number>;
  growMs: number;
  refreshMs: number;
  refreshTransactions: number;
  /** The run's tidy after the year was written (PostgreSQL VACUUM (ANALYZE) of the tables grown), ms, and which. */
  tidyMs: number;
  tidied: string[];
  /** rollups_match over the whole year: rows that differ (0), and how long it took. */
  mismatches: number;
  matchMs: number;
  queries: QueryFigure[];
}

export interface Session {
  exec(sql: string): Promise<void>;
  rows(
    sql: string,
    params?: (string | number)[],
    timeoutMs?: number,
  ): Promise<Record<string, unknown>[] | 'timeout'>;
  close(): Promise<void>;
}

export async function pgSession(url: string): Promise<Session> {
  const c = new pg.Client(url);
  await c.connect();
  return {
    exec: async (sql) => void (await c.query(sql)),
    rows: async (sql, params = [], timeoutMs = 0) => {
      await c.query(`SET statement_timeout = ${Math.max(0, Math.floor(timeoutMs))}`);
      try {
        return (await c.query(sql, params)).rows as Record<string, unknown>[];
      } catch (e) {
        if ((e as { code?: string }).code === '57014') return 'timeout';
        throw e;
      }
    },
    close: () => c.end(),
  };
}

export async function duckdbSession(path: string): Promise<Session> {
  const instance = await DuckDBInstance.create(path);
  const c: DuckDBConnection = await instance.connect();
  return {
    exec: async (sql) => void (await c.run(sql)),
    rows: async (sql, params = [], timeoutMs = 0) => {
      let timedOut = false;
      const timer = timeoutMs > 0 ? setTimeout(() => ((timedOut = true), c.interrupt()), timeoutMs) : null;
      try {
        return (await c.runAndReadAll(sql, params)).getRowObjectsJS() as Record<string, unknown>[];
      } catch (e) {
        if (timedOut) return 'timeout';
        throw e;
      } finally {
        if (timer) clearTimeout(timer);
      }
    },
    close: async () => {
      c.closeSync();
      instance.closeSync();
    },
  };
}

const VIEW_NAMES = [
  'brand_rank_daily',
  'citation_domains_daily',
  'executions_daily',
  'executions_enriched',
  'execution_brand_ranks',
  'brand_visibility_daily',
  'brand_visibility_weekly',
  'brand_share_of_voice_daily',
  'monitoring_task_hosts',
  'citations_daily',
  'citations_weekly',
  'question_rank_daily',
  'citations_account_daily',
  'brand_visibility_account_daily',
];

/** The old views, created in schema bench_raw over the geo tables. */
function beforeViewsSql(dialect: Dialect): string {
  let sql = readFileSync(join(BENCH_DIR, 'dashboards', `before-views.${dialect}.sql`), 'utf8');
  if (dialect === 'duckdb') {
    // Its tables and views were named unqualified (bound in the view's schema): qualify them.
    const known = new Set([...GEO_TABLES.map((t) => t.table), ...VIEW_NAMES]);
    sql = sql.replace(/\b(FROM|JOIN)\s+([a-z_]+)\b/g, (m, kw: string, name: string) =>
      known.has(name) ? `${kw} geo.${name}` : m,
    );
  }
  for (const v of VIEW_NAMES) sql = sql.replaceAll(`geo.${v}`, `bench_raw.${v}`);
  return `CREATE SCHEMA IF NOT EXISTS bench_raw;\n${sql}`;
}

const pct = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
function spread(ms: number[]): { p50: number; p95: number; max: number } {
  const s = [...ms].sort((a, b) => a - b);
  return { p50: pct(s, 0.5), p95: pct(s, 0.95), max: s.at(-1)! };
}

async function time(
  s: Session,
  sql: string,
  params: (string | number)[],
  runs: number,
  timeoutMs: number,
): Promise<{ ms: number[]; rows: Record<string, unknown>[] } | 'timeout'> {
  let rows = await s.rows(sql, params, timeoutMs); // warm-up
  if (rows === 'timeout') return 'timeout';
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    rows = await s.rows(sql, params, timeoutMs);
    if (rows === 'timeout') return 'timeout';
    ms.push(performance.now() - t0);
  }
  return { ms, rows };
}

/** Syncs the simulator's day into `target` (the account the year grows from). */
async function syncSeed(target: string): Promise<void> {
  const sim = await startSimulator({ ...SEED, days: 1, apiKeys: ['bench-key'] });
  try {
    const config = loadConfig({
      env: {},
      overrides: {
        baseUrl: sim.url,
        apiKey: 'bench-key',
        warehouse: target,
        concurrency: 16,
        requestsPerSecond: 100_000,
        logLevel: 'silent',
      },
    });
    const api = createApi(config, silentLogger);
    const warehouse = await openWarehouse(target, { logger: silentLogger, migrate: true });
    try {
      const day = sim.world.dates().at(-1)!;
      const s = await runLocked(api, warehouse, config, silentLogger, {
        kind: 'sync',
        dates: [day],
        customers: [],
        force: false,
        args: { dates: [day] },
        waitForLockMs: 0,
      });
      if (s.status !== 'success') throw new Error(`seed sync: ${s.status} ${s.error ?? ''}`);
    } finally {
      await warehouse.close();
      await api.close();
    }
  } finally {
    await sim.close();
  }
}

/**
 * The year of the scenario in `target` (empty, migrated or not): the simulator's day synced, then
 * grown inside the warehouse to `size.days` days of about `size.executionsPerDay` executions
 * (bench/dashboards-grow.ts). The aggregates are left for the caller to refresh. Returns the
 * growth's wall time, ms. `open` opens a session on the same warehouse.
 */
export async function buildYear(
  dialect: Dialect,
  target: string,
  open: () => Promise<Session>,
  size: { executionsPerDay: number; days: number },
  log: (line: string) => void,
): Promise<number> {
  await syncSeed(target);
  const seedRows = await withSession(open, (s) => s.rows('SELECT count(*) AS n FROM geo.prompt_executions'));
  const copies = Math.max(1, Math.round(size.executionsPerDay / Number(first(seedRows).n)));
  log(`${dialect}: growing ${size.days} days x ${copies} copies of a synced day`);
  const t0 = performance.now();
  await withSession(open, async (s) => {
    const columnsOf = async (table: string) =>
      (
        (await s.rows(
          `SELECT column_name FROM information_schema.columns WHERE table_schema = 'geo' AND table_name = '${table}'
           ORDER BY ordinal_position`,
        )) as { column_name: string }[]
      ).map((r) => r.column_name);
    await growYear(dialect, (sql) => s.exec(sql), columnsOf, { days: size.days, copies });
    // No VACUUM: the warehouse as a backfill leaves it (the sync's own tidy is timed apart).
    if (dialect === 'duckdb') await s.exec('CHECKPOINT');
  });
  return performance.now() - t0;
}

export async function runDashboards(
  dialect: Dialect,
  size: DashboardSize,
  log: (line: string) => void,
): Promise<DashboardRun> {
  const tmp = tempDir('dashboards');
  const db = dialect === 'postgres' ? await createDatabase('dashboards') : null;
  const path = join(tmp.dir, 'dashboards.duckdb');
  const target = db ? db.url : `duckdb:${path}`;
  const open = () => (db ? pgSession(db.url) : duckdbSession(path));
  try {
    const growMs = await buildYear(dialect, target, open, size, (line) => log(`dashboards ${line}`));

    // rollups refresh, as the command does it (batches of days, one transaction each).
    let t0 = performance.now();
    const w = await openWarehouse(target, { logger: silentLogger });
    let transactions = 0;
    try {
      for (const b of batchDays(await w.rollupDays())) {
        await w.refreshRollups(b.from, b.to);
        transactions++;
      }
    } finally {
      await w.close();
    }
    const refreshMs = performance.now() - t0;
    log(`dashboards ${dialect}: refreshed in ${(refreshMs / 1000).toFixed(1)} s`);

    // Right after the backfill, before the sync's tidy: each query as an analyst opening the
    // dashboards then meets it (PostgreSQL; DuckDB has nothing to tidy).
    const params0 = await withSession(open, (s) => dashboardParams(s));
    const untidied = new Map<string, { p50: number; p95: number; max: number }>();
    if (dialect === 'postgres') {
      await withSession(open, async (s) => {
        for (const q of DASHBOARD_QUERIES) {
          const r = await time(s, q.sql('geo'), q.params(params0), size.runs, 0);
          if (r !== 'timeout') untidied.set(q.name, spread(r.ms));
        }
      });
    }
    // The run's end: the tables it grew a lot made ready (Warehouse.tidyGrownTables).
    t0 = performance.now();
    const tw = await openWarehouse(target, { logger: silentLogger });
    let tidied: string[] = [];
    try {
      tidied = await tw.tidyGrownTables();
    } finally {
      await tw.close();
    }
    const tidyMs = performance.now() - t0;
    log(`dashboards ${dialect}: tidied ${tidied.join(', ') || 'nothing'} in ${(tidyMs / 1000).toFixed(1)} s`);

    return await withSession(open, async (s) => {
      const rows: Record<string, number> = {};
      for (const t of [
        'prompt_executions',
        'execution_ranks',
        'execution_sources',
        'rollup_executions_daily',
        'rollup_brands_daily',
        'rollup_domains_daily',
        'rollup_question_brands_daily',
      ])
        rows[t] = Number(first(await s.rows(`SELECT count(*) AS n FROM geo.${t}`)).n);
      const span = first(
        await s.rows(
          'SELECT CAST(min(date) AS VARCHAR) AS first, CAST(max(date) AS VARCHAR) AS last FROM geo.rollup_executions_daily',
        ),
      );
      const [from, to] = [String(span.first), String(span.last)];
      t0 = performance.now();
      let mismatches = 0;
      for (const sql of rollupsMatchSqls({ dialect })) {
        const rows = await s.rows(sql, [from, to]);
        mismatches += rows === 'timeout' ? 1 : rows.length;
      }
      const matchMs = performance.now() - t0;
      const params = await dashboardParams(s);
      await s.exec(beforeViewsSql(dialect));
      const queries: QueryFigure[] = [];
      for (const q of DASHBOARD_QUERIES) {
        const after = await time(s, q.sql('geo'), q.params(params), size.runs, 0);
        if (after === 'timeout') throw new Error(`${q.name}: timed out without a timeout`);
        const before = await time(
          s,
          q.sql('bench_raw'),
          q.params(params),
          size.beforeRuns,
          size.beforeTimeoutMs,
        );
        let jitOff: QueryFigure['jitOff'] = null;
        if (dialect === 'postgres') {
          await s.exec('SET jit = off');
          const r = await time(s, q.sql('geo'), q.params(params), size.runs, 0);
          await s.exec('RESET jit');
          if (r !== 'timeout') jitOff = spread(r.ms);
        }
        const figure: QueryFigure = {
          name: q.name,
          rows: after.rows.length,
          ...spread(after.ms),
          untidied: untidied.get(q.name) ?? null,
          jitOff,
          before: before === 'timeout' ? null : spread(before.ms),
          beforeTimedOut: before === 'timeout',
          equal:
            before === 'timeout'
              ? null
              : JSON.stringify(comparable(after.rows)) === JSON.stringify(comparable(before.rows)),
        };
        queries.push(figure);
        log(
          `  ${q.name}: ${figure.p50.toFixed(0)} ms (p95 ${figure.p95.toFixed(0)})` +
            (figure.untidied ? `, before the tidy p95 ${figure.untidied.p95.toFixed(0)}` : '') +
            (figure.jitOff ? `, jit off p95 ${figure.jitOff.p95.toFixed(0)}` : '') +
            ', before the aggregates ' +
            (figure.before
              ? `${figure.before.p50.toFixed(0)} ms, equal: ${figure.equal}`
              : `> ${size.beforeTimeoutMs} ms`),
        );
      }
      return {
        dialect,
        executionsPerDay: size.executionsPerDay,
        days: size.days,
        rows,
        growMs,
        refreshMs,
        refreshTransactions: transactions,
        tidyMs,
        tidied,
        mismatches,
        matchMs,
        queries,
      };
    });
  } finally {
    await db?.drop().catch(() => undefined);
    tmp.remove();
  }
}

export async function withSession<T>(
  open: () => Promise<Session>,
  fn: (s: Session) => Promise<T>,
): Promise<T> {
  const s = await open();
  try {
    return await fn(s);
  } finally {
    await s.close();
  }
}

export function first(rows: Record<string, unknown>[] | 'timeout'): Record<string, unknown> {
  if (rows === 'timeout' || rows.length === 0) throw new Error('expected a row');
  return rows[0]!;
}

/** The largest monitoring task, its largest platform task, and the last day. */
async function dashboardParams(s: Session): Promise<DashboardParams> {
  const p = first(
    await s.rows(`SELECT project_id, sum(executions) AS n FROM geo.rollup_executions_daily
      GROUP BY project_id ORDER BY n DESC, project_id LIMIT 1`),
  );
  const t = first(
    await s.rows(
      `SELECT task_id, sum(executions) AS n FROM geo.rollup_executions_daily WHERE project_id = $1
       GROUP BY task_id ORDER BY n DESC, task_id LIMIT 1`,
      [Number(p.project_id)],
    ),
  );
  const d = first(await s.rows('SELECT CAST(max(date) AS VARCHAR) AS last FROM geo.rollup_executions_daily'));
  return { project_id: Number(p.project_id), task_id: Number(t.task_id), last: String(d.last) };
}
