/**
 * The PostgreSQL warehouse: a pg pool (value conventions in type-parsers.ts), kysely as the
 * query builder, COPY for the big collections, a dedicated connection for the lock.
 */
import type { Logger } from 'pino';
import type pg from 'pg';
import type {
  BalanceSnapshotRow,
  DeductionRow,
  ExecutionBatch,
  Json,
  MonitoringTaskConfigRow,
  MonitoringTaskRow,
  PlatformTaskPromptsRow,
  PlatformTaskRow,
  RejectRow,
  SiteDiagnosisRow,
  SyncRunRow,
} from '../../transform/rows.ts';
import { readMigrations, runMigrations } from '../migrate.ts';
import type {
  DataTable,
  ForgottenUnits,
  LockResult,
  MigrateResult,
  UnitCompletion,
  UnitFailureRow,
  UnitRecords,
  Warehouse,
} from '../warehouse.ts';
import { AdvisoryLock } from './advisory-lock.ts';
import { completeUnit, finishedUnits } from './complete-unit.ts';
import { writeExecutionBatch } from './execution-batch.ts';
import { PostgresMigrationStore } from './migration-store.ts';
import { createPool } from './pool.ts';
import { counts, latestDeductionDay, query } from './reads.ts';
import { insertRejects, insertRun, listRuns, updateRun } from './runs.ts';
import * as unitState from './unit-state.ts';
import * as small from './upserts.ts';

export interface PostgresWarehouseOptions {
  url: string;
  /** Safe to log: the URL with its password masked. */
  description: string;
  logger: Logger;
}

export class PostgresWarehouse implements Warehouse {
  readonly dialect = 'postgres' as const;
  readonly description: string;
  private readonly pool: pg.Pool;
  private readonly lock: AdvisoryLock;
  private readonly logger: Logger;
  private closed = false;

  private constructor(opts: PostgresWarehouseOptions) {
    this.description = opts.description;
    this.logger = opts.logger;
    this.pool = createPool(opts.url);
    // An idle pooled connection that dies (server restart) must not crash the process.
    this.pool.on('error', (err) => this.logger.warn({ err }, 'idle PostgreSQL connection closed'));
    this.lock = new AdvisoryLock(opts.url, opts.logger);
  }

  /** Connects (one round trip, so a wrong URL fails here rather than mid-sync). */
  static async open(opts: PostgresWarehouseOptions): Promise<PostgresWarehouse> {
    const w = new PostgresWarehouse(opts);
    try {
      await w.pool.query('SELECT 1');
    } catch (e) {
      await w.pool.end().catch(() => undefined);
      throw new Error(`cannot connect to PostgreSQL warehouse ${opts.description}: ${(e as Error).message}`, {
        cause: e,
      });
    }
    return w;
  }

  async migrate(): Promise<MigrateResult> {
    const set = await readMigrations('postgres');
    const client = await this.pool.connect();
    try {
      return await runMigrations(new PostgresMigrationStore(client), set, this.logger);
    } finally {
      client.release();
    }
  }

  upsertMonitoringTasks(rows: readonly MonitoringTaskRow[]): Promise<void> {
    return small.upsertMonitoringTasks(this.pool, rows);
  }
  updateMonitoringTaskConfig(rows: readonly MonitoringTaskConfigRow[]): Promise<void> {
    return small.updateMonitoringTaskConfig(this.pool, rows);
  }
  upsertPlatformTasks(rows: readonly PlatformTaskRow[]): Promise<void> {
    return small.upsertPlatformTasks(this.pool, rows);
  }
  updatePlatformTaskPrompts(rows: readonly PlatformTaskPromptsRow[]): Promise<void> {
    return small.updatePlatformTaskPrompts(this.pool, rows);
  }
  writeExecutionBatch(batch: ExecutionBatch, completions?: readonly UnitCompletion[]): Promise<void> {
    return writeExecutionBatch(this.pool, batch, completions);
  }
  completeUnit(unit: UnitCompletion): Promise<void> {
    return completeUnit(this.pool, unit);
  }
  finishedUnits(dates: readonly string[]): Promise<Set<string>> {
    return finishedUnits(this.pool, dates);
  }
  recordUnitFailures(rows: readonly UnitFailureRow[]): Promise<void> {
    return unitState.recordUnitFailures(this.pool, rows);
  }
  unitRecords(from: string, to: string): Promise<UnitRecords> {
    return unitState.unitRecords(this.pool, from, to);
  }
  forgetUnits(from: string, to: string, taskIds?: readonly number[]): Promise<ForgottenUnits> {
    return unitState.forgetUnits(this.pool, from, to, taskIds);
  }
  platformTaskIds(): Promise<number[]> {
    return unitState.platformTaskIds(this.pool);
  }
  upsertSiteDiagnoses(rows: readonly SiteDiagnosisRow[]): Promise<void> {
    return small.upsertSiteDiagnoses(this.pool, rows);
  }
  insertBalanceSnapshot(row: BalanceSnapshotRow): Promise<void> {
    return small.insertBalanceSnapshot(this.pool, row);
  }
  upsertDeductions(rows: readonly DeductionRow[]): Promise<void> {
    return small.upsertDeductions(this.pool, rows);
  }
  latestDeductionDay(): Promise<string | null> {
    return latestDeductionDay(this.pool);
  }
  insertRun(run: SyncRunRow): Promise<void> {
    return insertRun(this.pool, run);
  }
  updateRun(run: SyncRunRow): Promise<void> {
    return updateRun(this.pool, run);
  }
  listRuns(limit: number): Promise<SyncRunRow[]> {
    return listRuns(this.pool, limit);
  }
  insertRejects(rows: readonly RejectRow[]): Promise<void> {
    return insertRejects(this.pool, rows);
  }
  counts(): Promise<Record<DataTable, number>> {
    return counts(this.pool);
  }
  query(sql: string, params?: readonly Json[]): Promise<Record<string, unknown>[]> {
    return query(this.pool, sql, params);
  }
  tryLock(holder: string): Promise<LockResult> {
    return this.lock.tryLock(holder);
  }
  unlock(): Promise<void> {
    return this.lock.unlock();
  }
  onLockLost(listener: (cause: unknown) => void): () => void {
    return this.lock.onLost(listener);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.lock.unlock();
    await this.pool.end();
  }
}
