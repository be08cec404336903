/**
 * Migrations over one driver connection, each migration in its own transaction with its
 * geo.schema_migrations row. Every transaction that changes the schema takes the dialect's
 * migration lock first (PostgreSQL: a transaction-level advisory lock, so a second process waits
 * and then finds the migration applied, also through a transaction pooler; DuckDB: nothing
 * beyond the database mutex the connection holds and DuckDB's own file lock).
 */
import { VIEWS_VERSION, type Applied, type Migration, type MigrationStore } from '../migrate.ts';
import type { Connection, Driver } from './driver.ts';
import { fillRollups } from './rollups.ts';

/**
 * What a migration does beyond its SQL file, inside its transaction (so a migration is applied
 * whole or not at all, even under kill -9): 008 creates the aggregate tables, then fills them
 * from the executions a warehouse upgraded from an earlier version already holds.
 */
const AFTER_SQL: Readonly<Record<string, (driver: Driver, c: Connection) => Promise<string | null>>> = {
  '008_rollups': fillRollups,
};

export class CoreMigrationStore implements MigrationStore {
  constructor(
    private readonly driver: Driver,
    private readonly c: Connection,
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

  async apply(m: Migration): Promise<Applied> {
    return this.inTransaction(async () => {
      // Under the lock: another process may have applied it since appliedVersions() was read.
      const done = await this.c.rows('SELECT 1 AS done FROM geo.schema_migrations WHERE version = $1', [
        m.version,
      ]);
      if (done.length > 0) return { applied: false, note: null };
      await this.c.execute(m.sql);
      const note = (await AFTER_SQL[m.id]?.(this.driver, this.c)) ?? null;
      await this.c.execute('INSERT INTO geo.schema_migrations (version, name) VALUES ($1, $2)', [
        m.version,
        m.name,
      ]);
      return { applied: true, note };
    });
  }

  async replaceViews(sql: string, hash: string): Promise<void> {
    await this.inTransaction(async () => {
      await this.c.execute(sql);
      await this.c.execute(
        `INSERT INTO geo.schema_migrations (version, name) VALUES ($1, $2)
         ON CONFLICT (version) DO UPDATE SET name = excluded.name, applied_at = now()`,
        [VIEWS_VERSION, hash],
      );
    });
  }

  async viewsHash(): Promise<string | null> {
    const rows = await this.c.rows<{ name: string }>(
      'SELECT name FROM geo.schema_migrations WHERE version = $1',
      [VIEWS_VERSION],
    );
    return rows[0]?.name ?? null;
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
