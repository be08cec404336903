/**
 * Migrations, DuckDB. The caller runs them inside the database's mutex (no other statement of
 * this process interleaves) and DuckDB's file lock keeps other processes out, so the migration
 * lock itself has nothing left to do. Each migration runs in one transaction with its ledger row.
 */
import type { Migration, MigrationStore } from '../migrate.ts';
import type { Session } from './session.ts';

export class DuckDBMigrationStore implements MigrationStore {
  constructor(private readonly session: Session) {}

  withMigrationLock<T>(fn: () => Promise<T>): Promise<T> {
    return fn();
  }

  async ensureLedger(): Promise<void> {
    await this.session.run(`CREATE SCHEMA IF NOT EXISTS geo;
      CREATE TABLE IF NOT EXISTS geo.schema_migrations (
        version    VARCHAR PRIMARY KEY,
        name       VARCHAR NOT NULL,
        applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
      )`);
  }

  async appliedVersions(): Promise<Set<string>> {
    const rows = await this.session.rows<{ version: string }>('SELECT version FROM geo.schema_migrations');
    return new Set(rows.map((r) => r.version));
  }

  async apply(m: Migration): Promise<void> {
    await this.session.transaction(async () => {
      await this.session.run(m.sql);
      await this.session.run('INSERT INTO geo.schema_migrations (version, name) VALUES ($1, $2)', [
        m.version,
        m.name,
      ]);
    });
  }

  async replaceViews(sql: string): Promise<void> {
    await this.session.transaction(() => this.session.run(sql));
  }
}
