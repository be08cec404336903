/**
 * The Warehouse contract (src/load/warehouse.ts), one suite run against every adapter. Each
 * test works on its own IDs, so tests share one migrated warehouse per dialect; the migrate
 * tests get fresh ones.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DATA_TABLES, openWarehouse, type Warehouse } from '../../src/load/index.ts';
import type { Dialect } from '../../src/load/warehouse.ts';
import { readMigrations, viewsHash } from '../../src/load/migrate.ts';
import { apiInstant } from '../../src/transform/time.ts';
import { createTempDuckDB } from '../helpers/duckdb.ts';
import { createTestDatabase, postgresReachable } from '../helpers/postgres.ts';
import { batch, card, execution, products, rank, screenshot, source, syncRun } from './fixtures.ts';

const DIALECTS: readonly Dialect[] = ['postgres', 'duckdb'];
const pgUp = await postgresReachable();

/** A fresh, empty warehouse target of the dialect, and how to remove it. */
async function freshTarget(dialect: Dialect): Promise<{ target: string; drop: () => Promise<void> }> {
  if (dialect === 'postgres') {
    const db = await createTestDatabase();
    return { target: db.url, drop: db.drop };
  }
  const db = createTempDuckDB('contract');
  return { target: db.target, drop: async () => db.remove() };
}

const GEO_TABLES = [
  'balance_snapshots',
  'deductions',
  'execution_fingerprints',
  'execution_products',
  'execution_ranks',
  'execution_screenshots',
  'execution_sources',
  'monitoring_tasks',
  'platform_tasks',
  'product_cards',
  'prompt_executions',
  'rollup_brands_account_daily',
  'rollup_brands_daily',
  'rollup_domains_account_daily',
  'rollup_domains_daily',
  'rollup_executions_daily',
  'rollup_question_brands_daily',
  'rollup_stale_units',
  'schema_migrations',
  'site_diagnoses',
  'sync_checkpoints',
  'sync_rejects',
  'sync_runs',
  'sync_unit_failures',
];

for (const dialect of DIALECTS) {
  // Every numbered file of the dialect (PostgreSQL has the lock's, DuckDB locks by file).
  const MIGRATIONS = (await readMigrations(dialect)).migrations.map((m) => m.id);
  describe.skipIf(dialect === 'postgres' && !pgUp)(dialect, () => {
    const cleanup: (() => Promise<void>)[] = [];
    let w: Warehouse;
    let target: string;

    beforeAll(async () => {
      const t = await freshTarget(dialect);
      cleanup.push(t.drop);
      target = t.target;
      w = await openWarehouse(target, { migrate: true });
    });

    afterAll(async () => {
      await w?.close();
      for (const drop of cleanup) await drop();
    });

    async function tablesOf(warehouse: Warehouse): Promise<string[]> {
      const rows = await warehouse.query(
        `SELECT table_name FROM information_schema.tables
         WHERE table_schema = 'geo' AND table_type = 'BASE TABLE' ORDER BY table_name`,
      );
      return rows.map((r) => String(r.table_name)).filter((t) => t !== 'sync_lock');
    }

    /** Rows of a table for some executions, in key order, without synced_at. */
    async function rowsOf(table: string, ids: number[], order: string): Promise<Record<string, unknown>[]> {
      const placeholders = ids.map((_, i) => `$${i + 1}`).join(', ');
      const rows = await w.query(
        `SELECT * FROM geo.${table} WHERE prompt_task_id IN (${placeholders}) ORDER BY ${order}`,
        ids,
      );
      return rows.map(({ synced_at: _synced, ...rest }) => rest);
    }

    describe('migrate', () => {
      it('applies every migration once; a second migrate applies nothing and re-creates the views', async () => {
        const t = await freshTarget(dialect);
        cleanup.push(t.drop);
        const fresh = await openWarehouse(t.target);
        try {
          expect(await fresh.pendingMigrations()).toEqual([...MIGRATIONS, 'views']);
          const first = await fresh.migrate();
          expect(await fresh.pendingMigrations()).toEqual([]);
          expect(first.applied).toEqual(MIGRATIONS);
          expect(first.alreadyApplied).toEqual([]);
          const second = await fresh.migrate();
          expect(second).toEqual({ applied: [], alreadyApplied: MIGRATIONS, notes: [] });
          expect(await tablesOf(fresh)).toEqual(GEO_TABLES);
          expect(await fresh.query('SELECT * FROM geo.brand_rank_daily')).toEqual([]);
          const ledger = await fresh.query(
            `SELECT version, name FROM geo.schema_migrations WHERE version <> 'views' ORDER BY version`,
          );
          expect(ledger).toEqual(
            (await readMigrations(dialect)).migrations.map(({ version, name }) => ({ version, name })),
          );
          // The views' row names what was applied (test/unit/migrate.test.ts: when it differs).
          const set = await readMigrations(dialect);
          expect(await fresh.query(`SELECT name FROM geo.schema_migrations WHERE version = 'views'`)).toEqual(
            [{ name: viewsHash(set) }],
          );
        } finally {
          await fresh.close();
        }
      });

      it('two callers migrating at once end with one set of tables', async () => {
        const t = await freshTarget(dialect);
        cleanup.push(t.drop);
        const [a, b] = await Promise.all([openWarehouse(t.target), openWarehouse(t.target)]);
        try {
          const results = await Promise.all([a.migrate(), b.migrate()]);
          // Each migration applied once, by one of them (PostgreSQL locks each migration's own
          // transaction, so the two may share the work; each waits for the one before).
          expect(results.flatMap((r) => r.applied).sort()).toEqual(MIGRATIONS);
          expect(results.flatMap((r) => r.alreadyApplied).sort()).toEqual(MIGRATIONS);
          expect(await tablesOf(a)).toEqual(GEO_TABLES);
          // One row per migration, and the views' row.
          expect(await b.query('SELECT count(*) AS n FROM geo.schema_migrations')).toEqual([
            { n: MIGRATIONS.length + 1 },
          ]);
        } finally {
          await Promise.all([a.close(), b.close()]);
        }
      });
    });

    it('writing the same batch twice changes nothing', async () => {
      const b = batch({
        executions: [execution(101), execution(102, { result_status: 'missing', answer: null })],
        ranks: [rank(101, 0, 'Acme', 1), rank(101, 1, 'Beta', null), rank(102, 0, 'Acme', 2)],
        sources: [source(1011, 101, 'a.com'), source(1012, 101, 'b.com'), source(1021, 102, 'a.com')],
        screenshots: [screenshot(101), screenshot(102)],
        products: [
          products(101),
          products(102, { supported: false, result_status: 'unsupported', total: 0 }),
        ],
        cards: [card(101, 0), card(101, 1)],
      });
      await w.writeExecutionBatch(b);
      const counts = await w.counts();
      const tables = [
        ['prompt_executions', 'prompt_task_id'],
        ['execution_ranks', 'prompt_task_id, ordinal'],
        ['execution_sources', 'source_id'],
        ['execution_screenshots', 'prompt_task_id'],
        ['execution_products', 'prompt_task_id'],
        ['product_cards', 'prompt_task_id, position'],
      ] as const;
      const before = await Promise.all(tables.map(([t, order]) => rowsOf(t, [101, 102], order)));

      await w.writeExecutionBatch(b);
      expect(await w.counts()).toEqual(counts);
      const after = await Promise.all(tables.map(([t, order]) => rowsOf(t, [101, 102], order)));
      expect(after).toEqual(before);

      expect(before[0]!.map((r) => r.prompt_task_id)).toEqual([101, 102]);
      expect(before[0]![0]).toMatchObject({
        task_id: 10,
        date_time: '2026-11-20',
        answer: 'answer of 101\twith a tab, a newline\nand a backslash \\',
        created_at: '2026-11-20T08:00:00+08:00',
        updated_at: null,
      });
      expect(before[2]!.map((r) => r.source_id)).toEqual([1011, 1012, 1021]);
      expect(before[4]![0]).toMatchObject({
        field_order: ['product_name', 'price'],
        field_labels: { product_name: '商品', price: '价格' },
      });
      expect(before[4]![1]).toMatchObject({ supported: false, field_order: ['product_name', 'price'] });
      expect(before[5]![0]!.card).toEqual({ product_name: 'p0', price: '¥9.90', extra: { nested: [1, 2] } });
    });

    it('replaces children: gone sources and cards disappear, NULL positions stay NULL', async () => {
      await w.writeExecutionBatch(
        batch({
          executions: [execution(201), execution(202)],
          ranks: [rank(201, 0, 'Acme', 1), rank(201, 1, 'Beta', null), rank(201, 2, 'Gamma', 3)],
          sources: [source(2011, 201, 'a.com'), source(2012, 201, 'b.com'), source(2021, 202, 'c.com')],
          cards: [card(202, 0), card(202, 1)],
        }),
      );
      await w.writeExecutionBatch(
        batch({
          executions: [execution(201), execution(202)],
          ranks: [rank(201, 0, 'Acme', null), rank(201, 1, 'Beta', 2)],
          sources: [source(2011, 201, 'a.com', { title: 'renamed' }), source(2021, 202, 'c.com')],
          cards: [],
        }),
      );
      const ranks = await rowsOf('execution_ranks', [201], 'ordinal');
      expect(ranks.map((r) => [r.ordinal, r.brand, r.position])).toEqual([
        [0, 'Acme', null],
        [1, 'Beta', 2],
      ]);
      const nulls = await w.query(
        'SELECT count(*) AS n FROM geo.execution_ranks WHERE prompt_task_id = $1 AND position IS NULL',
        [201],
      );
      expect(nulls).toEqual([{ n: 1 }]);
      const zeros = await w.query('SELECT count(*) AS n FROM geo.execution_ranks WHERE position = 0');
      expect(zeros).toEqual([{ n: 0 }]);
      const sources = await rowsOf('execution_sources', [201, 202], 'source_id');
      expect(sources.map((s) => [s.source_id, s.title])).toEqual([
        [2011, 'renamed'],
        [2021, 'title 2021'],
      ]);
      expect(await rowsOf('product_cards', [202], 'position')).toEqual([]);
    });

    it('an execution read again without a screenshot loses the one stored; a screenshot kept stays', async () => {
      await w.writeExecutionBatch(
        batch({
          executions: [execution(261), execution(262)],
          screenshots: [screenshot(261), screenshot(262)],
        }),
      );
      // Read again: 261's screenshot is gone upstream (no row), 262's could not be read (kept).
      await w.writeExecutionBatch(
        batch({
          executions: [execution(261), execution(262)],
          kept: [{ prompt_task_id: 262, child: 'screenshot' }],
        }),
      );
      expect(await rowsOf('execution_screenshots', [261], 'prompt_task_id')).toEqual([]);
      expect((await rowsOf('execution_screenshots', [262], 'prompt_task_id')).length).toBe(1);
      // Rows given without their execution replace nothing of its screenshot.
      await w.writeExecutionBatch(batch({ ranks: [rank(262, 0, 'Acme', 1)] }));
      expect((await rowsOf('execution_screenshots', [262], 'prompt_task_id')).length).toBe(1);
    });

    it('a source that moved to another execution is updated, not duplicated', async () => {
      await w.writeExecutionBatch(
        batch({ executions: [execution(251)], sources: [source(2501, 251, 'a.com')] }),
      );
      await w.writeExecutionBatch(
        batch({ executions: [execution(252)], sources: [source(2501, 252, 'a.com')] }),
      );
      const rows = await w.query(
        'SELECT prompt_task_id FROM geo.execution_sources WHERE source_id = $1',
        [2501],
      );
      expect(rows).toEqual([{ prompt_task_id: 252 }]);
    });

    it('duplicate keys inside one batch: the last row wins', async () => {
      await w.writeExecutionBatch(
        batch({
          executions: [execution(261, { hours: 1 }), execution(261, { hours: 2 })],
          ranks: [rank(261, 0, 'First', 1), rank(261, 0, 'Second', 2)],
          sources: [
            source(2611, 261, 'a.com', { title: 'one' }),
            source(2611, 261, 'a.com', { title: 'two' }),
          ],
        }),
      );
      expect((await rowsOf('prompt_executions', [261], 'prompt_task_id')).map((r) => r.hours)).toEqual([2]);
      expect((await rowsOf('execution_ranks', [261], 'ordinal')).map((r) => r.brand)).toEqual(['Second']);
      expect((await rowsOf('execution_sources', [261], 'source_id')).map((r) => r.title)).toEqual(['two']);
    });

    it('completeUnit deletes unseen executions with their children and records the checkpoint', async () => {
      const day = '2026-11-10';
      const other = '2026-11-11';
      const ids = [301, 302, 303];
      await w.writeExecutionBatch(
        batch({
          executions: [
            ...ids.map((id) => execution(id, { task_id: 30, date_time: day })),
            execution(304, { task_id: 30, date_time: other }),
          ],
          ranks: [...ids, 304].map((id) => rank(id, 0, 'Acme', 1)),
          sources: [...ids, 304].map((id) => source(id * 10, id, 'a.com', { task_id: 30 })),
          screenshots: [...ids, 304].map((id) => screenshot(id, { task_id: 30 })),
          products: [...ids, 304].map((id) => products(id)),
          cards: [...ids, 304].map((id) => card(id, 0)),
        }),
      );
      await w.completeUnit({
        task_id: 30,
        date: day,
        seenPromptTaskIds: [301, 303],
        checkpoint: {
          task_id: 30,
          date: day,
          run_id: 'run-c',
          finished_at: '2026-11-21T04:31:00+08:00',
          executions: 2,
        },
      });
      const all = [301, 302, 303, 304];
      expect((await rowsOf('prompt_executions', all, 'prompt_task_id')).map((r) => r.prompt_task_id)).toEqual(
        [301, 303, 304],
      );
      for (const table of [
        'execution_ranks',
        'execution_sources',
        'execution_screenshots',
        'execution_products',
      ]) {
        const rows = await rowsOf(table, all, 'prompt_task_id');
        expect(
          rows.map((r) => r.prompt_task_id),
          table,
        ).toEqual([301, 303, 304]);
      }
      expect((await rowsOf('product_cards', all, 'prompt_task_id')).map((r) => r.prompt_task_id)).toEqual([
        301, 303, 304,
      ]);

      const checkpoints = await w.query(
        'SELECT task_id, date, run_id, finished_at, executions FROM geo.sync_checkpoints WHERE task_id = $1',
        [30],
      );
      expect(checkpoints).toEqual([
        { task_id: 30, date: day, run_id: 'run-c', finished_at: '2026-11-21T04:31:00+08:00', executions: 2 },
      ]);
      expect(await w.finishedUnits([day, other])).toEqual(new Set([`30|${day}`]));
      expect(await w.finishedUnits([])).toEqual(new Set());

      // Closing it again (a re-sync) updates the checkpoint; an empty listing empties the unit.
      await w.completeUnit({
        task_id: 30,
        date: day,
        seenPromptTaskIds: [],
        checkpoint: {
          task_id: 30,
          date: day,
          run_id: 'run-d',
          finished_at: '2026-11-22T04:31:00+08:00',
          executions: 0,
        },
      });
      expect((await rowsOf('prompt_executions', all, 'prompt_task_id')).map((r) => r.prompt_task_id)).toEqual(
        [304],
      );
      const again = await w.query(
        'SELECT run_id, executions FROM geo.sync_checkpoints WHERE task_id = $1',
        [30],
      );
      expect(again).toEqual([{ run_id: 'run-d', executions: 0 }]);
    });

    it('kept children: a child that could not be read keeps its stored rows; the rest is replaced', async () => {
      const full = (answer: string) =>
        batch({
          executions: [execution(271, { answer }), execution(272, { answer })],
          ranks: [rank(271, 0, 'Acme', 1), rank(272, 0, 'Acme', 2)],
          sources: [source(2711, 271, 'a.com'), source(2721, 272, 'b.com')],
          screenshots: [screenshot(271), screenshot(272)],
          products: [products(271), products(272)],
          cards: [card(271, 0), card(272, 0), card(272, 1)],
        });
      await w.writeExecutionBatch(full('first'));
      // Second read: 271's sources and 272's screenshot and products could not be read.
      await w.writeExecutionBatch({
        ...batch({
          executions: [execution(271, { answer: 'second' }), execution(272, { answer: 'second' })],
          ranks: [rank(271, 0, 'Beta', 3)],
          sources: [source(2722, 272, 'c.com')],
          screenshots: [screenshot(271, { screenshot_url: 'https://shots.example/new.png' })],
          products: [products(271, { total: 0 })],
          cards: [],
        }),
        kept: [
          { prompt_task_id: 271, child: 'sources' },
          { prompt_task_id: 272, child: 'screenshot' },
          { prompt_task_id: 272, child: 'products' },
        ],
      });
      const ids = [271, 272];
      expect((await rowsOf('prompt_executions', ids, 'prompt_task_id')).map((r) => r.answer)).toEqual([
        'second',
        'second',
      ]);
      expect((await rowsOf('execution_ranks', ids, 'prompt_task_id')).map((r) => r.brand)).toEqual(['Beta']);
      expect((await rowsOf('execution_sources', ids, 'source_id')).map((r) => r.source_id)).toEqual([
        2711, 2722,
      ]);
      expect(
        (await rowsOf('execution_screenshots', ids, 'prompt_task_id')).map((r) => [
          r.prompt_task_id,
          r.screenshot_url,
        ]),
      ).toEqual([
        [271, 'https://shots.example/new.png'],
        [272, screenshot(272).screenshot_url],
      ]);
      expect((await rowsOf('execution_products', ids, 'prompt_task_id')).map((r) => r.total)).toEqual([
        0,
        products(272).total,
      ]);
      expect(
        (await rowsOf('product_cards', ids, 'prompt_task_id, position')).map((r) => [
          r.prompt_task_id,
          r.position,
        ]),
      ).toEqual([
        [272, 0],
        [272, 1],
      ]);
    });

    it('merged sources: a source list read incompletely writes what it read and deletes none stored', async () => {
      await w.writeExecutionBatch(
        batch({
          executions: [execution(291), execution(292)],
          sources: [source(2911, 291, 'a.com'), source(2912, 291, 'b.com'), source(2921, 292, 'c.com')],
        }),
      );
      // 291's list came back one short (2912 quarantined) with a new source; 292's whole, without 2921.
      await w.writeExecutionBatch({
        ...batch({
          executions: [execution(291), execution(292)],
          sources: [source(2911, 291, 'a2.com'), source(2913, 291, 'd.com'), source(2922, 292, 'e.com')],
        }),
        sourcesMerged: [291],
      });
      expect(
        (await rowsOf('execution_sources', [291, 292], 'source_id')).map((r) => [r.source_id, r.domain]),
      ).toEqual([
        [2911, 'a2.com'],
        [2912, 'b.com'],
        [2913, 'd.com'],
        [2922, 'e.com'],
      ]);
    });

    it('kept times: an execution whose task/detail could not be read keeps its stored created_at and updated_at', async () => {
      const times = {
        created_at: '2026-11-20T08:00:00.123456+08:00',
        updated_at: '2026-11-20T09:30:00+08:00',
      };
      await w.writeExecutionBatch(
        batch({
          executions: [execution(281, { ...times, answer: 'first' }), execution(282, { ...times })],
          sources: [source(2811, 281, 'a.com'), source(2821, 282, 'b.com')],
        }),
      );
      const timesOf = async (id: number) => {
        const [r] = await rowsOf('prompt_executions', [id], 'prompt_task_id');
        return r ? { created_at: r.created_at, updated_at: r.updated_at, answer: r.answer } : undefined;
      };
      const stored = await timesOf(281);
      expect(stored?.created_at).not.toBeNull();

      // Fast path: 281's times were not read (kept), 282's were read as none, 283 is new.
      await w.writeExecutionBatch({
        ...batch({
          executions: [
            execution(281, { created_at: null, updated_at: null, answer: 'second' }),
            execution(282, { created_at: null, updated_at: null }),
            execution(283, { created_at: null, updated_at: null }),
          ],
          sources: [source(2811, 281, 'a.com')],
        }),
        kept: [
          { prompt_task_id: 281, child: 'times' },
          { prompt_task_id: 283, child: 'times' },
        ],
      });
      expect(await timesOf(281)).toEqual({ ...stored, answer: 'second' });
      expect(await timesOf(282)).toMatchObject({ created_at: null, updated_at: null });
      expect(await timesOf(283)).toMatchObject({ created_at: null, updated_at: null });

      // Safe path: source 2821 moves from 282 to 281 (a duplicate key for the fast path).
      await w.writeExecutionBatch({
        ...batch({
          executions: [execution(281, { created_at: null, updated_at: null, answer: 'third' })],
          sources: [source(2821, 281, 'b.com')],
        }),
        kept: [{ prompt_task_id: 281, child: 'times' }],
      });
      expect(await timesOf(281)).toEqual({ ...stored, answer: 'third' });
      const moved = await w.query(
        'SELECT prompt_task_id FROM geo.execution_sources WHERE source_id = $1',
        [2821],
      );
      expect(moved).toEqual([{ prompt_task_id: 281 }]);
    });

    it('a completion with deleteUnlisted false records its checkpoint and deletes nothing', async () => {
      const day = '2026-09-05';
      const at = { task_id: 65, date_time: day };
      await w.writeExecutionBatch(
        batch({
          executions: [execution(651, at), execution(652, at)],
          sources: [source(6521, 652, 'a.com')],
        }),
      );
      await w.writeExecutionBatch(batch({ executions: [execution(651, at)] }), [
        {
          task_id: 65,
          date: day,
          seenPromptTaskIds: [651],
          deleteUnlisted: false,
          checkpoint: {
            task_id: 65,
            date: day,
            run_id: 'run-k',
            finished_at: '2026-11-21T04:41:00+08:00',
            executions: 1,
          },
        },
      ]);
      expect(
        (await rowsOf('prompt_executions', [651, 652], 'prompt_task_id')).map((r) => r.prompt_task_id),
      ).toEqual([651, 652]);
      expect((await rowsOf('execution_sources', [652], 'source_id')).map((r) => r.source_id)).toEqual([6521]);
      expect(await w.finishedUnits([day])).toEqual(new Set([`65|${day}`]));
      await w.completeUnit({
        task_id: 65,
        date: day,
        seenPromptTaskIds: [],
        deleteUnlisted: false,
        checkpoint: {
          task_id: 65,
          date: day,
          run_id: 'run-l',
          finished_at: '2026-11-21T04:42:00+08:00',
          executions: 0,
        },
      });
      expect((await rowsOf('prompt_executions', [651, 652], 'prompt_task_id')).length).toBe(2);
    });

    it('change detection reads: complete fingerprints of a unit, and stored units for the dry run', async () => {
      const day = '2026-09-07';
      const at = (task_id: number) => ({ task_id, date_time: day });
      const shot = (id: number) => ({ screenshot_url: `https://img.example/${id}.png` });
      await w.writeExecutionBatch(
        batch({
          executions: [
            execution(671, { ...at(67), ...shot(671) }),
            execution(672, { ...at(67), screenshot_url: '' }),
            execution(673, at(67)),
            execution(681, { ...at(68), ...shot(681) }),
          ],
          products: [
            products(671, { supported: false, result_status: 'unsupported', total: 0 }),
            // Spec 2.8 names either; a missing result_status is derived from `supported` alone.
            products(672, { supported: false, result_status: null, total: 0 }),
            products(673, { result_status: 'missing', total: 0 }),
            products(681),
          ],
          fingerprints: [
            { prompt_task_id: 671, fingerprint: 'f671', children_complete: true },
            { prompt_task_id: 672, fingerprint: 'f672', children_complete: false },
            { prompt_task_id: 681, fingerprint: 'f681', children_complete: true },
          ],
        }),
      );
      // Only complete children count; 673 has no fingerprint at all.
      expect(await w.completeFingerprints(67, day)).toEqual(new Map([[671, 'f671']]));
      // Change detection compares a unit at once: one read gives every stored execution of the
      // unit with those fingerprints.
      expect(await w.unitExecutions(67, day)).toEqual({
        ids: new Set([671, 672, 673]),
        complete: new Map([[671, 'f671']]),
      });
      expect(await w.unitExecutions(70, day)).toEqual({ ids: new Set(), complete: new Map() });
      // The same, for the day's units of some platform tasks in one read; none above the limit.
      const units = await w.dayExecutions(day, [67, 70], 1_000);
      expect(units).toEqual(
        new Map([[67, { ids: new Set([671, 672, 673]), complete: new Map([[671, 'f671']]) }]]),
      );
      expect(await w.dayExecutions(day, [70], 1_000)).toEqual(new Map());
      expect(await w.dayExecutions(day, [67], 2)).toBeNull();
      // A finished unit without any execution is known too (it lists nothing).
      await w.completeUnit({
        task_id: 69,
        date: day,
        seenPromptTaskIds: [],
        deleteUnlisted: true,
        checkpoint: {
          task_id: 69,
          date: day,
          run_id: 'run-m',
          finished_at: '2026-11-21T04:43:00+08:00',
          executions: 0,
        },
      });
      expect(await w.storedUnits([day, day, '2026-09-08'])).toEqual(
        new Map([
          [`67|${day}`, { executions: 3, complete: 1, withoutScreenshot: 2, unsupported: 2 }],
          [`68|${day}`, { executions: 1, complete: 1, withoutScreenshot: 0, unsupported: 0 }],
          [`69|${day}`, { executions: 0, complete: 0, withoutScreenshot: 0, unsupported: 0 }],
        ]),
      );
      expect(await w.storedUnits([])).toEqual(new Map());
    });

    it('writeExecutionBatch with completions closes units in the same transaction, or not at all', async () => {
      const day = '2026-09-01';
      const at = { task_id: 60, date_time: day };
      await w.writeExecutionBatch(batch({ executions: [execution(601, at), execution(602, at)] }));
      const checkpoint = (taskId: number) => ({
        task_id: taskId,
        date: day,
        run_id: 'run-g',
        finished_at: '2026-11-21T04:40:00+08:00',
        executions: 2,
      });
      await w.writeExecutionBatch(
        batch({ executions: [execution(603, at)], ranks: [rank(603, 0, 'Acme', 1)] }),
        [{ task_id: 60, date: day, seenPromptTaskIds: [601, 603], checkpoint: checkpoint(60) }],
      );
      const ids = await rowsOf('prompt_executions', [601, 602, 603], 'prompt_task_id');
      expect(ids.map((r) => r.prompt_task_id)).toEqual([601, 603]);
      expect(await w.finishedUnits([day])).toEqual(new Set([`60|${day}`]));

      // A batch that fails leaves neither its rows nor its units' checkpoints.
      const bad = execution(611, { task_id: 61, date_time: day, result_status: 'bogus' as 'missing' });
      await expect(
        w.writeExecutionBatch(batch({ executions: [bad] }), [
          { task_id: 61, date: day, seenPromptTaskIds: [611], checkpoint: checkpoint(61) },
        ]),
      ).rejects.toThrow();
      expect(await rowsOf('prompt_executions', [611], 'prompt_task_id')).toEqual([]);
      expect(await w.finishedUnits([day])).toEqual(new Set([`60|${day}`]));
    });

    it('closes many units in one transaction as one at a time would, each by its own listing', async () => {
      const day = '2026-08-12';
      const other = '2026-08-13';
      const at = (task_id: number, date_time = day) => ({ task_id, date_time });
      await w.writeExecutionBatch(
        batch({
          executions: [
            execution(9801, at(980)),
            execution(9802, at(980)),
            execution(9803, at(980)),
            execution(9811, at(981)),
            execution(9812, at(981)),
            execution(9821, at(982)),
            execution(9831, at(980, other)),
            execution(9832, at(980, other)),
          ],
          ranks: [rank(9802, 0, 'Acme', 1), rank(9812, 0, 'Acme', 2)],
          sources: [source(980201, 9802, 'acme.com')],
        }),
      );
      const checkpoint = (task_id: number, date = day) => ({
        task_id,
        date,
        run_id: 'run-many',
        finished_at: '2026-11-21T04:40:00+08:00',
        executions: 1,
      });
      await w.writeExecutionBatch(batch({}), [
        // 980: 9802 unlisted; closed again later in the same call, without 9803: both listings apply.
        { task_id: 980, date: day, seenPromptTaskIds: [9801, 9803], checkpoint: checkpoint(980) },
        // 981: an id listed by another unit does not keep 9811 in this one.
        { task_id: 981, date: day, seenPromptTaskIds: [9812, 9801], checkpoint: checkpoint(981) },
        // 982: its listing is not trusted whole: nothing deleted.
        {
          task_id: 982,
          date: day,
          seenPromptTaskIds: [],
          deleteUnlisted: false,
          checkpoint: checkpoint(982),
        },
        // 980 on the next day: nothing listed, everything deleted.
        { task_id: 980, date: other, seenPromptTaskIds: [], checkpoint: checkpoint(980, other) },
        { task_id: 980, date: day, seenPromptTaskIds: [9801], checkpoint: checkpoint(980) },
      ]);
      const ids = await rowsOf(
        'prompt_executions',
        [9801, 9802, 9803, 9811, 9812, 9821, 9831, 9832],
        'prompt_task_id',
      );
      expect(ids.map((r) => r.prompt_task_id)).toEqual([9801, 9812, 9821]);
      expect(await rowsOf('execution_ranks', [9802, 9812], 'prompt_task_id')).toEqual([
        expect.objectContaining({ prompt_task_id: 9812 }),
      ]);
      expect(await rowsOf('execution_sources', [9802], 'prompt_task_id')).toEqual([]);
      expect(await w.finishedUnits([day, other])).toEqual(
        new Set([`980|${day}`, `981|${day}`, `982|${day}`, `980|${other}`]),
      );
    });

    it('runs: insert, update, list newest first', async () => {
      await w.insertRun(syncRun('run-1', { started_at: '2026-11-19T04:30:00+08:00' }));
      await w.insertRun(syncRun('run-2', { started_at: '2026-11-20T04:30:00+08:00', kind: 'backfill' }));
      const done = syncRun('run-1', {
        started_at: '2026-11-19T04:30:00+08:00',
        finished_at: '2026-11-19T04:35:10.250+08:00',
        status: 'partial',
        rows: { prompt_executions: 40, execution_sources: 300 },
        requests: 1234,
        retries: 5,
        rate_limited: 2,
        rejects: 1,
        units_done: 2,
        units_failed: 1,
        error: 'one unit failed',
        text_values_changed: 3,
      });
      await w.updateRun(done);
      const runs = await w.listRuns(10);
      expect(runs.map((r) => r.run_id)).toEqual(['run-2', 'run-1']);
      expect(runs[1]).toEqual(done);
      expect(await w.listRuns(1)).toHaveLength(1);
      // A run that was never inserted is recorded by its update.
      await w.updateRun(syncRun('run-0', { started_at: '2026-11-18T04:30:00+08:00', status: 'failed' }));
      expect((await w.listRuns(10)).map((r) => r.run_id)).toEqual(['run-2', 'run-1', 'run-0']);
      // Instants given in UTC come back as the same instant in +08:00.
      await w.insertRun(syncRun('run-z', { started_at: '2026-11-17T20:30:00.000Z' }));
      const z = (await w.listRuns(10)).find((r) => r.run_id === 'run-z');
      expect(z?.started_at).toBe('2026-11-18T04:30:00+08:00');
    });

    it('a text that begins with U+FEFF is stored and read back whole (no byte order mark dropped)', async () => {
      const id = 9302;
      await w.writeExecutionBatch(
        batch({
          executions: [execution(id, { answer: '\uFEFFanswer', prompt_name: '\uFEFF' })],
          ranks: [rank(id, 0, '\uFEFFAcme', 1)],
        }),
      );
      const [e] = await rowsOf('prompt_executions', [id], 'prompt_task_id');
      expect(e).toMatchObject({ answer: '\uFEFFanswer', prompt_name: '\uFEFF' });
      const [r] = await rowsOf('execution_ranks', [id], 'ordinal');
      expect(r!.brand).toBe('\uFEFFAcme');
      const [n] = await w.query(
        'SELECT length(answer) AS n FROM geo.prompt_executions WHERE prompt_task_id = $1',
        [id],
      );
      expect(Number(n!.n)).toBe(7);
    });

    it('one text rule for both warehouses: U+0000 dropped from every text and JSON value, lone surrogates stored as U+FFFD', async () => {
      const id = 9301;
      const written = await w.writeExecutionBatch(
        batch({
          executions: [execution(id, { answer: 'an\0swer \u{1F600}', think: 'truncated \ud83d' })],
          ranks: [rank(id, 1, 'Acme\0 Phones', 1, { brand_short: 'Ac\0' }), rank(id, 2, 'Beta', 2)],
          products: [products(id, { field_labels: { product_name: '商\0品' } })],
          cards: [card(id, 1, { card: { product_name: 'p\0', 'sh\0op': ['\0', 'x'] }, product_name: 'p\0' })],
        }),
      );
      // answer, think, two brand texts, field_labels, the card JSON, product_name.
      expect(written).toEqual({ textValuesChanged: 7 });
      const [e] = await rowsOf('prompt_executions', [id], 'prompt_task_id');
      expect(e).toMatchObject({ answer: 'answer \u{1F600}', think: 'truncated \ufffd' });
      expect((await rowsOf('execution_ranks', [id], 'ordinal')).map((r) => [r.brand, r.brand_short])).toEqual(
        [
          ['Acme Phones', 'Ac'],
          ['Beta', 'Bet'],
        ],
      );
      const [p] = await rowsOf('execution_products', [id], 'prompt_task_id');
      expect(p!.field_labels).toEqual({ product_name: '商品' });
      const [c] = await rowsOf('product_cards', [id], 'position');
      expect(c).toMatchObject({ card: { product_name: 'p', shop: ['', 'x'] }, product_name: 'p' });
      // The JSON text itself holds no U+0000 escape, whatever the dialect's JSON type keeps.
      const [t] = await w.query(
        'SELECT CAST(card AS VARCHAR) AS t FROM geo.product_cards WHERE prompt_task_id = $1',
        [id],
      );
      expect(String(t!.t)).not.toContain('\\u0000');
      expect(String(t!.t)).not.toContain('\0');

      // Rows written by statements (not bulk loads) follow the same rule.
      const task = {
        project_id: 9301,
        customer_id: null,
        project_name: 'Brand\0 watch',
        brand_cate_desc: 'phones',
        brand_desc_list: 'Acme\0\nBeta',
        status: 1,
        status_name: 'in progress',
        created_at: '2026-01-02T03:04:05+08:00',
        task_count: 1,
        prompts: ['best\0 phone?'],
      };
      expect(await w.upsertMonitoringTasks([task])).toEqual({ textValuesChanged: 3 });
      const [m] = await w.query(
        'SELECT project_name, brand_desc_list, prompts FROM geo.monitoring_tasks WHERE project_id = $1',
        [9301],
      );
      expect(m).toEqual({
        project_name: 'Brand watch',
        brand_desc_list: 'Acme\nBeta',
        prompts: ['best phone?'],
      });
      expect(
        await w.insertRejects([
          {
            run_id: 'run-text',
            endpoint: '/api/v2/geo/task/results',
            params: { task_id: 1 },
            reason: 'bad \0',
            raw: { answer: 'a\0' },
            seen_at: '2026-11-21T04:32:00+08:00',
          },
        ]),
      ).toEqual({ textValuesChanged: 2 });
      const [r] = await w.query('SELECT reason, raw FROM geo.sync_rejects WHERE run_id = $1', ['run-text']);
      expect(r).toEqual({ reason: 'bad ', raw: { answer: 'a' } });
    });

    it('rejects are kept with their payload', async () => {
      await w.insertRejects([
        {
          run_id: 'run-r',
          endpoint: '/api/v2/geo/task/results',
          params: { task_id: 10, date: '2026-11-20' },
          reason: 'prompt_task_id: expected number',
          raw: { prompt_task_id: 'x', nested: [null, true] },
          seen_at: '2026-11-21T04:32:00+08:00',
        },
        {
          run_id: 'run-r',
          endpoint: '/api/v2/geo/prompt/searches',
          params: { prompt_task_id: 1 },
          reason: 'bad',
          raw: null,
          seen_at: '2026-11-21T04:33:00+08:00',
        },
      ]);
      await w.insertRejects([]);
      const rows = await w.query(
        'SELECT id, endpoint, params, raw, seen_at FROM geo.sync_rejects WHERE run_id = $1 ORDER BY id',
        ['run-r'],
      );
      expect(rows.map(({ id: _id, ...r }) => r)).toEqual([
        {
          endpoint: '/api/v2/geo/task/results',
          params: { task_id: 10, date: '2026-11-20' },
          raw: { prompt_task_id: 'x', nested: [null, true] },
          seen_at: '2026-11-21T04:32:00+08:00',
        },
        {
          endpoint: '/api/v2/geo/prompt/searches',
          params: { prompt_task_id: 1 },
          raw: null,
          seen_at: '2026-11-21T04:33:00+08:00',
        },
      ]);
      expect(typeof rows[0]!.id).toBe('number');
      expect(Number(rows[1]!.id)).toBeGreaterThan(Number(rows[0]!.id));
    });

    it('deductions: upsert by id, exact money, latest day in Asia/Shanghai', async () => {
      expect(await w.latestDeductionDay()).toBeNull();
      const d = {
        id: 9001,
        user_id: 7,
        prompt_task_id: 101,
        diff_amount: '-12345678.1234',
        before_amount: '99999999999999.9999',
        after_amount: '0.0001',
        remark: 'deduction',
        created_at: '2026-11-19T10:00:00+08:00',
      };
      await w.upsertDeductions([d]);
      // 00:30 in Shanghai is still the previous day in UTC: the day must be Shanghai's.
      await w.upsertDeductions([{ ...d, id: 9002, created_at: '2026-11-21T00:30:00+08:00' }]);
      await w.upsertDeductions([{ ...d, remark: 'corrected' }]);
      expect(await w.latestDeductionDay()).toBe('2026-11-21');
      const rows = await w.query(
        'SELECT id, diff_amount, before_amount, after_amount, remark, created_at FROM geo.deductions ORDER BY id',
      );
      expect(rows).toEqual([
        {
          id: 9001,
          diff_amount: '-12345678.1234',
          before_amount: '99999999999999.9999',
          after_amount: '0.0001',
          remark: 'corrected',
          created_at: '2026-11-19T10:00:00+08:00',
        },
        {
          id: 9002,
          diff_amount: '-12345678.1234',
          before_amount: '99999999999999.9999',
          after_amount: '0.0001',
          remark: 'deduction',
          created_at: '2026-11-21T00:30:00+08:00',
        },
      ]);
    });

    it('API timestamps with zones and fractions are stored as their instants, dated in Shanghai', async () => {
      // 16:30:00.25 UTC on Nov 22 is 00:30:00.25 on Nov 23 in Shanghai (text without a zone is
      // Shanghai wall time).
      const d = {
        id: 9101,
        user_id: 7,
        prompt_task_id: 101,
        diff_amount: '-1',
        before_amount: '2',
        after_amount: '1',
        remark: 'near midnight',
        created_at: apiInstant('2026-11-22T16:30:00.25Z'),
      };
      await w.upsertDeductions([d, { ...d, id: 9102, created_at: apiInstant('2026-11-22T11:30:00-05:00') }]);
      expect(await w.latestDeductionDay()).toBe('2026-11-23');
      const rows = await w.query(
        `SELECT id, created_at, CAST(extract(epoch FROM created_at) * 1000 AS BIGINT) AS ms
         FROM geo.deductions WHERE id IN (9101, 9102) ORDER BY id`,
      );
      expect(rows).toEqual([
        { id: 9101, created_at: '2026-11-23T00:30:00.250+08:00', ms: Date.parse('2026-11-22T16:30:00.250Z') },
        { id: 9102, created_at: '2026-11-23T00:30:00+08:00', ms: Date.parse('2026-11-22T16:30:00Z') },
      ]);
    });

    it('balance snapshots keep money exact and are idempotent by taken_at', async () => {
      const snap = {
        taken_at: '2026-11-21T04:30:00+08:00',
        run_id: 'run-b',
        user_id: 7,
        user_name: 'demo',
        amount: '12345678.1234',
      };
      await w.insertBalanceSnapshot(snap);
      await w.insertBalanceSnapshot(snap);
      const rows = await w.query('SELECT taken_at, amount, user_name FROM geo.balance_snapshots');
      expect(rows).toEqual([
        { taken_at: '2026-11-21T04:30:00+08:00', amount: '12345678.1234', user_name: 'demo' },
      ]);
      const sum = await w.query('SELECT CAST(amount * 2 AS VARCHAR) AS twice FROM geo.balance_snapshots');
      expect(String(sum[0]!.twice)).toMatch(/^24691356\.2468/);
    });

    it('site diagnoses upsert by diagnosis_id', async () => {
      const queued = {
        diagnosis_id: 'd-1',
        customer_id: 1000,
        status: 'running',
        diagnosis_task_id: 't-1',
        result_ready: false,
        progress_percent: 40.5,
        current_step: 'crawl',
        error: null,
        project_url: 'https://brand.example',
        url: 'https://brand.example',
        is_current_url: true,
        composite_score: null,
        summary_text: null,
        top_issues: null,
        quick_wins: null,
        modules_summary: null,
        platform_scores: null,
        observation: null,
        page_diagnostics: null,
        result_json: null,
        seen_at: '2026-11-21T04:30:00+08:00',
      };
      await w.upsertSiteDiagnoses([queued]);
      const done = {
        ...queued,
        status: 'completed',
        result_ready: true,
        progress_percent: 100,
        current_step: null,
        composite_score: 72.5,
        summary_text: 'fine',
        top_issues: [{ id: 1, title: 'slow' }],
        result_json: { score: 72.5, modules: { seo: 80 } },
        seen_at: '2026-11-21T04:40:00+08:00',
      };
      await w.upsertSiteDiagnoses([done]);
      const rows = await w.query('SELECT * FROM geo.site_diagnoses');
      expect(rows).toHaveLength(1);
      const { synced_at: _s, ...row } = rows[0]!;
      expect(row).toEqual(done);

      // Two ids that differ only by a U+0000 are one key once stored (the text rule drops it):
      // one write of both keeps the later, instead of meeting the key twice in one upsert.
      await w.upsertSiteDiagnoses([
        { ...done, diagnosis_id: 'd-\u00002', status: 'queued' },
        { ...done, diagnosis_id: 'd-2', status: 'failed' },
      ]);
      expect(await w.query(`SELECT status FROM geo.site_diagnoses WHERE diagnosis_id = 'd-2'`)).toEqual([
        { status: 'failed' },
      ]);

      // A double that is a whole number past 2^63 (any score past 9.2e18) is a DOUBLE, not a BIGINT.
      await w.upsertSiteDiagnoses([
        { ...done, diagnosis_id: 'd-3', composite_score: 1e300, progress_percent: 2 ** 64 },
      ]);
      expect(
        await w.query(
          `SELECT composite_score, progress_percent FROM geo.site_diagnoses WHERE diagnosis_id = 'd-3'`,
        ),
      ).toEqual([{ composite_score: 1e300, progress_percent: 2 ** 64 }]);
    });

    it('many rows in one statement (one list per column) keep every value: texts an array literal would mangle, JSON, doubles, booleans, NULLs', async () => {
      // Each column goes in as one list: node-postgres writes it as an array literal, whose
      // syntax these texts would break if they were not quoted and escaped; DuckDB binds it typed.
      const texts = [
        '',
        'NULL',
        'null',
        '"',
        '\\',
        '\\"',
        '{a,b}',
        'a, b',
        ' spaced ',
        'line\nbreak\ttab',
        '中文 🚀',
        "it's",
      ];
      const rows = Array.from({ length: 300 }, (_, i) => {
        const t = texts[i % texts.length]!;
        return {
          diagnosis_id: `many-${i}-${t}`,
          customer_id: 1000 + i,
          status: t,
          diagnosis_task_id: i % 3 === 0 ? null : t,
          result_ready: i % 3 === 0 ? null : i % 2 === 0,
          progress_percent: i % 5 === 0 ? null : i / 7,
          current_step: t,
          error: i % 4 === 0 ? null : { message: t, codes: [i, -i, 0.5], nested: { t: [t, null, true] } },
          project_url: null,
          url: t,
          is_current_url: i % 2 === 1,
          composite_score: i % 6 === 0 ? 1e-300 : -i * 1.5,
          summary_text: t,
          top_issues: [t],
          quick_wins: null,
          modules_summary: i,
          platform_scores: { [t]: i },
          observation: null,
          page_diagnostics: null,
          result_json: i % 2 === 0 ? false : 'string',
          seen_at: '2026-11-21T04:30:00+08:00',
        };
      });
      await w.upsertSiteDiagnoses(rows);
      const stored = await w.query(
        `SELECT * FROM geo.site_diagnoses WHERE diagnosis_id LIKE 'many-%' ORDER BY customer_id`,
      );
      expect(stored.map(({ synced_at: _s, ...r }) => r)).toEqual(rows);

      // A negative zero (a lenient "-0" score) is stored as 0 by both, as one row alone stored it.
      await w.upsertSiteDiagnoses([{ ...rows[1]!, diagnosis_id: 'many-zero', composite_score: -0 }]);
      const [zero] = await w.query(
        `SELECT composite_score FROM geo.site_diagnoses WHERE diagnosis_id = 'many-zero'`,
      );
      expect(Object.is(zero!.composite_score, 0)).toBe(true);
    });

    it('monitoring and platform tasks: upsert, legacy config and prompts survive a re-sync', async () => {
      const task = {
        project_id: 100,
        customer_id: 1000,
        project_name: 'Brand watch',
        brand_cate_desc: 'phones',
        brand_desc_list: 'Acme\nBeta',
        status: 1,
        status_name: 'in progress',
        created_at: '2026-01-02T03:04:05+08:00',
        task_count: 2,
        prompts: ['best phone?', 'cheap phone?'],
      };
      const platform = {
        task_id: 10,
        project_id: 100,
        customer_id: 1000,
        task_name: 'deepseek',
        model_key: 'deepseek',
        model_name: 'DeepSeek',
        engine: 'deepseek',
        status: 1,
        status_name: 'in progress',
      };
      await w.upsertMonitoringTasks([task]);
      await w.upsertPlatformTasks([platform]);
      await w.updateMonitoringTaskConfig([
        {
          project_id: 100,
          week_restart: 0,
          only_rank: 1,
          rank_match: 0,
          brand_urls: ['https://acme.example'],
          emails: [],
        },
      ]);
      await w.updatePlatformTaskPrompts([{ task_id: 10, prompts: ['best phone?'] }]);
      await w.upsertMonitoringTasks([{ ...task, project_name: 'Renamed' }]);
      await w.upsertPlatformTasks([{ ...platform, status: 2 }]);

      const [m] = await w.query('SELECT * FROM geo.monitoring_tasks WHERE project_id = $1', [100]);
      expect(m).toMatchObject({
        project_name: 'Renamed',
        customer_id: 1000,
        created_at: '2026-01-02T03:04:05+08:00',
        prompts: ['best phone?', 'cheap phone?'],
        week_restart: 0,
        only_rank: 1,
        brand_urls: ['https://acme.example'],
        emails: [],
      });
      const [p] = await w.query('SELECT status, prompts FROM geo.platform_tasks WHERE task_id = $1', [10]);
      expect(p).toEqual({ status: 2, prompts: ['best phone?'] });
      // Many in one call (one statement): of two of one task the later applies; one not stored
      // changes nothing.
      await w.upsertPlatformTasks([{ ...platform, task_id: 11 }]);
      await w.updatePlatformTaskPrompts([
        { task_id: 10, prompts: ['first'] },
        { task_id: 11, prompts: [] },
        { task_id: 12_345, prompts: ['not stored'] },
        { task_id: 10, prompts: ['later wins'] },
      ]);
      expect(
        await w.query(
          'SELECT task_id, prompts FROM geo.platform_tasks WHERE task_id IN ($1, $2, $3) ORDER BY task_id',
          [10, 11, 12_345],
        ),
      ).toEqual([
        { task_id: 10, prompts: ['later wins'] },
        { task_id: 11, prompts: [] },
      ]);
      await w.updatePlatformTaskPrompts([{ task_id: 10, prompts: ['best phone?'] }]);
      // A config for a monitoring task not stored yet changes nothing.
      await w.updateMonitoringTaskConfig([
        { project_id: 999, week_restart: 1, only_rank: 0, rank_match: 1, brand_urls: [], emails: [] },
      ]);
      expect(
        await w.query('SELECT project_id FROM geo.monitoring_tasks WHERE project_id = $1', [999]),
      ).toEqual([]);
    });

    it('timestamps are +08:00 instants', async () => {
      await w.writeExecutionBatch(
        batch({
          executions: [
            execution(401, { created_at: '2026-11-21T08:00:00+08:00', updated_at: '2026-11-21T00:00:00Z' }),
          ],
        }),
      );
      const [row] = await w.query(
        `SELECT created_at, updated_at,
                CAST(extract(epoch FROM created_at) AS BIGINT) AS created_epoch,
                CAST(extract(epoch FROM updated_at) AS BIGINT) AS updated_epoch
         FROM geo.prompt_executions WHERE prompt_task_id = $1`,
        [401],
      );
      expect(row).toEqual({
        created_at: '2026-11-21T08:00:00+08:00',
        updated_at: '2026-11-21T08:00:00+08:00',
        created_epoch: Date.parse('2026-11-21T00:00:00Z') / 1000,
        updated_epoch: Date.parse('2026-11-21T00:00:00Z') / 1000,
      });
    });

    it('views aggregate a hand-built day', async () => {
      const day = '2026-10-01';
      const at = { task_id: 50, project_id: 500, customer_id: 5000, date_time: day };
      await w.writeExecutionBatch(
        batch({
          executions: [
            execution(501, at),
            execution(502, at),
            execution(503, at),
            execution(504, { ...at, result_status: 'missing', answer: null }),
          ],
          ranks: [
            rank(501, 0, 'Acme', 1),
            rank(501, 1, 'Beta', 2),
            rank(502, 0, 'Acme', null),
            rank(502, 1, 'Beta', 1),
            rank(503, 0, 'Acme', 3),
            rank(503, 1, 'Acme', 5),
          ],
          sources: [
            source(5011, 501, 'a.com'),
            source(5012, 501, 'a.com'),
            source(5021, 502, 'a.com'),
            source(5022, 502, 'b.com'),
          ],
        }),
      );
      await w.refreshStaleRollups();
      const brands = await w.query(
        `SELECT date, customer_id, project_id, task_id, engine, model, brand, appearances, valid_ranks,
                avg_position, best_position, executions, rank_share
         FROM geo.brand_rank_daily WHERE task_id = $1 ORDER BY brand`,
        [50],
      );
      const common = { date: day, customer_id: 5000, project_id: 500, task_id: 50, engine: 'deepseek' };
      expect(brands).toEqual([
        {
          ...common,
          model: 'deepseek-r1',
          brand: 'Acme',
          appearances: 4,
          valid_ranks: 3,
          avg_position: 3,
          best_position: 1,
          executions: 4,
          rank_share: 0.5,
        },
        {
          ...common,
          model: 'deepseek-r1',
          brand: 'Beta',
          appearances: 2,
          valid_ranks: 2,
          avg_position: 1.5,
          best_position: 1,
          executions: 4,
          rank_share: 0.5,
        },
      ]);
      const domains = await w.query(
        `SELECT date, customer_id, project_id, task_id, domain, citations, executions_citing
         FROM geo.citation_domains_daily WHERE task_id = $1 ORDER BY domain`,
        [50],
      );
      expect(domains).toEqual([
        {
          date: day,
          customer_id: 5000,
          project_id: 500,
          task_id: 50,
          domain: 'a.com',
          citations: 3,
          executions_citing: 2,
        },
        {
          date: day,
          customer_id: 5000,
          project_id: 500,
          task_id: 50,
          domain: 'b.com',
          citations: 1,
          executions_citing: 1,
        },
      ]);
      const daily = await w.query('SELECT * FROM geo.executions_daily WHERE task_id = $1', [50]);
      expect(daily).toEqual([{ ...common, model: 'deepseek-r1', executions: 4, available: 3, missing: 1 }]);
    });

    it('counts every data table; query takes $n parameters and refuses writes', async () => {
      const counts = await w.counts();
      expect(Object.keys(counts).sort()).toEqual([...DATA_TABLES].sort());
      for (const n of Object.values(counts)) expect(typeof n).toBe('number');
      const [row] = await w.query(
        'SELECT count(*) AS n, $1 AS label FROM geo.prompt_executions WHERE task_id = $2',
        ['x', 50],
      );
      expect(row).toEqual({ n: 4, label: 'x' });
      await expect(w.query('DELETE FROM geo.prompt_executions')).rejects.toThrow();
      expect((await w.counts()).prompt_executions).toBe(counts.prompt_executions);
    });

    it('lock: a second holder is refused and told who holds it; free again after unlock', async () => {
      const other = await openWarehouse(target);
      try {
        expect(await w.tryLock('geo-sync sync pid 1 on test since now')).toEqual({ acquired: true });
        expect(await w.tryLock('geo-sync sync pid 1 on test since now')).toEqual({ acquired: true });
        expect(await other.tryLock('geo-sync backfill pid 2')).toEqual({
          acquired: false,
          holder: 'geo-sync sync pid 1 on test since now',
        });
        await w.unlock();
        expect(await other.tryLock('geo-sync backfill pid 2')).toEqual({ acquired: true });
        expect(await w.tryLock('geo-sync sync pid 1')).toMatchObject({
          acquired: false,
          holder: 'geo-sync backfill pid 2',
        });
      } finally {
        await other.close();
      }
      // close() released it.
      expect(await w.tryLock('geo-sync sync pid 1')).toEqual({ acquired: true });
      await w.unlock();
    });

    it('withFence: a write whose fence finds nothing commits nothing (rows, deletions, checkpoint) and says why', async () => {
      const day = '2026-09-03';
      const at = { task_id: 70, date_time: day };
      await w.writeExecutionBatch(batch({ executions: [execution(701, at), execution(702, at)] }));
      let owned = true;
      const lost: Error[] = [];
      // The fence's truth is a value the test flips; the SQL runs inside the write transaction.
      const fence = () => ({
        what: 'job test',
        sql: 'SELECT 1 AS owned WHERE CAST($1 AS INTEGER) = 1',
        params: [owned ? 1 : 0],
        onLost: (e: Error) => lost.push(e),
      });
      const unit = {
        task_id: 70,
        date: day,
        seenPromptTaskIds: [701],
        checkpoint: {
          task_id: 70,
          date: day,
          run_id: 'run-f',
          finished_at: '2026-11-21T04:40:00+08:00',
          executions: 1,
        },
      };
      const live = w.withFence(fence());
      owned = false;
      const stale = w.withFence(fence());
      // The stale writer: its batch (with the unit's closing) is refused, nothing of it lands.
      await expect(
        stale.writeExecutionBatch(batch({ executions: [execution(703, at)] }), [unit]),
      ).rejects.toMatchObject({
        code: 'FENCE_LOST',
        what: 'job test',
      });
      await expect(stale.completeUnit(unit)).rejects.toMatchObject({ code: 'FENCE_LOST' });
      await expect(
        stale.recordUnitFailures([
          { task_id: 70, date: day, run_id: 'run-f', failed_at: '2026-11-21T04:40:00+08:00', error: 'x' },
        ]),
      ).rejects.toMatchObject({ code: 'FENCE_LOST' });
      await expect(stale.forgetUnits(day, day)).rejects.toMatchObject({ code: 'FENCE_LOST' });
      expect(lost).toHaveLength(4);
      expect(
        (await rowsOf('prompt_executions', [701, 702, 703], 'prompt_task_id')).map((r) => r.prompt_task_id),
      ).toEqual([701, 702]);
      expect(await w.finishedUnits([day])).toEqual(new Set());
      // Its run log is not fenced: a writer that lost its job still records what happened.
      await stale.insertRun(syncRun('run-fenced'));
      expect((await w.listRuns(100)).some((r) => r.run_id === 'run-fenced')).toBe(true);
      // The live writer commits; closing its view leaves the warehouse open.
      await live.writeExecutionBatch(batch({ executions: [execution(703, at)] }), [
        { ...unit, seenPromptTaskIds: [701, 703] },
      ]);
      await live.close();
      expect(
        (await rowsOf('prompt_executions', [701, 702, 703], 'prompt_task_id')).map((r) => r.prompt_task_id),
      ).toEqual([701, 703]);
      expect(await w.finishedUnits([day])).toEqual(new Set([`70|${day}`]));
    });

    it.runIf(dialect === 'postgres')(
      "the warehouse's connections have the server end a transaction left idle a minute",
      async () => {
        const [row] = await w.query('SHOW idle_in_transaction_session_timeout');
        expect(row).toEqual({ idle_in_transaction_session_timeout: '1min' });
      },
    );

    it.runIf(dialect === 'postgres')(
      'lock modes: workers share it; an exclusive holder excludes them and they it',
      async () => {
        const [a, b, x] = await Promise.all([
          openWarehouse(target),
          openWarehouse(target),
          openWarehouse(target),
        ]);
        try {
          expect(await a.tryLock('worker a', 'shared')).toEqual({ acquired: true });
          expect(await b.tryLock('worker b', 'shared')).toEqual({ acquired: true });
          const refused = await x.tryLock('geo-sync state reset pid 3', 'exclusive');
          expect(refused.acquired).toBe(false);
          expect(refused.holder).toContain('shared: a distributed worker at work');
          await a.unlock();
          await b.unlock();
          expect(await x.tryLock('geo-sync state reset pid 3', 'exclusive')).toEqual({ acquired: true });
          expect(await a.tryLock('worker a', 'shared')).toMatchObject({
            acquired: false,
            holder: 'geo-sync state reset pid 3',
          });
        } finally {
          await Promise.all([a.close(), b.close(), x.close()]);
        }
      },
    );

    it.runIf(dialect === 'postgres')(
      'a view pins the lock as held when it was made: after the lock is given up and taken again, its writes are refused',
      async () => {
        const a = await openWarehouse(target);
        try {
          const at = { task_id: 81, date_time: '2026-09-04' };
          // No lock held: the pinned check never passes.
          await expect(
            a.withFence(a.heldLockFence()!).writeExecutionBatch(batch({ executions: [execution(810, at)] })),
          ).rejects.toMatchObject({ code: 'FENCE_LOST', what: 'the warehouse lock' });
          expect(await a.tryLock('worker a', 'shared')).toEqual({ acquired: true });
          const attempt = a.withFence(a.heldLockFence()!);
          await attempt.writeExecutionBatch(batch({ executions: [execution(811, at)] }));
          // The holding ends (a lost lock is given up by the next tryLock) and a new one begins,
          // on another connection: the live check passes for it, the pinned one does not.
          await a.unlock();
          await expect(
            attempt.writeExecutionBatch(batch({ executions: [execution(812, at)] })),
          ).rejects.toMatchObject({ code: 'FENCE_LOST', what: 'the warehouse lock' });
          expect(await a.tryLock('worker a', 'shared')).toEqual({ acquired: true });
          await expect(
            attempt.writeExecutionBatch(batch({ executions: [execution(813, at)] })),
          ).rejects.toMatchObject({ code: 'FENCE_LOST', what: 'the warehouse lock' });
          await a.writeExecutionBatch(batch({ executions: [execution(814, at)] }));
          expect(
            (await rowsOf('prompt_executions', [810, 811, 812, 813, 814], 'prompt_task_id')).map(
              (r) => r.prompt_task_id,
            ),
          ).toEqual([811, 814]);
        } finally {
          await a.close();
        }
      },
    );

    it.runIf(dialect === 'postgres')(
      'a run whose lock was taken over cannot commit: its writes are refused, the lost listener hears',
      async () => {
        const [a, b] = await Promise.all([openWarehouse(target), openWarehouse(target)]);
        try {
          expect(await a.tryLock('run a')).toEqual({ acquired: true });
          const heard: unknown[] = [];
          a.onLockLost?.((cause) => heard.push(cause));
          // The server drops a's lock connection (as when a NAT timeout cut it), b takes the lock.
          const pg = await import('pg');
          const admin = new pg.default.Client(target);
          await admin.connect();
          await admin.query(
            `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'geo-sync lock' AND pid = (SELECT backend_pid FROM geo.sync_lock)`,
          );
          await admin.end();
          await vi.waitFor(async () => expect(await b.tryLock('run b')).toEqual({ acquired: true }), {
            timeout: 10_000,
          });
          await expect(a.upsertMonitoringTasks([])).resolves.toEqual({ textValuesChanged: 0 }); // nothing to write: no transaction
          await expect(
            a.writeExecutionBatch(
              batch({ executions: [execution(801, { task_id: 80, date_time: '2026-09-04' })] }),
            ),
          ).rejects.toMatchObject({ code: 'FENCE_LOST', what: 'the warehouse lock' });
          expect(heard.length).toBeGreaterThan(0);
          expect(await rowsOf('prompt_executions', [801], 'prompt_task_id')).toEqual([]);
          await b.writeExecutionBatch(
            batch({ executions: [execution(802, { task_id: 80, date_time: '2026-09-04' })] }),
          );
          expect((await rowsOf('prompt_executions', [802], 'prompt_task_id')).length).toBe(1);
        } finally {
          await Promise.all([a.close(), b.close()]);
        }
      },
    );
  });
}
