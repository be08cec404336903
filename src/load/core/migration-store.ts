/**
 * Migrations over one driver connection, each migration in its own transaction with its
 * geo.schema_migrations row. Every transaction that changes the schema takes the dialect's
 * migration lock first (PostgreSQL: a transaction-level advisory lock, so a second process waits
 * and then finds the migration applied, also through a transaction pooler; DuckDB: nothing
 * beyond the database mutex the connection holds and DuckDB's own file lock).
 */
import type { Logger } from 'pino';
import { sleep } from '../../abort.ts';
import { MigrationLockTimeoutError } from '../errors.ts';
import { VIEWS_VERSION, type Migration, type MigrationStore } from '../migrate.ts';
import type { Connection, Driver } from './driver.ts';
import {
  ACCOUNT_ROLLUPS_FILL,
  analyzeRollups,
  fillAccountRollupsStep,
  fillRollupsStep,
  ROLLUPS_FILL,
  type FillStep,
} from './rollups.ts';

/** The fills migrations leave to do after them, in order, with what each says when done. */
const FILLS: readonly {
  ledger: string;
  step: (driver: Driver, c: Connection) => Promise<FillStep | null>;
  done: (from: string, to: string) => string;
}[] = [
  {
    ledger: ROLLUPS_FILL,
    step: fillRollupsStep,
    done: (from, to) =>
      `filled the per-day aggregates (geo.rollup_*) from the executions stored ${from}..${to}: ` +
      'this version keeps them with every sync; the views read them',
  },
  {
    ledger: ACCOUNT_ROLLUPS_FILL,
    step: fillAccountRollupsStep,
    done: (from, to) =>
      `filled the whole account's per-day aggregates (geo.rollup_*_account_daily) of ${from}..${to}: ` +
      'the views at the account grain read them',
  },
];

export class CoreMigrationStore implements MigrationStore {
  constructor(
    private readonly driver: Driver,
    private readonly c: Connection,
    private readonly logger?: Logger,
  ) {}

  withMigrationLock<T>(fn: () => Promise<T>): Promise<T> {
    return this.driver.withMigrationLock(this.c, fn);
  }

  async ensureLedger(): Promise<void> {
    const text = this.driver.types.text;
    await this.inTransaction(() =>
      this.c.execute(`CREATE SCHEMA IF NOT EXISTS geo;
      CREATE TABLE IF NOT EXISTS geo.schema_migrations (
        version    ${text} PRIMARY KEY,
        name       ${text} NOT NULL,
        applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
      )`),
    );
  }

  /** Whether geo.schema_migrations exists (a warehouse never migrated has none). */
  async hasLedger(): Promise<boolean> {
    const rows = await this.c.rows<{ n: number | bigint | string }>(
      `SELECT count(*) AS n FROM information_schema.tables
       WHERE table_schema = 'geo' AND table_name = 'schema_migrations'`,
    );
    return Number(rows[0]?.n ?? 0) > 0;
  }

  async appliedVersions(): Promise<Set<string>> {
    const rows = await this.c.rows<{ version: string }>('SELECT version FROM geo.schema_migrations');
    return new Set(rows.map((r) => r.version));
  }

  async apply(m: Migration): Promise<boolean> {
    return this.altering(m.id, async () => {
      // Under the lock: another process may have applied it since appliedVersions() was read.
      const done = await this.c.rows('SELECT 1 AS done FROM geo.schema_migrations WHERE version = $1', [
        m.version,
      ]);
      if (done.length > 0) return false;
      await this.c.execute(m.sql);
      await this.c.execute('INSERT INTO geo.schema_migrations (version, name) VALUES ($1, $2)', [
        m.version,
        m.name,
      ]);
      return true;
    });
  }

  async pendingWork(): Promise<string[]> {
    const rows = await this.c.rows<{ version: string }>(
      'SELECT version FROM geo.schema_migrations WHERE version IN ($1, $2)',
      FILLS.map((f) => f.ledger),
    );
    const pending = new Set(rows.map((r) => r.version));
    return FILLS.map((f) => f.ledger).filter((l) => pending.has(l));
  }

  /**
   * The fills migrations left (008's of the aggregates, 012's of the account's), a batch of days
   * per transaction under the migration lock: processes migrating at once share the batches
   * instead of doing each twice.
   */
  async finishWork(): Promise<string[]> {
    const said: string[] = [];
    for (const fill of FILLS) {
      let first: string | null = null;
      let last: string | null = null;
      for (;;) {
        const step = await this.inTransaction(() => fill.step(this.driver, this.c));
        if (!step) break;
        if (step.days === 0) continue;
        first ??= step.from;
        last = step.to;
      }
      if (first && last) said.push(fill.done(first, last));
    }
    if (said.length > 0) await analyzeRollups(this.driver, this.c);
    return said;
  }

  async replaceViews(sql: string, hash: string): Promise<void> {
    await this.altering(VIEWS_VERSION, async () => {
      await this.c.execute(sql);
      await this.c.execute(
        `INSERT INTO geo.schema_migrations (version, name) VALUES ($1, $2)
         ON CONFLICT (version) DO UPDATE SET name = excluded.name, applied_at = now()`,
        [VIEWS_VERSION, hash],
      );
    });
  }

  async checkpointSchema(): Promise<void> {
    await this.driver.checkpointSchema?.(this.c);
  }

  async viewsHash(): Promise<string | null> {
    const rows = await this.c.rows<{ name: string }>(
      'SELECT name FROM geo.schema_migrations WHERE version = $1',
      [VIEWS_VERSION],
    );
    return rows[0]?.name ?? null;
  }

  /**
   * One transaction holding the migration lock that alters tables other sessions may be reading:
   * where the driver says so (SchemaLockWait), each try waits for their locks a bounded time, and
   * a try that gave up is rolled back and made again after a pause, up to the tries allowed.
   */
  private async altering<T>(step: string, fn: () => Promise<T>): Promise<T> {
    const locks = this.driver.schemaLocks;
    if (!locks) return this.inTransaction(fn);
    const { wait } = locks;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.inTransaction(async () => {
          await locks.limit(this.c);
          return fn();
        });
      } catch (e) {
        if (!locks.timedOut(e)) throw e;
        if (attempt >= wait.attempts) throw new MigrationLockTimeoutError(step, wait, { cause: e });
        this.logger?.warn(
          { step, attempt, attempts: wait.attempts, waitedMs: wait.timeoutMs },
          'migration waits: other sessions hold its tables; trying again',
        );
        // A stop ends the pause with its reason, as it ends the statements.
        await sleep(wait.pauseMs, locks.stop);
      }
    }
  }

  /** One transaction holding the migration lock. */
  private async inTransaction<T>(fn: () => Promise<T>): Promise<T> {
    await this.c.execute('BEGIN TRANSACTION');
    try {
      await this.driver.lockMigrations?.(this.c);
      const result = await fn();
      await this.c.execute('COMMIT');
      return result;
    } catch (e) {
      await this.c.execute('ROLLBACK').catch(() => undefined);
      throw e;
    }
  }
}
