/**
 * Wiring of the warehouse alone: config and logger to an open, migrated warehouse. app.ts (the
 * wiring of the client and the run) re-exports it; the commands that never call the API import
 * it from here, so they do not load the API client.
 */
import type { Logger } from 'pino';
import { ENV_VARS, type Config } from './config.ts';
import { configSource } from './config-sources.ts';
import { openWarehouse, RUN_DUCKDB_THREADS, type OpenWarehouseOptions } from './load/index.ts';
import type { Warehouse } from './load/warehouse.ts';
import { registerSecret } from './log.ts';
import { urlPasswords } from './redact.ts';

/**
 * How a message names where a setting of `config` came from: the flag (`--warehouse
 * (warehouse)`), the config file's key (`--config geo.json: warehouse`), else its variable
 * (`GEO_WAREHOUSE (warehouse)`), set or left to its default.
 */
export function settingName(config: Config, key: string): string {
  const source = configSource(config, key);
  if (source !== key) return source;
  const variable = Object.entries(ENV_VARS).find(([, v]) => v.key === key)?.[0];
  return variable ? `${variable} (${key})` : key;
}

/**
 * What opening the config's warehouse takes: its DuckDB settings, lock URL, and how to name them.
 * `run`: for a run (sync, backfill, schedule, demo, the library's pipeline; a worker's warehouse is
 * PostgreSQL), whose DuckDB threads default to RUN_DUCKDB_THREADS.
 */
export function warehouseOptions(config: Config, logger: Logger, run = false): OpenWarehouseOptions {
  return {
    logger,
    duckdb: run ? { ...config.duckdb, threads: config.duckdb.threads ?? RUN_DUCKDB_THREADS } : config.duckdb,
    onWait: () => logger.info('waiting for the DuckDB file, which another process has open'),
    setting: settingName(config, 'warehouse'),
    schemaLockWait: { timeoutMs: config.migrateLockTimeoutMs },
    ...(config.lockUrl ? { lockUrl: config.lockUrl, lockSetting: settingName(config, 'lockUrl') } : {}),
  };
}

/** Registers every secret of the config with the log scrubber before anything logs. */
export function registerConfigSecrets(config: Config): void {
  registerSecret(config.apiKey);
  registerSecret(config.password);
  for (const p of urlPasswords(config.warehouse)) registerSecret(p);
  for (const p of urlPasswords(config.lockUrl ?? '')) registerSecret(p);
}

/**
 * The warehouse, migrated when this version has something to apply (a migration, or views and
 * comments that differ from those applied), and only then: an up-to-date warehouse is opened
 * without a single schema statement. So a read-only role (the one the README gives BI tools) can
 * run the commands that only read, and a nightly run does not re-create the views under the BI
 * queries reading them (PostgreSQL's CREATE OR REPLACE VIEW waits for every query on the view and
 * makes the next ones wait behind it). When a migration is due and this role may not apply it,
 * one line says what to do. `geo-sync migrate` always re-creates the views.
 *
 * `lockWaitMs`: how long to wait for a DuckDB file another process has open. `signal`, the
 * process's stop, ends that wait and a PostgreSQL connection being opened at once, and interrupts
 * a migration it finds running; with `interruptible` it also interrupts whatever statement the
 * warehouse runs when it aborts and refuses the next (OpenWarehouseOptions.interruptOn): for every
 * command but a run, which records its stop in the warehouse after the signal. `run`: opened for
 * a run (warehouseOptions).
 */
export async function openMigratedWarehouse(
  config: Config,
  logger: Logger,
  opts: { lockWaitMs?: number; signal?: AbortSignal; interruptible?: boolean; run?: boolean } = {},
): Promise<Warehouse> {
  const options: OpenWarehouseOptions = {
    ...warehouseOptions(config, logger, opts.run),
    ...(opts.lockWaitMs !== undefined ? { lockWaitMs: opts.lockWaitMs } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
  };
  const interruptOn = opts.interruptible ? opts.signal : undefined;
  const warehouse = await openWarehouse(config.warehouse, {
    ...options,
    ...(interruptOn ? { interruptOn } : {}),
  });
  try {
    const pending = await warehouse.pendingMigrations();
    if (pending.length > 0) {
      try {
        await migrateInterruptibly(warehouse, config, options, opts.signal, interruptOn !== undefined);
      } catch (e) {
        // Only a refusal (PostgreSQL's insufficient_privilege) is the role's; anything else (a
        // lost connection, a failing migration) is reported as it is.
        if ((e as { code?: unknown } | null)?.code !== '42501') throw e;
        const why = e instanceof Error ? e.message : String(e);
        throw new Error(
          `${warehouse.description} needs ${pending.join(', ')} and could not apply it (${why}): run geo-sync migrate with a role that may change the schema, then this command again`,
          { cause: e },
        );
      }
    }
    return warehouse;
  } catch (e) {
    await warehouse.close().catch(() => undefined);
    throw e;
  }
}

/**
 * Applies the pending migrations so that the stop interrupts them (an upgrade's fill of the
 * aggregates may take minutes; each migration is one transaction, and the fill resumes). A
 * warehouse that is not interruptible itself migrates through a second one that is, on the same
 * file or database, closed after.
 */
async function migrateInterruptibly(
  warehouse: Warehouse,
  config: Config,
  options: OpenWarehouseOptions,
  signal: AbortSignal | undefined,
  interruptible: boolean,
): Promise<void> {
  if (!signal || interruptible) {
    await warehouse.migrate();
    return;
  }
  const migrating = await openWarehouse(config.warehouse, { ...options, interruptOn: signal });
  try {
    await migrating.migrate();
  } finally {
    await migrating.close();
  }
}
