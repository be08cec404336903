/**
 * geo-sync as a library: `import { createPipeline } from 'geo-sync'`. The command line
 * (src/cli.ts) is separate; nothing here parses arguments, reads the environment or exits.
 */
export {
  createPipeline,
  type Pipeline,
  type PipelineConfig,
  type PipelineOptions,
  type PipelineRunOptions,
} from './pipeline.ts';
export { ConfigSchema, ConfigError, type Config, type ConfigInput } from './config.ts';
export type { RunSummary, ApiStats } from './sync/run.ts';
export type { RunCounters } from './sync/context.ts';
export type { Unit } from './sync/planner.ts';
export type { RunKind, RunStatus } from './transform/rows.ts';

export {
  GeoClient,
  type GeoClientOptions,
  type AuthOptions,
  type ClientStats,
  type RejectedRecord,
  type RetryOptions,
} from './api/client.ts';
export { RequestQueue } from './api/request-queue.ts';
export * from './api/errors.ts';

export {
  openWarehouse,
  MigrationLockTimeoutError,
  WarehouseLockedError,
  WarehouseTargetError,
  type OpenWarehouseOptions,
  type Warehouse,
  type DataTable,
  type MigrateResult,
} from './load/index.ts';

export { UsageError } from './app.ts';
export { LockHeldError } from './sync/lock.ts';
