/**
 * The per-day aggregates on both warehouses: after every kind of write and the refresh a run makes,
 * they equal a recomputation from the execution tables (a batch, an execution replaced
 * with fewer ranks, one that moved to another day, rows given without their execution, the
 * deletion of unlisted executions, a refused commit), `owned` follows brand_urls, an execution
 * with a NULL customer_id counts once however often it is written, a refresh repairs a hand edit
 * and deletes rows of a day without executions, and migration 008 fills a warehouse upgraded from
 * a version without them, once.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { openWarehouse, type Warehouse } from '../../src/load/index.ts';
import type { Driver } from '../../src/load/core/driver.ts';
import { RANK_LIMITS } from '../../src/api/schemas/rank-number.ts';
import { rollupsMatchSqls } from '../../src/load/core/rollups.ts';
import { refreshStaleUnits } from '../../src/load/core/stale-units.ts';
import { FenceLostError } from '../../src/load/errors.ts';
import type { Dialect } from '../../src/load/warehouse.ts';
import { damageOpen as damage } from '../helpers/damage.ts';
import { createTempDuckDB } from '../helpers/duckdb.ts';
import { createTestDatabase, postgresReachable } from '../helpers/postgres.ts';
import { batch, execution, rank, screenshot, source } from './fixtures.ts';

const pgUp = await postgresReachable();
const D1 = '2026-11-16';
const D2 = '2026-11-17';
const RANGE = ['2026-11-01', '2026-11-30'];
/** The day of fixtures.ts's executions. */
const FIXTURE_DAY = '2026-11-20';

async function freshTarget(dialect: Dialect): Promise<{ target: string; drop: () => Promise<void> }> {
  if (dialect === 'postgres') {
    const db = await createTestDatabase();
    return { target: db.url, drop: db.drop };
  }
  const db = createTempDuckDB('rollups');
  return { target: db.target, drop: async () => db.remove() };
}

/** `check`'s execution_child_counts: the executions whose counts differ from their child rows. */
const CHILD_COUNTS = readFileSync(
  fileURLToPath(new URL('../../sql/checks/execution_child_counts.sql', import.meta.url)),
  'utf8',
);

/**
 * What rollups_match reports (the aggregate rows that differ from a recomputation), and the
 * executions whose counts differ from their child rows (execution_child_counts): the
 * recomputation of rollup_executions_daily reads those counts, so the two hold it together.
 */
async function mismatches(w: Warehouse): Promise<Record<string, unknown>[]> {
  const rows: Record<string, unknown>[] = [];
  for (const sql of rollupsMatchSqls(w)) rows.push(...(await w.query(sql, RANGE)));
  for (const r of await w.query(CHILD_COUNTS, RANGE))
    rows.push({ table_name: 'execution_child_counts', ...r });
  for (const [view, sql] of Object.entries(ACCOUNT_VIEWS))
    for (const r of await w.query(sql, RANGE)) rows.push({ table_name: view, ...r });
  return rows.sort((a, b) => String(a.table_name).localeCompare(String(b.table_name)));
}

/**
 * The views of the whole account against what they stand for, the per-platform-task views summed
 * by day (what a tile of the whole account computed before them): the rows that differ, both ways.
 */
const ACCOUNT_VIEWS: Record<string, string> = {
  brand_visibility_account_daily: differing(
    `SELECT date, brand, executions, executions_ranked, best_position FROM geo.brand_visibility_account_daily`,
    `SELECT date, brand, CAST(sum(executions) AS BIGINT), CAST(sum(executions_ranked) AS BIGINT),
       min(best_position) FROM geo.brand_visibility_daily`,
    'date, brand',
  ),
  citations_account_daily: differing(
    `SELECT date, domain, citations, executions_citing FROM geo.citations_account_daily`,
    `SELECT date, domain, CAST(sum(citations) AS BIGINT), CAST(sum(executions_citing) AS BIGINT)
       FROM geo.citations_daily`,
    'date, domain',
  ),
};

function differing(account: string, summed: string, by: string): string {
  const days = 'date BETWEEN CAST($1 AS DATE) AND CAST($2 AS DATE)';
  const a = `${account} WHERE ${days}`;
  const b = `${summed} WHERE ${days} GROUP BY ${by}`;
  return `SELECT 'account' AS only_in, * FROM ((${a}) EXCEPT ALL (${b})) x
    UNION ALL SELECT 'summed' AS only_in, * FROM ((${b}) EXCEPT ALL (${a})) y`;
}

const num = (v: unknown) => (v === null ? null : Number(v));

/**
 * The warehouse as a version before `migration` left it: without `tables`, the migration not
 * applied (the views dropped first, as they read those tables; the next migrate re-creates them).
 */
async function asBefore(w: Warehouse, migration: string, tables: readonly string[]): Promise<void> {
  for (const view of await w.query(
    "SELECT table_name FROM information_schema.views WHERE table_schema = 'geo'",
  ))
    await damage(w, `DROP VIEW IF EXISTS geo.${String(view.table_name)} CASCADE`);
  for (const table of tables) await damage(w, `DROP TABLE geo.${table}`);
  await damage(w, `DELETE FROM geo.schema_migrations WHERE version IN ('${migration}', 'views')`);
}

async function executionsOf(w: Warehouse, date: string, taskId = 10): Promise<number> {
  const rows = await w.query(
    'SELECT sum(executions) AS n FROM geo.rollup_executions_daily WHERE date = CAST($1 AS DATE) AND task_id = $2',
    [date, taskId],
  );
  return num(rows[0]?.n) ?? 0;
}

async function brandRow(
  w: Warehouse,
  date: string,
  brand: string,
): Promise<Record<string, unknown> | undefined> {
  const rows = await w.query(
    `SELECT sum(rank_items) AS rank_items, sum(valid_rank_items) AS valid_rank_items,
       sum(executions_ranked) AS executions_ranked, min(best_position) AS best_position,
       sum(best_position_sum) AS best_position_sum, sum(top1_executions) AS top1_executions
     FROM geo.rollup_brands_daily WHERE date = CAST($1 AS DATE) AND brand = $2 HAVING count(*) > 0`,
    [date, brand],
  );
  return rows[0] ? Object.fromEntries(Object.entries(rows[0]).map(([k, v]) => [k, num(v)])) : undefined;
}

async function owned(w: Warehouse, domain: string): Promise<boolean[]> {
  const rows = await w.query('SELECT DISTINCT owned FROM geo.rollup_domains_daily WHERE domain = $1', [
    domain,
  ]);
  return rows.map((r) => Boolean(r.owned));
}

async function seedTasks(w: Warehouse): Promise<void> {
  await w.upsertMonitoringTasks([
    {
      project_id: 100,
      customer_id: 1000,
      project_name: 'Robot vacuums',
      brand_cate_desc: '',
      brand_desc_list: 'Acme',
      status: 1,
      status_name: 'in progress',
      created_at: null,
      task_count: 1,
      prompts: [],
    },
  ]);
  await w.updateMonitoringTaskConfig([
    {
      project_id: 100,
      week_restart: 0,
      only_rank: 0,
      rank_match: 0,
      brand_urls: ['https://acme.com'],
      emails: [],
    },
  ]);
}

/**
 * A warehouse whose writes refresh the aggregates of the units they marked stale when they
 * return, as a run does during and at its end: what a reader sees at rest.
 */
function refreshing(w: Warehouse): Warehouse {
  const writes = new Set(['writeExecutionBatch', 'completeUnit', 'updateMonitoringTaskConfig']);
  return new Proxy(w, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      if (!writes.has(String(prop))) return value.bind(target);
      return async (...args: unknown[]) => {
        const result: unknown = await value.apply(target, args);
        await target.refreshStaleRollups();
        return result;
      };
    },
  });
}

for (const dialect of ['duckdb', 'postgres'] as const) {
  describe.skipIf(dialect === 'postgres' && !pgUp)(`per-day aggregates (${dialect})`, () => {
    const cleanup: (() => Promise<void>)[] = [];
    afterAll(async () => {
      for (const drop of cleanup) await drop();
    });
    const open = async () => {
      const t = await freshTarget(dialect);
      cleanup.push(t.drop);
      return refreshing(await openWarehouse(t.target, { migrate: true }));
    };

    it('a day of the largest visibility and score the reader stores is summed exactly (the bound before overflowed at 1,025)', async () => {
      const w = await open();
      try {
        await seedTasks(w);
        const n = 1100;
        const executions = Array.from({ length: n }, (_, i) =>
          execution(i + 1, { task_id: i % 2 ? 11 : 10 }),
        );
        const ranks = executions.map((e) =>
          rank(e.prompt_task_id, 0, 'Acme', 1, {
            visibility: RANK_LIMITS.visibility,
            score: RANK_LIMITS.score,
          }),
        );
        await w.writeExecutionBatch(batch({ executions, ranks }));
        const [account] = await w.query(
          `SELECT CAST(visibility_sum AS VARCHAR) AS visibility, CAST(score_sum AS VARCHAR) AS score
           FROM geo.rollup_brands_account_daily WHERE brand = 'Acme'`,
        );
        expect(account).toEqual({
          visibility: String(BigInt(n) * BigInt(RANK_LIMITS.visibility)),
          score: String(BigInt(n) * BigInt(RANK_LIMITS.score)),
        });
        expect(await w.query('SELECT count(*) AS n FROM geo.rollup_stale_units')).toEqual([{ n: 0 }]);
        expect(await mismatches(w)).toEqual([]);
      } finally {
        await w.close();
      }
    });

    it('every write keeps them equal to a recomputation, in its own transaction', async () => {
      const w = await open();
      try {
        await seedTasks(w);
        // Two units of day 1, one of them with an execution whose customer_id is NULL.
        await w.writeExecutionBatch(
          batch({
            executions: [
              execution(1, { date_time: D1 }),
              execution(2, { date_time: D1, customer_id: null }),
              execution(3, { date_time: D1, task_id: 11 }),
            ],
            ranks: [
              rank(1, 0, 'Acme', 1),
              rank(1, 1, 'Bolt', 2),
              rank(1, 2, 'Cleo', 3),
              rank(2, 0, 'Acme', 2),
            ],
            sources: [source(11, 1, 'www.acme.com'), source(12, 1, 'news.com'), source(13, 2, 'acme.com')],
            screenshots: [screenshot(1)],
          }),
        );
        expect(await mismatches(w)).toEqual([]);
        expect(await executionsOf(w, D1)).toBe(2);
        expect(await brandRow(w, D1, 'Acme')).toMatchObject({
          rank_items: 2,
          executions_ranked: 2,
          top1_executions: 1,
        });
        expect(await owned(w, 'www.acme.com')).toEqual([true]);

        // Written again (a re-sync): every execution counts once, the NULL customer_id's too.
        await w.writeExecutionBatch(
          batch({
            executions: [execution(2, { date_time: D1, customer_id: null })],
            ranks: [rank(2, 0, 'Acme', 2)],
            sources: [source(13, 2, 'acme.com')],
          }),
        );
        expect(await executionsOf(w, D1)).toBe(2);
        const nullCustomer = await w.query(
          'SELECT executions FROM geo.executions_daily WHERE customer_id IS NULL AND date = CAST($1 AS DATE)',
          [D1],
        );
        expect(nullCustomer.map((r) => num(r.executions))).toEqual([1]);

        // Replaced with one rank item fewer (Cleo gone) and its best rank lost.
        await w.writeExecutionBatch(
          batch({
            executions: [execution(1, { date_time: D1 })],
            ranks: [rank(1, 0, 'Acme', 3), rank(1, 1, 'Bolt', 2)],
            sources: [source(12, 1, 'news.com')],
          }),
        );
        expect(await mismatches(w)).toEqual([]);
        expect(await brandRow(w, D1, 'Cleo')).toBeUndefined();
        expect(await brandRow(w, D1, 'Acme')).toMatchObject({ best_position: 2, top1_executions: 0 });

        // Moved to another day: its old day forgets it.
        await w.writeExecutionBatch(
          batch({
            executions: [execution(2, { date_time: D2, customer_id: null })],
            ranks: [rank(2, 0, 'Acme', 2)],
          }),
        );
        expect(await mismatches(w)).toEqual([]);
        expect([await executionsOf(w, D1), await executionsOf(w, D2)]).toEqual([1, 1]);

        // Rank rows given without their execution replace its ranks: its unit follows.
        await w.writeExecutionBatch(batch({ ranks: [rank(1, 0, 'Zeta', 1)] }));
        expect(await mismatches(w)).toEqual([]);
        expect(await brandRow(w, D1, 'Zeta')).toMatchObject({ top1_executions: 1 });

        // Closing a unit that no longer lists an execution deletes it and its aggregates' share,
        // with a batch and alone.
        await w.writeExecutionBatch(batch({}), [
          {
            task_id: 10,
            date: D1,
            seenPromptTaskIds: [],
            checkpoint: {
              task_id: 10,
              date: D1,
              run_id: 'r',
              finished_at: new Date().toISOString(),
              executions: 0,
              listed_total: 0,
            },
          },
        ]);
        expect(await mismatches(w)).toEqual([]);
        expect(await executionsOf(w, D1)).toBe(0);
        await w.completeUnit({
          task_id: 10,
          date: D2,
          seenPromptTaskIds: [],
          checkpoint: {
            task_id: 10,
            date: D2,
            run_id: 'r',
            finished_at: new Date().toISOString(),
            executions: 0,
            listed_total: 0,
          },
        });
        expect(await mismatches(w)).toEqual([]);
        expect(await w.query('SELECT * FROM geo.rollup_brands_daily WHERE task_id = 10')).toEqual([]);
      } finally {
        await w.close();
      }
    });

    it('random batches, replaced and deleted, keep them equal to the SQL recomputation (seeded)', async () => {
      const w = await open();
      try {
        await seedTasks(w);
        await w.updateMonitoringTaskConfig([
          {
            project_id: 100,
            week_restart: 0,
            only_rank: 0,
            rank_match: 0,
            brand_urls: ['https://www.d1.cn/x', 'd3.com:443'],
            emails: [],
          },
        ]);
        // mulberry32: every bit of it varies (an LCG's low bits alternate).
        let seed = 20261125;
        const rnd = (n: number) => {
          seed = (seed + 0x6d2b79f5) | 0;
          let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
          t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
          return ((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n) | 0;
        };
        const pick = <T>(xs: readonly T[]) => xs[rnd(xs.length)]!;
        let sourceId = 1;
        for (let round = 0; round < 4; round++) {
          const ids = Array.from({ length: 25 }, () => 1 + rnd(40));
          const executions = [...new Set(ids)].map((id) =>
            execution(id, {
              date_time: pick([D1, D2]),
              task_id: pick([10, 11]),
              customer_id: pick([1000, null]),
              engine: pick(['deepseek', 'doubao']),
              prompt_name: pick(['Q1', 'Q2', 'Q3']),
              result_status: pick(['available', 'missing']),
              screenshot_url: pick([null, '', 'https://img/x.png']),
            }),
          );
          const ranks = executions.flatMap((e) =>
            Array.from({ length: rnd(5) }, (_, ordinal) =>
              rank(
                e.prompt_task_id,
                ordinal,
                pick(['Acme', 'Bolt', 'Cleo', 'acme']),
                pick([null, 1, 2, 3, 4, 9]),
                {
                  visibility: pick([null, 10, 55]),
                  score: pick([null, 3]),
                },
              ),
            ),
          );
          const sources = executions.flatMap((e) =>
            Array.from({ length: rnd(4) }, () =>
              source(
                sourceId++,
                e.prompt_task_id,
                pick(['d1.cn', 'shop.d1.cn', 'D3.com', 'x.d3.com.', 'other.org']),
              ),
            ),
          );
          const screenshots = executions
            .filter(() => rnd(2) === 0)
            .map((e) => screenshot(e.prompt_task_id, { screenshot_url: pick(['', 'https://s/1.png']) }));
          await w.writeExecutionBatch(batch({ executions, ranks, sources, screenshots }), [
            {
              task_id: 10,
              date: pick([D1, D2]),
              // Listed: a random half of what is stored for it; the rest is deleted.
              seenPromptTaskIds: Array.from({ length: 20 }, () => 1 + rnd(40)),
              checkpoint: {
                task_id: 10,
                date: D1,
                run_id: 'r',
                finished_at: new Date().toISOString(),
                executions: 0,
                listed_total: 0,
              },
            },
          ]);
          expect(await mismatches(w), `round ${round}`).toEqual([]);
        }
        // The draw reached every case: both owned and not, a NULL customer, a brand without rank.
        const owned = await w.query('SELECT DISTINCT owned FROM geo.rollup_domains_daily ORDER BY owned');
        expect(owned.map((r) => Boolean(r.owned))).toEqual([false, true]);
        const exact = await w.query(
          "SELECT count(*) AS n FROM geo.rollup_domains_daily WHERE domain = 'd1.cn' AND owned",
        );
        expect(Number(exact[0]!.n)).toBeGreaterThan(0);
        const nulls = await w.query(
          'SELECT count(*) AS n FROM geo.rollup_executions_daily WHERE customer_id IS NULL',
        );
        expect(Number(nulls[0]!.n)).toBeGreaterThan(0);
        const unranked = await w.query(
          'SELECT count(*) AS n FROM geo.rollup_brands_daily WHERE best_position IS NULL',
        );
        expect(Number(unranked[0]!.n)).toBeGreaterThan(0);
      } finally {
        await w.close();
      }
    });

    it('a unit read in several batches of new executions adds each batch to its aggregates', async () => {
      const w = await open();
      try {
        await seedTasks(w);
        // Batch 1: Q1 ranks Acme 3rd, cites a.com; batch 2: Q1 again without ranks (a run more for
        // Acme's row), Q2 ranks Acme 1st and Bolt, cites a.com again; batch 3: a NULL customer.
        await w.writeExecutionBatch(
          batch({
            executions: [execution(1, { prompt_name: 'Q1' })],
            ranks: [rank(1, 0, 'Acme', 3)],
            sources: [source(11, 1, 'a.com')],
          }),
        );
        expect(await mismatches(w)).toEqual([]);
        await w.writeExecutionBatch(
          batch({
            executions: [execution(2, { prompt_name: 'Q1' }), execution(3, { prompt_name: 'Q2' })],
            ranks: [rank(3, 0, 'Acme', 1), rank(3, 1, 'Bolt', null, { visibility: 5 })],
            sources: [source(31, 3, 'a.com'), source(32, 3, 'acme.com')],
            screenshots: [screenshot(2)],
          }),
        );
        expect(await mismatches(w)).toEqual([]);
        await w.writeExecutionBatch(
          batch({ executions: [execution(4, { prompt_name: 'Q1', customer_id: null })] }),
        );
        expect(await mismatches(w)).toEqual([]);
        expect(await brandRow(w, '2026-11-20', 'Acme')).toMatchObject({
          best_position: 1,
          executions_ranked: 2,
        });
        const q1 = await w.query(
          "SELECT runs FROM geo.rollup_question_brands_daily WHERE question = 'Q1' AND brand = 'Acme'",
        );
        expect(q1).toEqual([{ runs: 3 }]);
      } finally {
        await w.close();
      }
    });

    it('a source that moved to another execution leaves its old unit recomputed too', async () => {
      const w = await open();
      try {
        await seedTasks(w);
        await w.writeExecutionBatch(
          batch({
            executions: [execution(1), execution(2, { task_id: 11 })],
            sources: [source(11, 1, 'a.com'), source(12, 2, 'b.com')],
          }),
        );
        // Upstream, source 11 now belongs to execution 2 (of another platform task).
        await w.writeExecutionBatch(
          batch({
            executions: [execution(2, { task_id: 11 })],
            sources: [source(11, 2, 'a.com'), source(12, 2, 'b.com')],
          }),
        );
        expect(await mismatches(w)).toEqual([]);
        expect(await w.query("SELECT task_id FROM geo.rollup_domains_daily WHERE domain = 'a.com'")).toEqual([
          { task_id: 11 },
        ]);
        // Execution 1 has no source left, and its unit no citation.
        expect(await w.query('SELECT sources FROM geo.prompt_executions WHERE prompt_task_id = 1')).toEqual([
          { sources: 0 },
        ]);
        expect(await w.query('SELECT citations FROM geo.rollup_executions_daily WHERE task_id = 10')).toEqual(
          [{ citations: 0 }],
        );
      } finally {
        await w.close();
      }
    });

    it('a JSON null among brand_urls is no host (the sync and the recomputation agree)', async () => {
      const w = await open();
      try {
        await seedTasks(w);
        const urls = ['x.cn', null] as unknown as string[];
        await w.updateMonitoringTaskConfig([
          { project_id: 100, week_restart: 0, only_rank: 0, rank_match: 0, brand_urls: urls, emails: [] },
        ]);
        await w.writeExecutionBatch(
          batch({ executions: [execution(1)], sources: [source(11, 1, 'evil.null')] }),
        );
        expect(await owned(w, 'evil.null')).toEqual([false]);
        expect(await mismatches(w)).toEqual([]);
      } finally {
        await w.close();
      }
    });

    /** A process's warehouse on a fresh, seeded target, left as its writes leave it (no refresh). */
    const oneWarehouse = async (fn: (w: Warehouse) => Promise<void>) => {
      const t = await freshTarget(dialect);
      cleanup.push(t.drop);
      const w = await openWarehouse(t.target, { migrate: true });
      try {
        await seedTasks(w);
        await fn(w);
      } finally {
        await w.close();
      }
    };
    /** Two processes' warehouses on one fresh, seeded target (A migrated it). */
    const twoWarehouses = async (fn: (a: Warehouse, b: Warehouse) => Promise<void>) => {
      const t = await freshTarget(dialect);
      cleanup.push(t.drop);
      const a = await openWarehouse(t.target, { migrate: true });
      const b = await openWarehouse(t.target);
      try {
        await seedTasks(a);
        await fn(a, b);
      } finally {
        await b.close();
        await a.close();
      }
    };
    const driverOf = (w: Warehouse) => (w as unknown as { driver: Driver }).driver;

    /**
     * Two writers of one fresh database, A and B, its tasks seeded. `slow` is A with a fence that
     * holds each of its write transactions 1.5 s before it commits; `thenB` starts B's write 400 ms
     * after the slow one began, while A's transaction is still open.
     */
    const twoWriters = (
      fn: (w: {
        a: Warehouse;
        slow: Warehouse;
        thenB: (write: (b: Warehouse) => Promise<unknown>) => Promise<void>;
      }) => Promise<void>,
    ) =>
      twoWarehouses(async (a, b) => {
        const slow = a.withFence({
          what: 'a slow commit',
          sql: 'SELECT 1 AS owned FROM (SELECT pg_sleep(1.5)) s',
          params: [],
        });
        await fn({
          a,
          slow,
          thenB: async (write) => {
            await new Promise((r) => setTimeout(r, 400));
            await write(b);
          },
        });
      });

    it.runIf(dialect === 'postgres')(
      'two refreshes of one unit at once: the second waits, then refreshes only what the first did not see',
      () =>
        twoWriters(async ({ a, slow, thenB }) => {
          await a.writeExecutionBatch(batch({ executions: [execution(1), execution(2)] }));
          // A's refresh holds the unit's lock and its new aggregate rows 1.5 s before it commits.
          const first = slow.refreshStaleRollups();
          // Meanwhile B writes (a writer waits for no refresh) and refreshes: it waits for A's lock.
          await thenB(async (b) => {
            await b.writeExecutionBatch(batch({ executions: [execution(3)] }));
            await b.refreshStaleRollups();
          });
          expect(await first).toMatchObject({ units: 1 });
          expect(await mismatches(a)).toEqual([]);
          expect(await a.query('SELECT executions FROM geo.rollup_executions_daily')).toEqual([
            { executions: 3 },
          ]);
          expect(await a.query('SELECT * FROM geo.rollup_stale_units')).toEqual([]);
        }),
    );

    // A refresh of a large day is split into batches of units (REFRESH_BATCH_EXECUTIONS): two
    // processes may refresh disjoint units of one day at once, no unit lock in common. Driven
    // here through the core, one unit each, A holding its transaction open 1.5 s.
    it.runIf(dialect === 'postgres')(
      'two refreshes of disjoint units of one day at once: the second waits for the day, then sums the first’s into the account’s rows',
      () =>
        twoWarehouses(async (a, b) => {
          await a.writeExecutionBatch(
            batch({
              executions: [execution(1), execution(2, { task_id: 11 })],
              ranks: [rank(1, 0, 'Acme', 1), rank(2, 0, 'Acme', 2)],
              sources: [source(11, 1, 'a.com'), source(21, 2, 'a.com')],
            }),
          );
          const refresh = (w: Warehouse, task_id: number, holdMs: number) =>
            driverOf(w).transaction(async (c) => {
              await refreshStaleUnits(driverOf(w), c, [{ task_id, date: FIXTURE_DAY }]);
              if (holdMs > 0) await c.execute(`SELECT pg_sleep(${holdMs / 1000})`);
            });
          const first = refresh(a, 10, 1500);
          await new Promise((r) => setTimeout(r, 400));
          await refresh(b, 11, 0);
          await first;
          expect(await mismatches(a)).toEqual([]);
          expect(
            await a.query(
              `SELECT CAST(executions AS INTEGER) AS executions, CAST(executions_ranked AS INTEGER) AS ranked
               FROM geo.rollup_brands_account_daily WHERE brand = 'Acme'`,
            ),
          ).toEqual([{ executions: 2, ranked: 2 }]);
          expect(
            await a.query(
              'SELECT CAST(citations AS INTEGER) AS citations FROM geo.rollup_domains_account_daily',
            ),
          ).toEqual([{ citations: 2 }]);
        }),
    );

    // A refresh deletes its units' markers first, as it reads them (DELETE ... RETURNING).
    it('a refresh that fails puts back the markers it deleted; the next one takes them', () =>
      oneWarehouse(async (a) => {
        await a.writeExecutionBatch(batch({ executions: [execution(1), execution(2, { task_id: 11 })] }));
        const driver = driverOf(a);
        const units = [10, 11].map((task_id) => ({ task_id, date: FIXTURE_DAY }));
        await expect(
          driver.transaction(async (c) => {
            expect(await refreshStaleUnits(driver, c, units)).toHaveLength(2);
            throw new Error('fails after the recomputation');
          }),
        ).rejects.toThrow('fails after the recomputation');
        const marked = 'SELECT CAST(task_id AS INTEGER) AS task_id FROM geo.rollup_stale_units ORDER BY 1';
        expect(await a.query(marked)).toEqual([{ task_id: 10 }, { task_id: 11 }]);
        expect(await a.query('SELECT * FROM geo.rollup_executions_daily')).toEqual([]);
        await a.refreshStaleRollups();
        expect(await a.query(marked)).toEqual([]);
        expect(await mismatches(a)).toEqual([]);
      }));

    it.runIf(dialect === 'postgres')(
      'a marker a writer commits after a refresh deleted its unit’s markers stays, and the next refresh takes it',
      () =>
        twoWarehouses(async (a, b) => {
          await a.writeExecutionBatch(batch({ executions: [execution(1)] }));
          const driver = driverOf(a);
          await driver.transaction(async (c) => {
            expect(await refreshStaleUnits(driver, c, [{ task_id: 10, date: FIXTURE_DAY }])).toHaveLength(1);
            // Another writer adds to the unit and commits while this refresh is open.
            await b.writeExecutionBatch(batch({ executions: [execution(2)] }));
          });
          const marked = 'SELECT CAST(task_id AS INTEGER) AS task_id FROM geo.rollup_stale_units';
          expect(await a.query(marked)).toEqual([{ task_id: 10 }]);
          await a.refreshStaleRollups();
          expect(await a.query(marked)).toEqual([]);
          expect(await mismatches(a)).toEqual([]);
          expect(
            await a.query('SELECT CAST(executions AS INTEGER) AS n FROM geo.rollup_executions_daily'),
          ).toEqual([{ n: 2 }]);
        }),
    );

    it.runIf(dialect === 'postgres')(
      'a unit refreshed while brand_urls change is decided against the new hosts',
      () =>
        twoWriters(async ({ a, slow, thenB }) => {
          await a.writeExecutionBatch(
            batch({ executions: [execution(1)], sources: [source(11, 1, 'shop.bolt.cn')] }),
          );
          await a.refreshStaleRollups();
          expect(await owned(a, 'shop.bolt.cn')).toEqual([false]);
          // The configuration's transaction decides `owned` again, then holds 1.5 s before it commits.
          const config = slow.updateMonitoringTaskConfig([
            {
              project_id: 100,
              week_restart: 0,
              only_rank: 0,
              rank_match: 0,
              brand_urls: ['bolt.cn'],
              emails: [],
            },
          ]);
          await thenB(async (b) => {
            await b.writeExecutionBatch(
              batch({ executions: [execution(2)], sources: [source(21, 2, 'shop.bolt.cn')] }),
            );
            await b.refreshStaleRollups();
          });
          await config;
          expect(await owned(a, 'shop.bolt.cn')).toEqual([true]);
          expect(await mismatches(a)).toEqual([]);
        }),
    );

    it('a write marks its units stale and leaves their aggregates; rollups_match skips them until the refresh', () =>
      oneWarehouse(async (w) => {
        await w.writeExecutionBatch(batch({ executions: [execution(1)], ranks: [rank(1, 0, 'Acme', 1)] }));
        expect(await w.refreshStaleRollups()).toEqual({ units: 1, executions: 1, batches: 1 });
        const before = await w.query('SELECT * FROM geo.rollup_brands_daily ORDER BY brand');
        // Replaced with another brand, a new execution in another unit, and one deleted by closing.
        await w.writeExecutionBatch(
          batch({
            executions: [execution(1), execution(5, { task_id: 11 })],
            ranks: [rank(1, 0, 'Bolt', 2), rank(5, 0, 'Cleo', 1)],
          }),
        );
        expect(await w.query('SELECT * FROM geo.rollup_brands_daily ORDER BY brand')).toEqual(before);
        const stale = await w.query('SELECT task_id, date FROM geo.rollup_stale_units ORDER BY task_id');
        expect(stale.map((r) => [num(r.task_id), String(r.date)])).toEqual([
          [10, FIXTURE_DAY],
          [11, FIXTURE_DAY],
        ]);
        // Behind, not wrong: the check skips the units marked.
        expect(await mismatches(w)).toEqual([]);
        expect(await w.refreshStaleRollups()).toMatchObject({ units: 2, batches: 1 });
        expect(await w.query('SELECT * FROM geo.rollup_stale_units')).toEqual([]);
        expect(await brandRow(w, FIXTURE_DAY, 'Bolt')).toMatchObject({ rank_items: 1, best_position: 2 });
        expect(await brandRow(w, FIXTURE_DAY, 'Acme')).toBeUndefined();
        expect(await mismatches(w)).toEqual([]);
        // Nothing stale: a refresh does nothing.
        expect(await w.refreshStaleRollups()).toEqual({ units: 0, executions: 0, batches: 0 });
      }));

    it('a refused commit leaves the aggregates as they were, with the rows', async () => {
      const w = await open();
      try {
        await seedTasks(w);
        await w.writeExecutionBatch(batch({ executions: [execution(1)], ranks: [rank(1, 0, 'Acme', 1)] }));
        const before = await w.query('SELECT * FROM geo.rollup_brands_daily');
        const fenced = w.withFence({ what: 'job 1', sql: 'SELECT 1 AS owned WHERE 1 = 0', params: [] });
        await expect(
          fenced.writeExecutionBatch(batch({ executions: [execution(1)], ranks: [rank(1, 0, 'Bolt', 4)] })),
        ).rejects.toBeInstanceOf(FenceLostError);
        expect(await w.query('SELECT * FROM geo.rollup_brands_daily')).toEqual(before);
        expect(await mismatches(w)).toEqual([]);
      } finally {
        await w.close();
      }
    });

    it('owned is decided again when brand_urls change, and only then', async () => {
      const w = await open();
      try {
        await seedTasks(w);
        await w.writeExecutionBatch(
          batch({
            executions: [execution(1), execution(2, { date_time: D2 })],
            sources: [source(11, 1, 'shop.bolt.cn'), source(12, 2, 'acme.com'), source(13, 2, 'www.bolt.cn')],
          }),
        );
        expect(await owned(w, 'shop.bolt.cn')).toEqual([false]);
        const config = { project_id: 100, week_restart: 0, only_rank: 0, rank_match: 0, emails: [] };
        await w.updateMonitoringTaskConfig([{ ...config, brand_urls: ['https://www.Bolt.cn/about'] }]);
        expect(await owned(w, 'shop.bolt.cn')).toEqual([true]);
        expect(await owned(w, 'www.bolt.cn')).toEqual([true]);
        expect(await owned(w, 'acme.com')).toEqual([false]);
        expect(await mismatches(w)).toEqual([]);
        // The same hosts spelled otherwise: nothing to decide, nothing changes.
        await w.updateMonitoringTaskConfig([{ ...config, brand_urls: ['bolt.cn'] }]);
        expect(await owned(w, 'shop.bolt.cn')).toEqual([true]);
        await w.updateMonitoringTaskConfig([{ ...config, brand_urls: [] }]);
        expect(await owned(w, 'shop.bolt.cn')).toEqual([false]);
        expect(await mismatches(w)).toEqual([]);
      } finally {
        await w.close();
      }
    });

    it('rollups_match names a hand edit; a refresh repairs it and deletes rows of a day without executions', async () => {
      const w = await open();
      try {
        await seedTasks(w);
        await w.writeExecutionBatch(batch({ executions: [execution(1)], ranks: [rank(1, 0, 'Acme', 1)] }));
        await damage(w, "UPDATE geo.rollup_brands_daily SET rank_items = 7 WHERE brand = 'Acme'");
        await damage(
          w,
          "UPDATE geo.rollup_brands_account_daily SET executions_ranked = 9 WHERE brand = 'Acme'",
        );
        await damage(
          w,
          `INSERT INTO geo.rollup_executions_daily VALUES
           (CAST('2026-11-02' AS DATE), CAST('2026-11-02' AS DATE), 10, 100, NULL, 'e', 'm', 5, 5, 0, 0, 0, 0)`,
        );
        const found = await mismatches(w);
        // Each table's edit is named once, in its own table (the account's rows are held to the
        // executions, not to the edited units' rows), and in the account's view.
        expect(found.map((r) => [r.table_name, r.only_in])).toEqual([
          ['brand_visibility_account_daily', 'account'],
          ['brand_visibility_account_daily', 'summed'],
          ['rollup_brands_account_daily', 'recomputed'],
          ['rollup_brands_account_daily', 'stored'],
          ['rollup_brands_daily', 'recomputed'],
          ['rollup_brands_daily', 'stored'],
          ['rollup_executions_daily', 'stored'],
        ]);
        expect(String(found[3]!.row_values)).toContain('brand=Acme executions=1 executions_ranked=9');
        expect(String(found[5]!.row_values)).toContain('brand=Acme rank_items=7');
        expect((await w.rollupDays()).map((d) => [d.date, d.executions])).toEqual([
          ['2026-11-02', 0],
          ['2026-11-20', 1],
        ]);
        await w.refreshRollups('2026-11-01', '2026-11-30');
        expect(await mismatches(w)).toEqual([]);
        expect(await w.rollupDays()).toEqual([{ date: '2026-11-20', executions: 1 }]);
      } finally {
        await w.close();
      }
    });

    it('migration 010 counts the children of the executions already stored, and starts with nothing stale', async () => {
      const t = await freshTarget(dialect);
      cleanup.push(t.drop);
      let w = await openWarehouse(t.target, { migrate: true });
      let written: Record<string, unknown>[] = [];
      try {
        await seedTasks(w);
        await w.writeExecutionBatch(
          batch({
            executions: [execution(1), execution(2, { screenshot_url: '' }), execution(3)],
            ranks: [rank(1, 0, 'Acme', 1), rank(1, 1, 'Bolt', null), rank(2, 0, 'Acme', 3)],
            sources: [source(11, 1, 'a.com'), source(12, 1, 'b.com'), source(13, 3, 'a.com')],
            screenshots: [screenshot(1)],
          }),
        );
        await w.refreshStaleRollups(); // as the version before kept them: current
        written = await w.query(
          `SELECT prompt_task_id, rank_items, valid_ranks, sources, product_cards, has_screenshot
           FROM geo.prompt_executions ORDER BY prompt_task_id`,
        );
        // As a version before 010 left it: no counts, no stale-units log.
        for (const view of await w.query(
          "SELECT table_name FROM information_schema.views WHERE table_schema = 'geo'",
        ))
          await damage(w, `DROP VIEW IF EXISTS geo.${String(view.table_name)} CASCADE`);
        for (const column of ['rank_items', 'valid_ranks', 'sources', 'product_cards', 'has_screenshot'])
          await damage(w, `ALTER TABLE geo.prompt_executions DROP COLUMN ${column}`);
        await damage(w, 'DROP TABLE geo.rollup_stale_units');
        if (dialect === 'duckdb') await damage(w, 'DROP SEQUENCE geo.rollup_stale_units_marked');
        await damage(w, "DELETE FROM geo.schema_migrations WHERE version IN ('010', 'views')");
      } finally {
        await w.close();
      }
      w = await openWarehouse(t.target);
      try {
        expect((await w.migrate()).applied).toEqual(['010_stale_units_and_counts']);
        const filled = await w.query(
          `SELECT prompt_task_id, rank_items, valid_ranks, sources, product_cards, has_screenshot
           FROM geo.prompt_executions ORDER BY prompt_task_id`,
        );
        expect(filled).toEqual(written);
        expect(
          filled.map((r) => [num(r.rank_items), num(r.valid_ranks), num(r.sources), r.has_screenshot]),
        ).toEqual([
          [2, 1, 2, true],
          [1, 1, 0, false],
          [0, 0, 1, false],
        ]);
        expect(await w.query('SELECT * FROM geo.rollup_stale_units')).toEqual([]);
        expect(await mismatches(w)).toEqual([]);
      } finally {
        await w.close();
      }
    });

    it('migration 008 fills a warehouse upgraded from a version without aggregates, once', async () => {
      const t = await freshTarget(dialect);
      cleanup.push(t.drop);
      let w = await openWarehouse(t.target, { migrate: true });
      try {
        await seedTasks(w);
        await w.writeExecutionBatch(
          batch({
            executions: [execution(1), execution(2, { date_time: D2 })],
            ranks: [rank(1, 0, 'Acme', 1)],
          }),
        );
        // As an earlier version left it: no aggregate tables, 008 not applied.
        await asBefore(
          w,
          '008',
          ['executions', 'brands', 'domains', 'question_brands'].map((t) => `rollup_${t}_daily`),
        );
      } finally {
        await w.close();
      }
      w = await openWarehouse(t.target);
      try {
        const r = await w.migrate();
        expect(r.applied).toEqual(['008_rollups']);
        expect(r.notes).toEqual([
          expect.stringMatching(/^filled the per-day aggregates .* 2026-11-17\.\.2026-11-20/),
        ]);
        expect(await mismatches(w)).toEqual([]);
        expect(await executionsOf(w, '2026-11-20')).toBe(1);
        expect((await w.migrate()).notes).toEqual([]);
        expect(await w.pendingMigrations()).toEqual([]);

        // A fill interrupted after its first days goes on from where it stopped.
        await damage(w, `DELETE FROM geo.rollup_executions_daily WHERE date >= DATE '2026-11-20'`);
        await damage(
          w,
          "INSERT INTO geo.schema_migrations (version, name) VALUES ('rollups_fill', 'fill from 2026-11-20')",
        );
        expect(await w.pendingMigrations()).toEqual(['rollups_fill']);
        expect((await w.migrate()).notes).toEqual([expect.stringContaining('2026-11-20..2026-11-20')]);
        expect(await mismatches(w)).toEqual([]);
        expect(await w.pendingMigrations()).toEqual([]);
      } finally {
        await w.close();
      }
    });

    it('migration 012 fills the account’s aggregates of a warehouse upgraded from a version without them, once', async () => {
      const t = await freshTarget(dialect);
      cleanup.push(t.drop);
      let w = refreshing(await openWarehouse(t.target, { migrate: true }));
      try {
        await seedTasks(w);
        await w.writeExecutionBatch(
          batch({
            executions: [execution(1), execution(2, { date_time: D2 }), execution(3, { task_id: 11 })],
            ranks: [rank(1, 0, 'Acme', 1), rank(2, 0, 'Acme', 2), rank(3, 0, 'Acme', 3)],
            sources: [source(1, 1, 'a.example'), source(2, 3, 'a.example')],
          }),
        );
        // As the version before 012 left it: the units' aggregates, none of the account's.
        await asBefore(w, '012', ['rollup_domains_account_daily', 'rollup_brands_account_daily']);
      } finally {
        await w.close();
      }
      w = await openWarehouse(t.target);
      try {
        const r = await w.migrate();
        expect(r.applied).toEqual(['012_account_rollups']);
        expect(r.notes).toEqual([
          expect.stringMatching(/^filled the whole account's per-day aggregates .* 2026-11-17\.\.2026-11-20/),
        ]);
        expect(await mismatches(w)).toEqual([]);
        const acme = await w.query(
          `SELECT CAST(sum(executions_ranked) AS INTEGER) AS ranked FROM geo.brand_visibility_account_daily
           WHERE brand = 'Acme' AND date = CAST($1 AS DATE)`,
          [FIXTURE_DAY],
        );
        expect(acme).toEqual([{ ranked: 2 }]);
        expect((await w.migrate()).notes).toEqual([]);
        expect(await w.pendingMigrations()).toEqual([]);
      } finally {
        await w.close();
      }
    });
  });
}
