/**
 * Migrations, PostgreSQL: on one connection, under pg_advisory_lock(MIGRATION_LOCK_KEY) so a
 * second process waits and then finds everything applied; each migration in its own transaction
 * with its geo.schema_migrations row.
 */
import type pg from 'pg';
import type { Migration, MigrationStore } from '../migrate.ts';
import { MIGRATION_LOCK_KEY } from './advisory-lock.ts';

export class PostgresMigrationStore implements MigrationStore {
  constructor(private readonly client: pg.ClientBase) {}

  async withMigrationLock<T>(fn: () => Promise<T>): Promise<T> {
    await this.client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      return await fn();
    } finally {
      await this.client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  }

  async ensureLedger(): Promise<void> {
    await this.client.query(`CREATE SCHEMA IF NOT EXISTS geo;
      CREATE TABLE IF NOT EXISTS geo.schema_migrations (
        version    TEXT PRIMARY KEY,
        name       TEXT NOT NULL,
        applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
      )`);
  }

  async appliedVersions(): Promise<Set<string>> {
    const r = await this.client.query<{ version: string }>('SELECT version FROM geo.schema_migrations');
    return new Set(r.rows.map((row) => row.version));
  }

  async apply(m: Migration): Promise<void> {
    await this.inTransaction(async () => {
      await this.client.query(m.sql);
      await this.client.query('INSERT INTO geo.schema_migrations (version, name) VALUES ($1, $2)', [
        m.version,
        m.name,
      ]);
    });
  }

  async replaceViews(sql: string): Promise<void> {
    await this.inTransaction(() => this.client.query(sql));
  }

  private async inTransaction(fn: () => Promise<unknown>): Promise<void> {
    await this.client.query('BEGIN');
    try {
      await fn();
      await this.client.query('COMMIT');
    } catch (e) {
      await this.client.query('ROLLBACK').catch(() => undefined);
      throw e;
    }
  }
}
