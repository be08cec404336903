/**
 * PostgreSQL's statistics around a run's writes (src/load/core/tidy.ts), on the real server:
 * before a refresh of the aggregates, the join and filter columns of the tables it reads are
 * analyzed when their size moved by a tenth (and only those columns: a whole ANALYZE reads every
 * answer's text), and not again while the size stays; after the run, the tables it grew by
 * 10,000 rows and a tenth are vacuumed and analyzed whole, and a small night tidies nothing.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openWarehouse } from '../../src/load/index.ts';
import type { Warehouse } from '../../src/load/warehouse.ts';
import { createTestDatabase, postgresReachable, type TestDatabase } from '../helpers/postgres.ts';
import { batch, execution, source } from './fixtures.ts';

const pgUp = await postgresReachable();

/** `count` executions from id `first`, each with `sourcesEach` sources. */
function executions(first: number, count: number, sourcesEach: number) {
  const ids = Array.from({ length: count }, (_, i) => first + i);
  return batch({
    executions: ids.map((id) => execution(id, { answer: `answer ${id} ${'x'.repeat(1_000)}` })),
    sources: ids.flatMap((id) =>
      Array.from({ length: sourcesEach }, (_, k) => source(id * 100 + k, id, `site${k}.com`)),
    ),
  });
}

describe.skipIf(!pgUp)('PostgreSQL statistics around a run’s writes', () => {
  let db: TestDatabase;
  let client: pg.Client;
  beforeAll(async () => {
    db = await createTestDatabase();
    await withWarehouse(async () => {});
    client = new pg.Client(db.url);
    await client.connect();
    // Autovacuum would analyze or vacuum these tables in its own time, under the test's feet.
    for (const t of ['prompt_executions', 'execution_ranks', 'execution_sources', 'execution_screenshots']) {
      await client.query(`ALTER TABLE geo.${t} SET (autovacuum_enabled = off)`);
    }
  });
  afterAll(async () => {
    await client?.end();
    await db?.drop();
  });

  /**
   * A warehouse for `fn`, closed after it: a session reports its table counters (pg_stat) when it
   * closes, and the run's tidy reads them.
   */
  async function withWarehouse<T>(fn: (w: Warehouse) => Promise<T>): Promise<T> {
    const w = await openWarehouse(db.url, { migrate: true });
    try {
      return await fn(w);
    } finally {
      await w.close();
    }
  }

  /** A table's statistics and counters (pg_stat's: as the closed sessions reported them). */
  async function table(name: string) {
    const r = await client.query<{ inserted: string; analyzed: string; vacuumed: string; reltuples: number }>(
      `SELECT s.n_ins_since_vacuum AS inserted, s.analyze_count AS analyzed, s.vacuum_count AS vacuumed,
         k.reltuples
       FROM pg_stat_user_tables s JOIN pg_class k ON k.oid = s.relid
       WHERE s.schemaname = 'geo' AND s.relname = $1`,
      [name],
    );
    const row = r.rows[0]!;
    return {
      inserted: Number(row.inserted),
      analyzed: Number(row.analyzed),
      vacuumed: Number(row.vacuumed),
      reltuples: row.reltuples,
    };
  }

  /** Until the sessions that inserted `rows` rows into `name` reported them (at their close). */
  async function reported(name: string, rows: number): Promise<void> {
    for (let i = 0; i < 100 && (await table(name)).inserted < rows; i++) {
      await new Promise((ok) => setTimeout(ok, 50));
    }
  }

  async function analyzedColumns(name: string): Promise<string[]> {
    const r = await client.query<{ attname: string }>(
      `SELECT attname FROM pg_stats WHERE schemaname = 'geo' AND tablename = $1 ORDER BY attname`,
      [name],
    );
    return r.rows.map((x) => x.attname);
  }

  it('a refresh after a first read analyzes the columns it joins on, once', async () => {
    const before = await table('prompt_executions');
    await withWarehouse(async (w) => {
      await w.writeExecutionBatch(executions(1, 3_000, 5));
      await w.refreshStaleRollups();
    });
    const after = await table('prompt_executions');
    const sources = await table('execution_sources');
    expect(after.analyzed).toBe(before.analyzed + 1);
    expect(after.reltuples).toBe(3_000);
    expect(await analyzedColumns('prompt_executions')).toEqual(['date_time', 'prompt_task_id', 'task_id']);
    expect(await analyzedColumns('execution_sources')).toEqual(['prompt_task_id']);

    // A small write: the statistics still describe the tables, so nothing is analyzed again.
    await withWarehouse(async (w) => {
      await w.writeExecutionBatch(executions(5_000, 20, 5));
      await w.refreshStaleRollups();
    });
    expect((await table('prompt_executions')).analyzed).toBe(after.analyzed);
    expect((await table('execution_sources')).analyzed).toBe(sources.analyzed);
  });

  it('the run’s tidy vacuums and analyzes whole the tables grown by 10,000 rows and a tenth', async () => {
    // Whatever earlier writes grew is tidied first; then 12,000 sources and 1,000 executions.
    await withWarehouse((w) => w.tidyGrownTables());
    const vacuumed = (await table('execution_sources')).vacuumed;
    const inserted = (await table('execution_sources')).inserted;
    await withWarehouse((w) => w.writeExecutionBatch(executions(30_000, 1_000, 12)));
    await reported('execution_sources', inserted + 12_000);
    expect(await withWarehouse((w) => w.tidyGrownTables())).toEqual(['execution_sources']);
    expect((await table('execution_sources')).vacuumed).toBe(vacuumed + 1);
    expect(await analyzedColumns('execution_sources')).toContain('domain');
    // A small night tidies nothing.
    await withWarehouse((w) => w.writeExecutionBatch(executions(40_000, 20, 5)));
    expect(await withWarehouse((w) => w.tidyGrownTables())).toEqual([]);
  });
});
