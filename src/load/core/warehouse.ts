/**
 * The Warehouse (../warehouse.ts), written once over a dialect's Driver (driver.ts): the small
 * tables' upserts and updates, the execution batches (execution-batch.ts), the run log, the
 * quarantine, reads and migrations. Each call is one transaction (or one statement).
 *
 * Fencing: every write transaction but the run log's checks, as its last
 * statement before COMMIT, that its writer still owns what it writes for: the warehouse lock
 * when one is held (Driver.lockFence) and the fences of the view it was made through
 * (withFence: a distributed worker's job). A check that finds nothing rolls the transaction back
 * with a FenceLostError, so a writer that was expired or taken over never commits rows, deletions
 * or a checkpoint over the live writer's.
 */
import type { Logger } from 'pino';
import type * as Row from '../../transform/rows.ts';
import { shanghaiDayOf } from '../../time.ts';
import { FenceLostError } from '../errors.ts';
import { pendingMigrations, readMigrations, runMigrations } from '../migrate.ts';
import {
  BALANCE_SNAPSHOTS,
  DEDUCTIONS,
  MONITORING_TASK_CONFIG,
  MONITORING_TASKS,
  PLATFORM_TASK_PROMPTS,
  PLATFORM_TASKS,
  SITE_DIAGNOSES,
  SYNC_REJECTS,
  SYNC_RUNS,
  SYNC_UNIT_FAILURES,
  EXECUTION_PRODUCTS,
  EXECUTION_RANKS,
  EXECUTION_SCREENSHOTS,
  EXECUTION_SOURCES,
  PRODUCT_CARDS,
  PROMPT_EXECUTIONS,
  ident,
  type TableSpec,
} from '../tables.ts';
import { dedupeBy, unitKeyOf } from '../values.ts';
import {
  DATA_TABLES,
  type DataTable,
  type Fence,
  type ForgottenUnits,
  type LockMode,
  type LockResult,
  type MigrateResult,
  type StoredUnitCounts,
  type StoredUnitExecutions,
  type UnitCompletion,
  type UnitRecords,
  type VerifiedTable,
  type Warehouse,
  type StaleRefresh,
  type Written,
} from '../warehouse.ts';
import { storedRows, storedText } from '../text.ts';
import type { Connection, Driver, TransactionOptions } from './driver.ts';
import { closeUnits, writeExecutionBatch } from './execution-batch.ts';
import { dayExecutions, storedUnits, unitExecutions } from './stored-executions.ts';
import { analyzeRollups, recomputeRollups, rollupDaysSql } from './rollups.ts';
import { decideOwnership, hostsOf } from './ownership.ts';
import { clearStaleDays, markStale, refreshStaleUnits, staleBatches } from './stale-units.ts';
import { analyzeStaleStatistics, tidyGrownTables } from './tidy.ts';
import { CoreMigrationStore } from './migration-store.ts';
import {
  columnList,
  columnValues,
  inListChunks,
  insertListsSql,
  rowParams,
  updateByKeySql,
  updateListsSql,
} from './statements.ts';

const COUNTS = `SELECT ${DATA_TABLES.map((t) => `(SELECT count(*) FROM geo.${t}) AS ${ident(t)}`).join(', ')}`;

const VERIFIED_SPECS = {
  prompt_executions: PROMPT_EXECUTIONS,
  execution_ranks: EXECUTION_RANKS,
  execution_sources: EXECUTION_SOURCES,
  execution_screenshots: EXECUTION_SCREENSHOTS,
  execution_products: EXECUTION_PRODUCTS,
  product_cards: PRODUCT_CARDS,
} as const;

/**
 * `state reset`: the change-detection fingerprints of the units' executions (`date_time` in
 * `$1`..`$2`, task_id in `$3` when given). Without them the next run reads every child of those
 * executions again, which is what a reset is for (re-reading after a fix upstream); a checkpoint
 * forgotten alone made the next run list the units and skip every execution as unchanged.
 */
function forgetFingerprintsSql(driver: Driver, byTask: boolean): string {
  const d = driver.types.date;
  return `DELETE FROM geo.execution_fingerprints WHERE prompt_task_id IN (
    SELECT prompt_task_id FROM geo.prompt_executions
    WHERE date_time BETWEEN CAST($1 AS ${d}) AND CAST($2 AS ${d})${byTask ? ` AND ${driver.inIds('task_id', 3)}` : ''})`;
}

/** A fence check that never passes (a lock pinned while none was held). */
const NEVER_OWNED = 'SELECT 1 AS owned WHERE 1 = 0';

export class CoreWarehouse implements Warehouse {
  readonly dialect;
  readonly description;
  private closed = false;

  /**
   * @param fences checked by every fenced write of this warehouse (see withFence)
   * @param view a view made by withFence: close() leaves the driver to its owner
   * @param keepRollups whether writes recompute the per-day aggregates (OpenWarehouseOptions)
   */
  constructor(
    private readonly driver: Driver,
    private readonly logger: Logger,
    private readonly fences: readonly Fence[] = [],
    private readonly view = false,
    private readonly keepRollups = true,
  ) {
    this.dialect = driver.dialect;
    this.description = driver.description;
  }

  withFence(fence: Fence): CoreWarehouse {
    return new CoreWarehouse(this.driver, this.logger, [...this.fences, fence], true, this.keepRollups);
  }

  heldLockFence(): Fence | null {
    if (!this.driver.lockFence) return null;
    return (
      this.driver.lockFence() ?? { what: 'the warehouse lock', sql: NEVER_OWNED, params: [], lock: true }
    );
  }

  /**
   * Runs each fence's check on `c`, inside the caller's transaction: the lock's as held now,
   * unless the view pinned one (heldLockFence), then the view's own.
   */
  private async checkFences(c: Connection): Promise<void> {
    const lock = this.fences.some((f) => f.lock) ? null : (this.driver.lockFence?.() ?? null);
    for (const fence of lock ? [lock, ...this.fences] : this.fences) {
      const rows = await c.rows(fence.sql, fence.params);
      if (rows.length > 0) continue;
      const lost = new FenceLostError(fence.what);
      this.logger.error({ fence: fence.what }, 'write refused at commit time: ownership lost');
      fence.onLost?.(lost);
      throw lost;
    }
  }

  /** One transaction whose last statement is the fence check. */
  private fenced<T>(fn: (c: Connection) => Promise<T>, opts?: TransactionOptions): Promise<T> {
    return this.driver.transaction(async (c) => {
      const result = await fn(c);
      await this.checkFences(c);
      return result;
    }, opts);
  }

  async pendingMigrations(): Promise<string[]> {
    const set = await readMigrations(this.driver.dialect);
    return this.driver.connection((c) => pendingMigrations(new CoreMigrationStore(this.driver, c), set));
  }

  async migrate(): Promise<MigrateResult> {
    const set = await readMigrations(this.driver.dialect);
    return this.driver.connection((c) =>
      runMigrations(new CoreMigrationStore(this.driver, c, this.logger), set, this.logger),
    );
  }

  /**
   * Multi-row inserts (upserts by the spec's key unless `upsert` is false), one transaction;
   * fenced unless `fenced` is false (the run log). Every row as the text rule stores it (text.ts).
   */
  private async writeRows<R>(
    spec: TableSpec<R>,
    given: readonly R[],
    upsert = true,
    fenced = true,
  ): Promise<Written> {
    const { rows, changed } = storedRows(spec, given);
    if (rows.length > 0) {
      const transaction = fenced ? this.fenced.bind(this) : this.driver.transaction.bind(this.driver);
      await transaction(async (c: Connection) => {
        const sql = insertListsSql(this.driver, spec, upsert);
        for (const chunk of inListChunks(spec, rows)) await c.execute(sql, columnValues(spec, chunk));
      });
    }
    return { textValuesChanged: changed };
  }

  /**
   * Sets the spec's columns of existing rows by key, one transaction (text rule applied), a few
   * statements for all the rows; of two rows of one key the later applies.
   */
  private async updateRows<R>(spec: TableSpec<R>, given: readonly R[]): Promise<Written> {
    const { rows, changed } = storedRows(spec, given);
    const last = dedupeBy(rows, (r) =>
      spec.key.map((k) => String((r as Record<string, unknown>)[k])).join('|'),
    );
    if (last.length > 0) {
      await this.fenced(async (c) => {
        const sql = updateListsSql(this.driver, spec);
        for (const chunk of inListChunks(spec, last)) await c.execute(sql, columnValues(spec, chunk));
      });
    }
    return { textValuesChanged: changed };
  }

  upsertMonitoringTasks(rows: readonly Row.MonitoringTaskRow[]): Promise<Written> {
    return this.writeRows(
      MONITORING_TASKS,
      dedupeBy(rows, (r) => r.project_id),
    );
  }
  /**
   * The legacy configuration. Where it changes a monitoring task's brand_urls hosts, the
   * aggregates' `owned` of that task is decided again in the same transaction (rollups.ts), so no
   * reader sees the new hosts with the old ownership.
   */
  async updateMonitoringTaskConfig(given: readonly Row.MonitoringTaskConfigRow[]): Promise<Written> {
    const { rows, changed } = storedRows(MONITORING_TASK_CONFIG, given);
    if (rows.length > 0) {
      const sql = updateByKeySql(this.driver, MONITORING_TASK_CONFIG);
      const ids = rows.map((r) => r.project_id);
      await this.fenced(async (c) => {
        const before = await hostsOf(this.driver, c, ids);
        for (const r of rows) await c.execute(sql, rowParams(MONITORING_TASK_CONFIG, r));
        const after = await hostsOf(this.driver, c, ids);
        const moved = ids.filter((id) => before.get(id) !== after.get(id));
        if (moved.length > 0 && this.keepRollups) await decideOwnership(this.driver, c, moved);
      });
    }
    return { textValuesChanged: changed };
  }
  upsertPlatformTasks(rows: readonly Row.PlatformTaskRow[]): Promise<Written> {
    return this.writeRows(
      PLATFORM_TASKS,
      dedupeBy(rows, (r) => r.task_id),
    );
  }
  updatePlatformTaskPrompts(rows: readonly Row.PlatformTaskPromptsRow[]): Promise<Written> {
    return this.updateRows(PLATFORM_TASK_PROMPTS, rows);
  }

  writeExecutionBatch(batch: Row.ExecutionBatch, completions?: readonly UnitCompletion[]): Promise<Written> {
    return writeExecutionBatch(this.driver, batch, completions, {
      beforeCommit: (c) => this.checkFences(c),
      rollups: this.keepRollups,
    });
  }
  completeUnit(unit: UnitCompletion): Promise<void> {
    return this.fenced(async (c) => {
      const emptied = await closeUnits(this.driver, c, [unit]);
      if (this.keepRollups) await markStale(this.driver, c, emptied);
    });
  }
  async completeFingerprints(task_id: number, date: string): Promise<Map<number, string>> {
    return (await this.unitExecutions(task_id, date)).complete;
  }
  unitExecutions(task_id: number, date: string): Promise<StoredUnitExecutions> {
    return unitExecutions(this.driver, task_id, date);
  }
  dayExecutions(
    date: string,
    taskIds: readonly number[],
    max: number,
  ): Promise<Map<number, StoredUnitExecutions> | null> {
    return dayExecutions(this.driver, date, taskIds, max);
  }
  storedUnits(dates: readonly string[]): Promise<Map<string, StoredUnitCounts>> {
    return storedUnits(this.driver, dates);
  }

  async sampleExecutions(
    n: number,
    range?: { from: string; to: string },
  ): Promise<{ prompt_task_id: number; screenshot_url: string | null }[]> {
    const d = this.driver.types.date;
    // Not those known to be read incompletely: the next run reads them again anyway, and their
    // missing children are no drift.
    const incomplete = `NOT EXISTS (SELECT 1 FROM geo.execution_fingerprints f
      WHERE f.prompt_task_id = e.prompt_task_id AND NOT f.children_complete)`;
    const days = range ? `AND e.date_time BETWEEN CAST($2 AS ${d}) AND CAST($3 AS ${d})` : '';
    const rows = await this.driver.connection((c) =>
      c.rows<{ prompt_task_id: number; screenshot_url: string | null }>(
        `SELECT e.prompt_task_id, e.screenshot_url FROM geo.prompt_executions e WHERE ${incomplete} ${days}
         ORDER BY random() LIMIT CAST($1 AS ${this.driver.types.bigint})`,
        range ? [Math.max(0, Math.floor(n)), range.from, range.to] : [Math.max(0, Math.floor(n))],
      ),
    );
    return rows.map((r) => ({ prompt_task_id: Number(r.prompt_task_id), screenshot_url: r.screenshot_url }));
  }
  executionRows(table: VerifiedTable, ids: readonly number[]): Promise<Record<string, unknown>[]> {
    const spec = VERIFIED_SPECS[table];
    if (ids.length === 0) return Promise.resolve([]);
    return this.driver.connection((c) =>
      c.rows(`SELECT ${columnList(spec)} FROM geo.${table} WHERE ${this.driver.inIds('prompt_task_id', 1)}`, [
        [...ids],
      ]),
    );
  }
  async rollupDays(range?: { from: string; to: string }): Promise<{ date: string; executions: number }[]> {
    const rows = await this.driver.connection((c) =>
      c.rows<{ date: string; executions: number | string }>(
        rollupDaysSql(range !== undefined),
        range ? [range.from, range.to] : [],
      ),
    );
    return rows.map((r) => ({ date: r.date, executions: Number(r.executions) }));
  }
  refreshRollups(from: string, to: string): Promise<void> {
    return this.fenced(
      async (c) => {
        await clearStaleDays(c, from, to);
        await recomputeRollups(this.driver, c, { from, to });
      },
      { bulk: true },
    );
  }
  async refreshStaleRollups(): Promise<StaleRefresh> {
    const done: StaleRefresh = { units: 0, executions: 0, batches: 0 };
    if (!this.keepRollups) return done;
    const batches = await this.driver.connection((c) => staleBatches(c));
    if (batches.length > 0) await analyzeStaleStatistics(this.driver);
    for (const batch of batches) {
      const units = await this.fenced((c) => refreshStaleUnits(this.driver, c, batch.units), { bulk: true });
      done.units += units.length;
      done.executions += batch.executions;
      done.batches++;
    }
    return done;
  }
  tidyGrownTables(): Promise<string[]> {
    return tidyGrownTables(this.driver);
  }
  analyzeRollups(): Promise<void> {
    return this.driver.connection((c) => analyzeRollups(this.driver, c));
  }
  async finishedUnits(dates: readonly string[]): Promise<Set<string>> {
    const unique = [...new Set(dates)];
    if (unique.length === 0) return new Set();
    const placeholders = unique.map((_, i) => `CAST($${i + 1} AS ${this.driver.types.date})`).join(', ');
    const rows = await this.driver.connection((c) =>
      c.rows<{ task_id: number; date: string }>(
        `SELECT task_id, date FROM geo.sync_checkpoints WHERE date IN (${placeholders})`,
        unique,
      ),
    );
    return new Set(rows.map((r) => unitKeyOf(r.task_id, r.date)));
  }

  // ---- unit state (`geo-sync state show|reset`) ----

  async recordUnitFailures(rows: readonly Row.UnitFailureRow[]): Promise<void> {
    await this.writeRows(
      SYNC_UNIT_FAILURES,
      dedupeBy(rows, (r) => unitKeyOf(r.task_id, r.date)),
    );
  }
  /** `date BETWEEN $1 AND $2`, and the task list `$3` when given. */
  private unitsIn(taskIds: readonly number[]): string {
    const d = this.driver.types.date;
    const days = `date BETWEEN CAST($1 AS ${d}) AND CAST($2 AS ${d})`;
    return taskIds.length ? `${days} AND ${this.driver.inIds('task_id', 3)}` : days;
  }
  unitRecords(from: string, to: string): Promise<UnitRecords> {
    const where = this.unitsIn([]);
    return this.driver.connection(async (c) => ({
      checkpoints: await c.rows<Row.CheckpointRow>(
        `SELECT task_id, date, run_id, finished_at, executions, listed_total FROM geo.sync_checkpoints
         WHERE ${where} ORDER BY date, task_id`,
        [from, to],
      ),
      failures: await c.rows<Row.UnitFailureRow>(
        `SELECT task_id, date, run_id, failed_at, error FROM geo.sync_unit_failures
         WHERE ${where} ORDER BY date, task_id`,
        [from, to],
      ),
    }));
  }
  forgetUnits(from: string, to: string, taskIds: readonly number[] = []): Promise<ForgottenUnits> {
    const where = this.unitsIn(taskIds);
    const params = taskIds.length ? [from, to, [...taskIds]] : [from, to];
    return this.fenced(async (c) => {
      const checkpoints = await c.rows<{ task_id: number; date: string }>(
        `DELETE FROM geo.sync_checkpoints WHERE ${where} RETURNING task_id, date`,
        params,
      );
      const failures = await c.execute(`DELETE FROM geo.sync_unit_failures WHERE ${where}`, params);
      const fingerprints = await c.execute(forgetFingerprintsSql(this.driver, taskIds.length > 0), params);
      checkpoints.sort((a, b) => a.date.localeCompare(b.date) || a.task_id - b.task_id);
      return { checkpoints, failures, fingerprints };
    });
  }
  async platformTaskIds(): Promise<number[]> {
    const rows = await this.driver.connection((c) =>
      c.rows<{ task_id: number }>('SELECT task_id FROM geo.platform_tasks ORDER BY task_id'),
    );
    return rows.map((r) => r.task_id);
  }

  upsertSiteDiagnoses(rows: readonly Row.SiteDiagnosisRow[]): Promise<Written> {
    // By the key as stored: two ids that differ only by what the text rule drops (U+0000) are
    // one key, which one upsert must not meet twice (PostgreSQL refuses it, DuckDB kept either).
    return this.writeRows(
      SITE_DIAGNOSES,
      dedupeBy(rows, (r) => storedText(r.diagnosis_id)),
    );
  }
  insertBalanceSnapshot(row: Row.BalanceSnapshotRow): Promise<Written> {
    return this.writeRows(BALANCE_SNAPSHOTS, [row]);
  }
  upsertDeductions(rows: readonly Row.DeductionRow[]): Promise<Written> {
    return this.writeRows(
      DEDUCTIONS,
      dedupeBy(rows, (r) => r.id),
    );
  }
  /** The Asia/Shanghai day of the newest deduction, whatever offset the instant is read back in. */
  async latestDeductionDay(): Promise<string | null> {
    const [row] = await this.driver.connection((c) =>
      c.rows<{ latest: string | null }>('SELECT max(created_at) AS latest FROM geo.deductions'),
    );
    return row?.latest ? shanghaiDayOf(row.latest) : null;
  }

  /** Inserts the run (or overwrites it: idempotent by run_id). */
  async insertRun(run: Row.SyncRunRow): Promise<void> {
    await this.writeRows(SYNC_RUNS, [run], true, false);
  }
  async updateRun(given: Row.SyncRunRow): Promise<void> {
    const [run] = storedRows(SYNC_RUNS, [given]).rows;
    const changed = await this.driver.connection((c) =>
      c.execute(updateByKeySql(this.driver, SYNC_RUNS), rowParams(SYNC_RUNS, run!)),
    );
    // A run never inserted (e.g. its insert failed) is recorded now rather than lost.
    if (changed === 0) await this.insertRun(run!);
  }
  async interruptAbandonedRuns(note: string): Promise<string[]> {
    const rows = await this.fenced((c) =>
      c.rows<{ run_id: string }>(
        `UPDATE geo.sync_runs SET status = 'interrupted', error = $1 WHERE status = 'running' RETURNING run_id`,
        [storedText(note)],
      ),
    );
    return rows.map((r) => r.run_id).sort();
  }
  listRuns(limit: number): Promise<Row.SyncRunRow[]> {
    return this.driver.connection((c) =>
      c.rows<Row.SyncRunRow>(
        `SELECT ${columnList(SYNC_RUNS)} FROM geo.sync_runs
         ORDER BY started_at DESC, run_id DESC LIMIT CAST($1 AS ${this.driver.types.bigint})`,
        [Math.max(0, Math.floor(limit))],
      ),
    );
  }
  insertRejects(rows: readonly Row.RejectRow[]): Promise<Written> {
    // Fenced: the quarantine of a read whose owner was lost is discarded with its rows (the
    // job's live attempt reads the unit again and quarantines what it finds).
    return this.writeRows(SYNC_REJECTS, rows, false);
  }

  dataError(error: unknown): string | null {
    return this.driver.dataError(error);
  }

  async counts(): Promise<Record<DataTable, number>> {
    const [row] = await this.driver.connection((c) => c.rows<Record<DataTable, number>>(COUNTS));
    return row!;
  }
  query(sql: string, params: readonly Row.Json[] = []): Promise<Record<string, unknown>[]> {
    return this.driver.query(sql, params);
  }

  tryLock(holder: string, mode: LockMode = 'exclusive'): Promise<LockResult> {
    return this.driver.tryLock(holder, mode);
  }
  unlock(): Promise<void> {
    return this.driver.unlock();
  }
  async prepareLock(): Promise<void> {
    await this.driver.prepareLock?.();
  }
  onLockLost(listener: (cause: unknown) => void): () => void {
    return this.driver.onLockLost?.(listener) ?? (() => undefined);
  }

  /** Releases the lock, then the driver's connections. */
  async close(): Promise<void> {
    if (this.closed || this.view) return;
    this.closed = true;
    await this.driver.unlock();
    await this.driver.close();
  }
}
