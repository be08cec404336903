/**
 * Migrations: numbered SQL files per dialect (`sql/<dialect>/001_init.sql`, ...) applied in
 * order, each in its own transaction together with its row in `geo.schema_migrations`; then
 * `sql/views.sql` (CREATE OR REPLACE VIEW, rendered for the dialect by views.ts) re-creates the
 * BI views. The dialects supply the storage and the lock through MigrationStore:
 * - PostgreSQL takes pg_advisory_xact_lock(MIGRATION_LOCK_KEY) in each transaction and applies
 *   a migration only when its ledger row is still missing then, so two processes migrating at
 *   once apply each file once (and no session lock is left behind a transaction pooler);
 * - DuckDB allows one read-write process per file (the open retries while another holds it) and
 *   serializes this process's connections with a mutex.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { commentSql } from './dictionary.ts';
import { readViews } from './views.ts';
import type { Dialect, MigrateResult } from './warehouse.ts';

export interface Migration {
  /** `001` */
  version: string;
  /** `init` */
  name: string;
  /** `001_init`: how MigrateResult names it. */
  id: string;
  sql: string;
}

export interface MigrationSet {
  migrations: Migration[];
  views: string;
}

export interface MigrationStore {
  /** Runs `fn`, the migrations (each step locks for itself: see apply). */
  withMigrationLock<T>(fn: () => Promise<T>): Promise<T>;
  /** Creates schema `geo` and `geo.schema_migrations` when missing. */
  ensureLedger(): Promise<void>;
  /** Whether geo.schema_migrations exists (a warehouse never migrated has none). */
  hasLedger(): Promise<boolean>;
  appliedVersions(): Promise<Set<string>>;
  /**
   * One transaction holding the migration lock: the migration's SQL and its ledger row, unless
   * another process applied it meanwhile (false).
   */
  apply(migration: Migration): Promise<boolean>;
  /**
   * Work a migration left to do after all of them, in bounded transactions (008: the per-day
   * aggregates of the executions already stored): what is pending (`rollups_fill`), and doing it
   * (one line to say per thing done).
   */
  pendingWork(): Promise<string[]>;
  finishWork(): Promise<string[]>;
  /** One transaction: the views file, and its hash in the ledger's `views` row. */
  replaceViews(sql: string, hash: string): Promise<void>;
  /**
   * Makes the schema changes committed so far durable beyond the WAL where the dialect needs it
   * (DuckDB: checkpointed into the file, which its own clients could otherwise not open after a
   * crash: Driver.checkpointSchema). After the migrations applied, before the fills that may
   * take minutes, and after the views.
   */
  checkpointSchema(): Promise<void>;
  /** The hash of the views (and dictionary) last applied; null before the first. */
  viewsHash(): Promise<string | null>;
}

/** The ledger row that holds the views' hash (no migration is numbered so). */
export const VIEWS_VERSION = 'views';

/** What identifies a views file (with the dictionary's comments): its SHA-256, hex. */
export function viewsHash(set: MigrationSet): string {
  return createHash('sha256').update(set.views).digest('hex');
}

/**
 * What `migrate` would do, done by nobody: the migrations not applied yet, and `views` when the
 * views or the dictionary differ from those applied. Reads only (a read-only role can ask).
 */
export async function pendingMigrations(store: MigrationStore, set: MigrationSet): Promise<string[]> {
  if (!(await store.hasLedger())) return [...set.migrations.map((m) => m.id), VIEWS_VERSION];
  const applied = await store.appliedVersions();
  const pending = set.migrations.filter((m) => !applied.has(m.version)).map((m) => m.id);
  if ((await store.viewsHash()) !== viewsHash(set)) pending.push(VIEWS_VERSION);
  pending.push(...(await store.pendingWork()));
  return pending;
}

/** Where the SQL files are: `<package root>/sql/<dialect>/` (from src/load and from dist/load). */
export function sqlDirectory(dialect: Dialect): string {
  return fileURLToPath(new URL(`../../sql/${dialect}/`, import.meta.url));
}

const MIGRATION_FILE = /^(\d{3,})_([a-z0-9_]+)\.sql$/;

export async function readMigrations(dialect: Dialect, dir = sqlDirectory(dialect)): Promise<MigrationSet> {
  const files = (await readdir(dir)).filter((f) => MIGRATION_FILE.test(f)).sort();
  const migrations: Migration[] = [];
  const seen = new Set<string>();
  for (const file of files) {
    const m = MIGRATION_FILE.exec(file)!;
    const version = m[1]!;
    if (seen.has(version)) throw new Error(`two migrations numbered ${version} in ${dir}`);
    seen.add(version);
    migrations.push({
      version,
      name: m[2]!,
      id: `${version}_${m[2]!}`,
      sql: await readFile(dir + file, 'utf8'),
    });
  }
  if (migrations.length === 0) throw new Error(`no migrations found in ${dir}`);
  // The views, then the data dictionary on every table, view and column (COMMENT ON): re-created
  // views lose their comments in DuckDB, so both are applied together by every migrate.
  const views = await readViews(dialect);
  return { migrations, views: `${views}\n${commentSql(dialect)}` };
}

export async function runMigrations(
  store: MigrationStore,
  set: MigrationSet,
  logger?: Logger,
): Promise<MigrateResult> {
  return store.withMigrationLock(async () => {
    await store.ensureLedger();
    const applied = await store.appliedVersions();
    const result: MigrateResult = { applied: [], alreadyApplied: [], notes: [] };
    for (const m of set.migrations) {
      if (applied.has(m.version)) {
        result.alreadyApplied.push(m.id);
        continue;
      }
      if (await store.apply(m)) {
        logger?.info({ migration: m.id }, 'migration applied');
        result.applied.push(m.id);
      } else result.alreadyApplied.push(m.id);
    }
    if (result.applied.length > 0) await store.checkpointSchema();
    // Before the views: until the aggregates are filled, the views of the earlier version (which
    // read the raw rows) keep answering right.
    for (const note of await store.finishWork()) {
      logger?.info(note);
      result.notes.push(note);
    }
    await store.replaceViews(set.views, viewsHash(set));
    await store.checkpointSchema();
    return result;
  });
}
