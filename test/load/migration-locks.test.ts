/**
 * On PostgreSQL a migration waits a bounded time for the tables it alters: a lock request that
 * waits holds up every later query of its table, so a migration behind a long query would stall
 * the dashboards for as long as that query runs. Each try waits `timeoutMs`, the queries queued
 * behind it run between tries, and after the last try the migration gives up with nothing of it
 * applied and a message that says what to do.
 */
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MigrationLockTimeoutError, openWarehouse } from '../../src/load/index.ts';
import { startCli } from '../helpers/cli.ts';
import { createTestDatabase, postgresReachable, type TestDatabase } from '../helpers/postgres.ts';
import { waitingOnLock } from '../helpers/signals.ts';

const pgUp = await postgresReachable();

/** 013 undone: the warehouse as the release before it left it. */
const BEFORE_013 = `
  DROP INDEX geo.prompt_executions_date_task_counts_idx;
  CREATE INDEX prompt_executions_date_task_idx ON geo.prompt_executions (date_time, task_id);
  ALTER TABLE geo.prompt_executions RESET (autovacuum_vacuum_insert_scale_factor);
  DELETE FROM geo.schema_migrations WHERE version = '013';`;

describe.skipIf(!pgUp)('a migration waits a bounded time for the tables it alters', () => {
  let db: TestDatabase;
  const clients: pg.Client[] = [];
  const client = async () => {
    const c = new pg.Client(db.url);
    await c.connect();
    clients.push(c);
    return c;
  };
  /** A session reading prompt_executions in an open transaction: it holds ACCESS SHARE until it ends. */
  const reader = async () => {
    const c = await client();
    await c.query('BEGIN');
    await c.query('SELECT count(*) FROM geo.prompt_executions');
    return c;
  };
  const indexes = async () =>
    (
      await (
        await client()
      ).query<{ indexname: string }>(
        `SELECT indexname FROM pg_indexes WHERE schemaname = 'geo' AND tablename = 'prompt_executions'
           AND indexname LIKE 'prompt_executions_date_task%' ORDER BY 1`,
      )
    ).rows.map((r) => r.indexname);
  const migrate = async (wait: { timeoutMs: number; attempts: number; pauseMs: number }) => {
    const w = await openWarehouse(db.url, { schemaLockWait: wait });
    try {
      return await w.migrate();
    } finally {
      await w.close();
    }
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    const w = await openWarehouse(db.url, { migrate: true });
    await w.close();
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.end().catch(() => undefined);
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('gives up after its tries while a session holds the table, applies nothing, and says what to do', async () => {
    await (await client()).query(BEFORE_013);
    const holder = await reader();
    const failed = await migrate({ timeoutMs: 200, attempts: 3, pauseMs: 50 }).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(MigrationLockTimeoutError);
    const e = failed as MigrationLockTimeoutError;
    expect(e.code).toBe('MIGRATION_LOCK_TIMEOUT');
    expect(e.step).toBe('013_execution_counts_index');
    expect(e.message).toBe(
      'migration 013_execution_counts_index was not applied: other sessions held its tables through ' +
        '3 tries of 0.2 s (a long BI query, an export, a sync; pg_stat_activity lists them). Nothing of ' +
        'it changed. Run `geo-sync migrate` again once they end, or stop them first',
    );
    expect((e.cause as { code?: string }).code).toBe('55P03');
    // Nothing of 013: the old index, no ledger row; the reader was never cancelled.
    expect(await indexes()).toEqual(['prompt_executions_date_task_idx']);
    const ledger = await (await client()).query(`SELECT 1 FROM geo.schema_migrations WHERE version = '013'`);
    expect(ledger.rowCount).toBe(0);
    await holder.query('SELECT 1 FROM geo.prompt_executions LIMIT 1');
    await holder.query('COMMIT');

    // Once the session ended, the next migrate applies it.
    expect((await migrate({ timeoutMs: 200, attempts: 3, pauseMs: 50 })).applied).toEqual([
      '013_execution_counts_index',
    ]);
    expect(await indexes()).toEqual(['prompt_executions_date_task_counts_idx']);
  });

  it('lets the queries queued behind a try run between tries, and goes on when the session ends', async () => {
    await (await client()).query(BEFORE_013);
    const holder = await reader();
    const migrating = migrate({ timeoutMs: 1000, attempts: 20, pauseMs: 100 });
    migrating.catch(() => undefined); // awaited below; never unhandled meanwhile
    // The migration's lock request waits behind the holder ...
    await waitingOnLock(db.url, 10_000);
    // ... and a query that comes meanwhile queues behind that request ...
    const queued = await client();
    const pid = (await queued.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    const read = queued.query('SELECT count(*) FROM geo.prompt_executions');
    await waitingOnLock(db.url, 10_000, pid);
    // ... and runs when the try gives up, while the holder still holds the table.
    await read;
    await holder.query('COMMIT');
    expect((await migrating).applied).toEqual(['013_execution_counts_index']);
    expect(await indexes()).toEqual(['prompt_executions_date_task_counts_idx']);
  });

  it('a stop ends the pause between tries at once, with its reason', async () => {
    await (await client()).query(BEFORE_013);
    const holder = await reader();
    const stop = new AbortController();
    const reason = new Error('stopped by the test');
    const waits: unknown[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => waits.push(JSON.parse(line)) });
    const w = await openWarehouse(db.url, {
      logger,
      interruptOn: stop.signal,
      // A pause far longer than the test may take: only the stop ends it.
      schemaLockWait: { timeoutMs: 200, attempts: 3, pauseMs: 600_000 },
    });
    try {
      const migrating = w.migrate();
      migrating.catch(() => undefined);
      while (waits.length === 0) await new Promise((r) => setTimeout(r, 20));
      stop.abort(reason);
      await expect(migrating).rejects.toBe(reason);
    } finally {
      await w.close();
    }
    await holder.query('COMMIT');
    expect(await indexes()).toEqual(['prompt_executions_date_task_idx']);
    expect((await migrate({ timeoutMs: 200, attempts: 3, pauseMs: 50 })).applied).toEqual([
      '013_execution_counts_index',
    ]);
  });

  it('waits the same way to replace the views', async () => {
    // Views of another release: migrate replaces them, which locks each view it replaces.
    await (
      await client()
    ).query(`UPDATE geo.schema_migrations SET name = 'an earlier release' WHERE version = 'views'`);
    const holder = await client();
    await holder.query('BEGIN');
    await holder.query('SELECT count(*) FROM geo.executions_enriched');
    const failed = await migrate({ timeoutMs: 200, attempts: 2, pauseMs: 50 }).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(MigrationLockTimeoutError);
    expect((failed as MigrationLockTimeoutError).step).toBe('views');
    expect((failed as Error).message).toMatch(/^the BI views could not be replaced: other sessions held/);
    await holder.query('COMMIT');
    const w = await openWarehouse(db.url, { migrate: true });
    await w.close();
    const views = await (
      await client()
    ).query<{ name: string }>(`SELECT name FROM geo.schema_migrations WHERE version = 'views'`);
    expect(views.rows[0]!.name).not.toBe('an earlier release');
  });

  it('geo-sync migrate logs each wait, exits 4 with one line after its tries, and applies it once the table is free', async () => {
    await (await client()).query(BEFORE_013);
    const holder = await reader();
    const env = { GEO_WAREHOUSE: db.url, GEO_MIGRATE_LOCK_TIMEOUT_MS: '300' };
    const cli = startCli(['migrate'], env);
    const done = await cli.done;
    expect(done.code).toBe(4);
    const waits = cli
      .stderr()
      .split('\n')
      .filter((l) => l.includes('migration waits'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    // Six tries: five waits logged, then the error.
    expect(waits.map((w) => w.attempt)).toEqual([1, 2, 3, 4, 5]);
    expect(waits[0]).toMatchObject({ step: '013_execution_counts_index', attempts: 6, waitedMs: 300 });
    expect(cli.stderr().trim().split('\n').at(-1)).toBe(
      'error: migration 013_execution_counts_index was not applied: other sessions held its tables through ' +
        '6 tries of 0.3 s (a long BI query, an export, a sync; pg_stat_activity lists them). Nothing of ' +
        'it changed. Run `geo-sync migrate` again once they end, or stop them first',
    );
    expect(await indexes()).toEqual(['prompt_executions_date_task_idx']);
    await holder.query('COMMIT');
    expect((await startCli(['migrate'], env).done).code).toBe(0);
    expect(await indexes()).toEqual(['prompt_executions_date_task_counts_idx']);
  }, 30_000);
});
