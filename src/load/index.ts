/**
 * The load layer: `openWarehouse(target)` gives the Warehouse (warehouse.ts) of a DuckDB file
 * or a PostgreSQL database. Callers never see the dialect beyond `warehouse.dialect`.
 */
import type { Logger } from 'pino';
import { registerSecret, silentLogger } from '../log.ts';
import { CoreWarehouse } from './core/warehouse.ts';
import type { Driver, SchemaLockWait } from './core/driver.ts';
import type { DuckDBSettings } from './duckdb/database.ts';
import { UsageError } from '../errors.ts';
import { parseWarehouseTarget } from './target.ts';
import type { Warehouse } from './warehouse.ts';

export { parseWarehouseTarget, maskPassword, WarehouseTargetError, type WarehouseTarget } from './target.ts';
export type { DuckDBSettings } from './duckdb/database.ts';
export * from './warehouse.ts';
export { MigrationLockTimeoutError, WarehouseLockedError } from './errors.ts';

export interface OpenWarehouseOptions {
  /** @default a silent logger */
  readonly logger?: Logger;
  /** Apply missing migrations (and re-create the views) before returning. @default false */
  readonly migrate?: boolean;
  /**
   * DuckDB: how long to keep retrying while another process has the file open. @default 5000
   */
  readonly lockWaitMs?: number;
  /**
   * Ends the open's waits at once (the process is stopping): for the DuckDB file another process
   * has open, for a PostgreSQL connection being made. The open then rejects with its reason.
   */
  readonly signal?: AbortSignal;
  /** DuckDB: told once, when another process has the file open and the open starts to wait. */
  readonly onWait?: () => void;
  /**
   * The process's stop, for a warehouse that stops with it: when it aborts, the statement in
   * flight is interrupted (DuckDB) or cancelled (PostgreSQL), and every statement after it but
   * ROLLBACK fails at once with its reason. Not for a run, which records its stop in the
   * warehouse after the signal.
   */
  readonly interruptOn?: AbortSignal;
  /**
   * How messages name where the target came from (the CLI: the variable, flag or config key),
   * e.g. when PostgreSQL cannot be reached. @default "GEO_WAREHOUSE"
   */
  readonly setting?: string;
  /** The same for the lock's URL (lockUrl). @default "GEO_LOCK_URL" */
  readonly lockSetting?: string;
  /** DuckDB: memory limit, spill directory, threads (the config's `duckdb`). */
  readonly duckdb?: DuckDBSettings;
  /**
   * PostgreSQL: where the warehouse lock is held (GEO_LOCK_URL), a URL of the same database that
   * reaches PostgreSQL directly, for a warehouse URL behind a transaction pooler. @default target
   */
  readonly lockUrl?: string;
  /**
   * Whether writes keep the per-day aggregates the views read (geo.rollup_*). False only to
   * measure what keeping them costs (`npm run bench`): the views and `check` then see them
   * stale until `geo-sync rollups refresh`. @default true
   */
  readonly keepRollups?: boolean;
  /** PostgreSQL: how a migration waits for the tables it alters. @default SCHEMA_LOCK_WAIT (postgres/driver.ts) */
  readonly schemaLockWait?: Partial<SchemaLockWait>;
}

/**
 * The DuckDB threads of a run (sync, backfill, schedule, demo, the library's pipeline) when
 * `duckdb.threads` is not set: one. A run's DuckDB work is many small statements (a transaction's
 * lookups, appends and marker; a refresh's recomputation of a few units), where a second thread
 * costs more in handing work over than it gives, on a machine whose cores the run's own reading
 * keeps busy.
 * Measured against DuckDB's default (2 on the 2-core machine the bench runs on), alternated pairs:
 * the load bench's 10,000 executions 0.88x and 0.90x (one unit per task, and 1,000 units), a
 * first read through the CLI at latency 0 0.98x wall and 0.95x CPU, at 50 ms an answer 0.99x wall
 * and 0.87x CPU, a night 0.98x; Appender writes alone do not change (the raw load 1.01x). What it
 * costs: a refresh of 50,000 executions at once 1.09x, and an upgrade's fill of the aggregates
 * made by a run's first open (`geo-sync migrate` keeps every core). Every other command keeps
 * DuckDB's default.
 */
export const RUN_DUCKDB_THREADS = 1;

/**
 * Deletes the DuckDB warehouse `target` names (its file and write-ahead log), so that the next
 * open starts empty; false, and nothing done, for a PostgreSQL target.
 */
export async function removeDuckDBWarehouse(target: string): Promise<boolean> {
  const t = parseWarehouseTarget(target);
  if (t.dialect !== 'duckdb') return false;
  const { removeDatabaseFiles } = await import('./duckdb/database.ts');
  await removeDatabaseFiles(t.path);
  return true;
}

/**
 * Opens `target`: `duckdb:<file path>` (parent directories are created) or a `postgres://` /
 * `postgresql://` URL. A bad target throws a one-line Error naming GEO_WAREHOUSE.
 */
export async function openWarehouse(target: string, opts: OpenWarehouseOptions = {}): Promise<Warehouse> {
  const t = parseWarehouseTarget(target);
  const logger = opts.logger ?? silentLogger;
  let driver: Driver;
  // Each driver is loaded when its dialect is opened: a PostgreSQL warehouse needs no DuckDB
  // native library loaded, a DuckDB one no pg.
  if (t.dialect === 'duckdb') {
    const { DuckDBDriver } = await import('./duckdb/driver.ts');
    driver = await DuckDBDriver.open({
      path: t.path,
      ...(opts.lockWaitMs !== undefined ? { lockWaitMs: opts.lockWaitMs } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...(opts.onWait ? { onWait: opts.onWait } : {}),
      ...(opts.interruptOn ? { interruptOn: opts.interruptOn } : {}),
      ...(opts.duckdb ? { settings: opts.duckdb } : {}),
    });
  } else {
    registerSecret(t.password);
    let lockUrl: string | undefined;
    if (opts.lockUrl) {
      const l = parseWarehouseTarget(opts.lockUrl);
      if (l.dialect !== 'postgres')
        throw new UsageError(
          `${opts.lockSetting ?? 'GEO_LOCK_URL (lockUrl)'}: expected a postgres:// URL, got ${l.description}`,
        );
      registerSecret(l.password);
      lockUrl = l.url;
    }
    const { PostgresDriver } = await import('./postgres/driver.ts');
    driver = await PostgresDriver.open({
      url: t.url,
      description: t.description,
      logger,
      setting: opts.setting ?? 'GEO_WAREHOUSE',
      ...(lockUrl ? { lockUrl, lockSetting: opts.lockSetting ?? 'GEO_LOCK_URL' } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...(opts.interruptOn ? { interruptOn: opts.interruptOn } : {}),
      ...(opts.schemaLockWait ? { schemaLockWait: opts.schemaLockWait } : {}),
    });
  }
  const warehouse: Warehouse = new CoreWarehouse(driver, logger, [], false, opts.keepRollups ?? true);
  logger.debug({ warehouse: warehouse.description }, 'warehouse open');
  if (opts.migrate) {
    try {
      await warehouse.migrate();
    } catch (e) {
      await warehouse.close().catch(() => undefined);
      throw e;
    }
  }
  return warehouse;
}
