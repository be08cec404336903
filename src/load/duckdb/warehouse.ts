/**
 * The DuckDB warehouse: one connection per Warehouse on a database instance shared by every
 * Warehouse of this process on the same file (database.ts), all work serialized by that
 * database's mutex; Appender staging for the execution batches; a lock file for tryLock.
 */
import type { Logger } from 'pino';
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
import { completeUnit, finishedUnits, UNIT_STAGING } from './complete-unit.ts';
import {
  acquireDatabase,
  connect,
  releaseDatabase,
  type OpenOptions,
  type SharedDatabase,
} from './database.ts';
import { BATCH_STAGING, writeExecutionBatch } from './execution-batch.ts';
import { LockFile } from './lock-file.ts';
import { DuckDBMigrationStore } from './migration-store.ts';
import { counts, latestDeductionDay, listRuns, query } from './reads.ts';
import { Session } from './session.ts';
import { createStagingSql } from './staging.ts';
import * as unitState from './unit-state.ts';
import * as writes from './writes.ts';

export interface DuckDBWarehouseOptions extends OpenOptions {
  /** Absolute path of the database file. */
  path: string;
  logger: Logger;
}

export class DuckDBWarehouse implements Warehouse {
  readonly dialect = 'duckdb' as const;
  readonly description: string;
  private closed = false;

  private constructor(
    private readonly db: SharedDatabase,
    private readonly session: Session,
    private readonly lock: LockFile,
    private readonly logger: Logger,
  ) {
    this.description = `duckdb:${db.path}`;
  }

  static async open(opts: DuckDBWarehouseOptions): Promise<DuckDBWarehouse> {
    const db = await acquireDatabase(opts.path, opts);
    try {
      const connection = await connect(db);
      const session = new Session(connection, db);
      try {
        await session.run([...BATCH_STAGING, ...UNIT_STAGING].map((t) => createStagingSql(t)).join(';\n'));
      } catch (e) {
        session.close();
        throw e;
      }
      return new DuckDBWarehouse(db, session, new LockFile(`${opts.path}.lock`), opts.logger);
    } catch (e) {
      releaseDatabase(db);
      throw e;
    }
  }

  async migrate(): Promise<MigrateResult> {
    const set = await readMigrations('duckdb');
    return this.session.exclusive(() =>
      runMigrations(new DuckDBMigrationStore(this.session), set, this.logger),
    );
  }

  upsertMonitoringTasks(rows: readonly MonitoringTaskRow[]): Promise<void> {
    return writes.upsertMonitoringTasks(this.session, rows);
  }
  updateMonitoringTaskConfig(rows: readonly MonitoringTaskConfigRow[]): Promise<void> {
    return writes.updateMonitoringTaskConfig(this.session, rows);
  }
  upsertPlatformTasks(rows: readonly PlatformTaskRow[]): Promise<void> {
    return writes.upsertPlatformTasks(this.session, rows);
  }
  updatePlatformTaskPrompts(rows: readonly PlatformTaskPromptsRow[]): Promise<void> {
    return writes.updatePlatformTaskPrompts(this.session, rows);
  }
  writeExecutionBatch(batch: ExecutionBatch, completions?: readonly UnitCompletion[]): Promise<void> {
    return writeExecutionBatch(this.session, batch, completions);
  }
  completeUnit(unit: UnitCompletion): Promise<void> {
    return completeUnit(this.session, unit);
  }
  finishedUnits(dates: readonly string[]): Promise<Set<string>> {
    return finishedUnits(this.session, dates);
  }
  recordUnitFailures(rows: readonly UnitFailureRow[]): Promise<void> {
    return unitState.recordUnitFailures(this.session, rows);
  }
  unitRecords(from: string, to: string): Promise<UnitRecords> {
    return unitState.unitRecords(this.session, from, to);
  }
  forgetUnits(from: string, to: string, taskIds?: readonly number[]): Promise<ForgottenUnits> {
    return unitState.forgetUnits(this.session, from, to, taskIds);
  }
  platformTaskIds(): Promise<number[]> {
    return unitState.platformTaskIds(this.session);
  }
  upsertSiteDiagnoses(rows: readonly SiteDiagnosisRow[]): Promise<void> {
    return writes.upsertSiteDiagnoses(this.session, rows);
  }
  insertBalanceSnapshot(row: BalanceSnapshotRow): Promise<void> {
    return writes.insertBalanceSnapshot(this.session, row);
  }
  upsertDeductions(rows: readonly DeductionRow[]): Promise<void> {
    return writes.upsertDeductions(this.session, rows);
  }
  latestDeductionDay(): Promise<string | null> {
    return latestDeductionDay(this.session);
  }
  insertRun(run: SyncRunRow): Promise<void> {
    return writes.insertRun(this.session, run);
  }
  updateRun(run: SyncRunRow): Promise<void> {
    return writes.updateRun(this.session, run);
  }
  listRuns(limit: number): Promise<SyncRunRow[]> {
    return listRuns(this.session, limit);
  }
  insertRejects(rows: readonly RejectRow[]): Promise<void> {
    return writes.insertRejects(this.session, rows);
  }
  counts(): Promise<Record<DataTable, number>> {
    return counts(this.session);
  }
  query(sql: string, params?: readonly Json[]): Promise<Record<string, unknown>[]> {
    return query(this.session, sql, params);
  }
  tryLock(holder: string): Promise<LockResult> {
    return this.lock.tryLock(holder);
  }
  unlock(): Promise<void> {
    return this.lock.unlock();
  }

  /** Releases the lock, then (after any queued work) the connection and, last one out, the file. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.lock.unlock();
    await this.session.exclusive(async () => this.session.close());
    releaseDatabase(this.db);
  }
}
