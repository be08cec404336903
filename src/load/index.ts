/**
 * The load layer: `openWarehouse(target)` gives the Warehouse (warehouse.ts) of a DuckDB file
 * or a PostgreSQL database. Callers never see the dialect beyond `warehouse.dialect`.
 */
import type { Logger } from 'pino';
import { registerSecret, silentLogger } from '../log.ts';
import { DuckDBWarehouse } from './duckdb/warehouse.ts';
import { PostgresWarehouse } from './postgres/warehouse.ts';
import { parseWarehouseTarget } from './target.ts';
import type { Warehouse } from './warehouse.ts';

export { parseWarehouseTarget, maskPassword, WarehouseTargetError, type WarehouseTarget } from './target.ts';
export * from './warehouse.ts';
export { WarehouseLockedError } from './errors.ts';

export interface OpenWarehouseOptions {
  /** @default a silent logger */
  readonly logger?: Logger;
  /** Apply missing migrations (and re-create the views) before returning. @default false */
  readonly migrate?: boolean;
  /**
   * DuckDB: how long to keep retrying while another process has the file open. @default 5000
   */
  readonly lockWaitMs?: number;
  /** DuckDB: ends that wait at once (the process is stopping). */
  readonly signal?: AbortSignal;
}

/**
 * Opens `target`: `duckdb:<file path>` (parent directories are created) or a `postgres://` /
 * `postgresql://` URL. A bad target throws a one-line Error naming GEO_WAREHOUSE.
 */
export async function openWarehouse(target: string, opts: OpenWarehouseOptions = {}): Promise<Warehouse> {
  const t = parseWarehouseTarget(target);
  const logger = opts.logger ?? silentLogger;
  let warehouse: Warehouse;
  if (t.dialect === 'duckdb') {
    warehouse = await DuckDBWarehouse.open({
      path: t.path,
      logger,
      ...(opts.lockWaitMs !== undefined ? { lockWaitMs: opts.lockWaitMs } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
  } else {
    registerSecret(t.password);
    warehouse = await PostgresWarehouse.open({ url: t.url, description: t.description, logger });
  }
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
