/**
 * On PostgreSQL, a filter on the day (week), monitoring task, platform task, brand or
 * domain of a dashboard view reaches the per-day aggregates and an index of theirs: the plan
 * reads no raw execution table, has no window, applies the filter where it reads the view's
 * aggregate table (an index condition, or a condition of that scan: which index the planner
 * picks is its cost decision, on a handful of rows here), and that table has an index led by
 * the filtered column. Sequential scans are turned off so that the plan shows where a filter can
 * go; a filter stuck above a grouping or a window would be applied above the scan instead.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openWarehouse } from '../../src/load/index.ts';
import { ROLLUP_TABLES } from '../../src/load/tables.ts';
import { createTestDatabase, postgresReachable, type TestDatabase } from '../helpers/postgres.ts';
import { batch, execution, rank, source } from './fixtures.ts';
import type { ExecutionBatch } from '../../src/transform/rows.ts';

const pgUp = await postgresReachable();

const RAW = [
  'prompt_executions',
  'execution_ranks',
  'execution_sources',
  'execution_screenshots',
  'execution_products',
  'product_cards',
];

/** View -> the aggregate table that holds its rows -> the filters it must take to an index. */
const CASES: [view: string, table: string, filters: Record<string, string>][] = [
  ['executions_daily', 'rollup_executions_daily', DAILY()],
  ['brand_rank_daily', 'rollup_brands_daily', { ...DAILY(), brand: "brand = 'Acme'" }],
  ['brand_visibility_daily', 'rollup_brands_daily', { ...DAILY(), brand: "brand = 'Acme'" }],
  ['brand_visibility_weekly', 'rollup_brands_daily', { ...WEEKLY(), brand: "brand = 'Acme'" }],
  ['brand_share_of_voice_daily', 'rollup_brands_daily', { ...DAILY(), brand: "brand = 'Acme'" }],
  ['citation_domains_daily', 'rollup_domains_daily', { ...DAILY(), domain: "domain = 'acme.com'" }],
  ['citations_daily', 'rollup_domains_daily', { ...DAILY(), domain: "domain = 'acme.com'" }],
  ['citations_weekly', 'rollup_domains_daily', { ...WEEKLY(), domain: "domain = 'acme.com'" }],
  ['question_rank_daily', 'rollup_question_brands_daily', { ...DAILY(), brand: "brand = 'Acme'" }],
];

function DAILY(): Record<string, string> {
  return { date: "date >= DATE '2026-11-10'", project_id: 'project_id = 100', task_id: 'task_id = 10' };
}
function WEEKLY(): Record<string, string> {
  return {
    week_start: "week_start >= DATE '2026-11-09'",
    project_id: 'project_id = 100',
    task_id: 'task_id = 10',
  };
}

interface PlanNode {
  'Node Type': string;
  'Subplan Name'?: string;
  'Relation Name'?: string;
  'Heap Fetches'?: number;
  'Index Name'?: string;
  'Index Cond'?: string;
  'Recheck Cond'?: string;
  Filter?: string;
  Plans?: PlanNode[];
}

function nodes(n: PlanNode): PlanNode[] {
  return [n, ...(n.Plans ?? []).flatMap(nodes)];
}

/** A fresh database with `b` written and its aggregates refreshed, as a run leaves it, and a client. */
async function refreshedDatabase(b: ExecutionBatch): Promise<{ db: TestDatabase; client: pg.Client }> {
  const db = await createTestDatabase();
  const w = await openWarehouse(db.url, { migrate: true });
  try {
    await w.writeExecutionBatch(b);
    await w.refreshStaleRollups();
  } finally {
    await w.close();
  }
  const client = new pg.Client(db.url);
  await client.connect();
  return { db, client };
}

describe.skipIf(!pgUp)('dashboard views on PostgreSQL: filters reach the aggregates’ indexes', () => {
  let db: TestDatabase;
  let client: pg.Client;
  beforeAll(async () => {
    ({ db, client } = await refreshedDatabase(
      batch({
        executions: [execution(1), execution(2, { task_id: 11 })],
        ranks: [rank(1, 0, 'Acme', 1), rank(2, 0, 'Bolt', 2)],
        sources: [source(1, 1, 'acme.com'), source(2, 2, 'news.com')],
      }),
    ));
    await client.query('ANALYZE');
    await client.query('SET enable_seqscan = off');
  });
  afterAll(async () => {
    await client?.end();
    await db?.drop();
  });

  for (const [view, table, filters] of CASES) {
    for (const [column, where] of Object.entries(filters)) {
      it(`${view} WHERE ${where}`, async () => {
        const r = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
          `EXPLAIN (FORMAT JSON) SELECT * FROM geo.${view} WHERE ${where}`,
        );
        const plan = nodes(r.rows[0]!['QUERY PLAN'][0].Plan);
        const summary = plan.map((n) => `${n['Node Type']} ${n['Relation Name'] ?? n['Index Name'] ?? ''}`);
        expect(
          plan.filter((n) => RAW.includes(n['Relation Name'] ?? '')),
          summary.join('\n'),
        ).toEqual([]);
        expect(plan.filter((n) => n['Node Type'] === 'WindowAgg')).toEqual([]);
        const mentions = (text: string | undefined) => new RegExp(`\\b${column}\\b`).test(text ?? '');
        const reached = plan.filter(
          (n) =>
            n['Relation Name'] === table &&
            (mentions(n['Index Cond']) || mentions(n['Recheck Cond']) || mentions(n.Filter)),
        );
        expect(reached.length, summary.join('\n')).toBeGreaterThan(0);
        // Every other read of an aggregate table (the denominators) is by an index condition too:
        // nothing aggregates a whole table before the filter.
        const unbounded = plan.filter(
          (n) =>
            (n['Relation Name'] ?? '').startsWith('rollup_') &&
            !n['Index Cond'] &&
            !n['Recheck Cond'] &&
            !(n['Relation Name'] === table && mentions(n.Filter)),
        );
        expect(
          unbounded.map((n) => `${n['Node Type']} ${n['Relation Name']}`),
          summary.join('\n'),
        ).toEqual([]);
        const indexes = await client.query<{ indexdef: string }>(
          "SELECT indexdef FROM pg_indexes WHERE schemaname = 'geo' AND tablename = $1",
          [table],
        );
        // Led by the column: a btree (column, date), or an SP-GiST index of the column (free
        // text from the API may be longer than a btree entry holds; sql/postgres/011).
        expect(
          indexes.rows.some(
            (i) => i.indexdef.includes(`(${column},`) || i.indexdef.includes(`USING spgist (${column})`),
          ),
          indexes.rows.map((i) => i.indexdef).join('\n'),
        ).toBe(true);
      });
    }
  }
});

/**
 * A refresh stores each per-platform-task aggregate's rows in (monitoring task, platform task,
 * day) order: a dashboard of one monitoring task over a year reads its rows from a few pages of
 * each refresh, not one row from each of thousands of pages (its weekly own-site citations on a
 * year of 2,400 executions a day: 37,000 pages read for 68,000 rows, p95 364-397 ms, stored as
 * the grouping happened to emit them; 119 ms stored in this order).
 */
describe.skipIf(!pgUp)('a refresh stores the aggregates by monitoring task, platform task and day', () => {
  let db: TestDatabase;
  let client: pg.Client;
  beforeAll(async () => {
    // Three monitoring tasks of two platform tasks each, on four days, written interleaved: one
    // batch, so one refresh computes them all.
    const days = ['2026-11-20', '2026-11-21', '2026-11-22', '2026-11-23'];
    const units = days.flatMap((date_time) =>
      [300, 100, 200].flatMap((project_id) =>
        [1, 0].map((t) => ({ date_time, project_id, task_id: project_id / 10 + t })),
      ),
    );
    const executions = units.flatMap((u, i) =>
      [0, 1].map((k) => execution(1 + i * 2 + k, { ...u, prompt_name: `question ${k}` })),
    );
    ({ db, client } = await refreshedDatabase(
      batch({
        executions,
        ranks: executions.map((e) => rank(e.prompt_task_id, 0, `Brand ${e.prompt_task_id % 3}`, 1)),
        sources: executions.map((e) =>
          source(e.prompt_task_id, e.prompt_task_id, `d${e.prompt_task_id % 5}.com`, {
            task_id: e.task_id,
            project_id: e.project_id,
          }),
        ),
      }),
    ));
  });
  afterAll(async () => {
    await client?.end();
    await db?.drop();
  });

  // Every per-platform-task table a refresh writes (the account's are recomputed by the day).
  for (const { table } of ROLLUP_TABLES) {
    it(`${table}: in the order the dashboards read them`, async () => {
      const r = await client.query<{ project_id: string; task_id: string; date: string }>(
        `SELECT project_id, task_id, CAST(date AS TEXT) AS date FROM geo.${table} ORDER BY ctid`,
      );
      const stored = r.rows.map((row) => [Number(row.project_id), Number(row.task_id), row.date] as const);
      expect(new Set(stored.map(([project]) => project)).size).toBe(3);
      const sorted = [...stored].sort((x, y) => x[0] - y[0] || x[1] - y[1] || x[2].localeCompare(y[2]));
      expect(stored).toEqual(sorted);
    });
  }
});

/**
 * Releases before migration 011 created hash indexes on brand and domain (009 on the execution
 * tables, 010 on the aggregates): an insert into one walks every entry stored under its value.
 * 011 replaces them with SP-GiST in the aggregates and leaves the execution tables without.
 */
describe.skipIf(!pgUp)('migration 011 on a warehouse with the hash indexes of 009 and 010', () => {
  let db: TestDatabase;
  afterAll(async () => {
    await db?.drop();
  });

  it('replaces them: SP-GiST in the aggregates, none on the execution tables', async () => {
    db = await createTestDatabase();
    let w = await openWarehouse(db.url, { migrate: true });
    await w.close();
    const client = new pg.Client(db.url);
    await client.connect();
    try {
      // As a release before 011 left it.
      await client.query(`
        DROP INDEX geo.rollup_brands_daily_brand_idx;
        DROP INDEX geo.rollup_domains_daily_domain_idx;
        DROP INDEX geo.rollup_question_brands_daily_brand_idx;
        CREATE INDEX execution_ranks_brand_idx ON geo.execution_ranks USING hash (brand);
        CREATE INDEX execution_sources_domain_idx ON geo.execution_sources USING hash (domain);
        CREATE INDEX rollup_brands_daily_brand_idx ON geo.rollup_brands_daily USING hash (brand);
        CREATE INDEX rollup_domains_daily_domain_idx ON geo.rollup_domains_daily USING hash (domain);
        CREATE INDEX rollup_question_brands_daily_brand_idx ON geo.rollup_question_brands_daily USING hash (brand);
        DELETE FROM geo.schema_migrations WHERE version = '011';`);
      w = await openWarehouse(db.url);
      try {
        expect((await w.migrate()).applied).toEqual(['011_text_lookup_indexes']);
      } finally {
        await w.close();
      }
      const r = await client.query<{ tablename: string; indexdef: string }>(
        `SELECT tablename, indexdef FROM pg_indexes WHERE schemaname = 'geo'
           AND (indexdef LIKE '%(brand)%' OR indexdef LIKE '%(domain)%') ORDER BY tablename`,
      );
      expect(r.rows.map((x) => [x.tablename, /USING (\w+)/.exec(x.indexdef)?.[1]])).toEqual([
        // 012's (the account's aggregates), indexed alike from the start.
        ['rollup_brands_account_daily', 'spgist'],
        ['rollup_brands_daily', 'spgist'],
        ['rollup_domains_account_daily', 'spgist'],
        ['rollup_domains_daily', 'spgist'],
        ['rollup_question_brands_daily', 'spgist'],
      ]);
    } finally {
      await client.end();
    }
  });
});

/**
 * The execution grain by days reads one index of prompt_executions alone, once VACUUM has set the
 * visibility map (the sync's tidy after a large write): a month of executions_enriched by day
 * read a heap page a row (sql/postgres/013: 1,123 ms on a year of 10,000 executions a day).
 */
describe.skipIf(!pgUp)('executions_enriched by day on PostgreSQL', () => {
  let db: TestDatabase;
  let client: pg.Client;
  beforeAll(async () => {
    ({ db, client } = await refreshedDatabase(
      batch({
        executions: [execution(1), execution(2, { task_id: 11 }), execution(3, { result_status: 'missing' })],
        ranks: [rank(1, 0, 'Acme', 1)],
        sources: [source(1, 1, 'acme.com')],
      }),
    ));
    await client.query('SET enable_seqscan = off');
  });
  afterAll(async () => {
    await client?.end();
    await db?.drop();
  });

  it('a month by day counts from an index-only scan, the heap untouched', async () => {
    const month = async () => {
      await client.query('VACUUM (ANALYZE) geo.prompt_executions');
      const r = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
        `EXPLAIN (ANALYZE, FORMAT JSON) SELECT date, count(*) AS executions, count(*) FILTER (WHERE has_answer) AS answered,
           count(*) FILTER (WHERE has_screenshot) AS with_screenshot, sum(rank_items) AS rank_items,
           sum(valid_ranks) AS valid_ranks, sum(sources) AS sources, sum(product_cards) AS product_cards
         FROM geo.executions_enriched WHERE date > DATE '2026-12-01' - 30 GROUP BY date ORDER BY date`,
      );
      return nodes(r.rows[0]!['QUERY PLAN'][0].Plan);
    };
    // VACUUM sets the visibility map once no transaction still running may see an older version
    // of the rows: the warehouse's connections, just closed, may take a moment to end.
    let plan = await month();
    for (let i = 0; i < 50 && plan.some((n) => (n['Heap Fetches'] ?? 0) > 0); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      plan = await month();
    }
    const summary = plan.map((n) => `${n['Node Type']} ${n['Relation Name'] ?? ''}`).join('\n');
    const reads = plan.filter((n) => n['Relation Name'] !== undefined);
    expect(
      reads.map((n) => `${n['Node Type']} ${n['Relation Name']}`),
      summary,
    ).toEqual(['Index Only Scan prompt_executions']);
    expect(reads[0]!['Heap Fetches'], summary).toBe(0);
  });
});
