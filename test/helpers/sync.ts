/** Runs the real pipeline (client over sockets -> transform -> warehouse) for tests. */
import { createApi, runLocked } from '../../src/app.ts';
import { loadConfig, type ConfigInput } from '../../src/config.ts';
import { openWarehouse } from '../../src/load/index.ts';
import type { Warehouse } from '../../src/load/warehouse.ts';
import { silentLogger } from '../../src/log.ts';
import type { RunSummary } from '../../src/sync/run.ts';
import type { RunKind } from '../../src/transform/rows.ts';

export interface SyncOnceOptions {
  baseUrl: string;
  apiKey?: string;
  target: string;
  dates: string[];
  customers?: number[];
  force?: boolean;
  /** `--reread`: read every execution's children regardless of change detection. */
  reread?: boolean;
  kind?: RunKind;
  config?: Partial<ConfigInput>;
  now?: () => Date;
  /** What the run writes through instead of the warehouse (a test's view of it). */
  wrapWarehouse?: (w: Warehouse) => Warehouse;
}

/**
 * The client's pacing against the simulator: no rate limit to wait out and short retry delays.
 * The default 20 requests/s is a courtesy to the real service; against the simulator it only
 * adds waiting (a verify of 50 executions waited 11 s on it), and no test counts on it.
 */
export const SIMULATOR_PACE = {
  concurrency: 16,
  requestsPerSecond: 10_000,
  retryBaseDelayMs: 5,
  retryMaxDelayMs: 200,
  maxAttempts: 10,
} as const satisfies Partial<ConfigInput>;

export async function syncOnce(o: SyncOnceOptions): Promise<RunSummary> {
  const config = loadConfig({
    env: {},
    overrides: {
      baseUrl: o.baseUrl,
      apiKey: o.apiKey ?? 'sim-key',
      warehouse: o.target,
      ...SIMULATOR_PACE,
      ...o.config,
    },
  });
  const api = createApi(config, silentLogger);
  const warehouse = await openWarehouse(config.warehouse, { logger: silentLogger });
  try {
    await warehouse.migrate();
    return await runLocked(api, o.wrapWarehouse?.(warehouse) ?? warehouse, config, silentLogger, {
      kind: o.kind ?? 'sync',
      dates: o.dates,
      customers: o.customers ?? config.customers,
      force: o.force ?? false,
      reread: o.reread ?? false,
      args: { dates: o.dates },
      waitForLockMs: 0,
      ...(o.now ? { now: o.now } : {}),
    });
  } finally {
    await warehouse.close();
    await api.close();
  }
}

export async function withWarehouse<T>(target: string, fn: (w: Warehouse) => Promise<T>): Promise<T> {
  const w = await openWarehouse(target, { logger: silentLogger });
  try {
    return await fn(w);
  } finally {
    await w.close();
  }
}
