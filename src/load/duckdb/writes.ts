/**
 * The small tables, DuckDB: multi-row parameterized upserts (CAST($n AS type) per value), each
 * call one transaction.
 */
import type {
  BalanceSnapshotRow,
  DeductionRow,
  MonitoringTaskConfigRow,
  MonitoringTaskRow,
  PlatformTaskPromptsRow,
  PlatformTaskRow,
  RejectRow,
  SiteDiagnosisRow,
  SyncRunRow,
} from '../../transform/rows.ts';
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
  ident,
  nonKeyColumns,
  type TableSpec,
} from '../tables.ts';
import { dedupeBy } from '../values.ts';
import type { Session } from './session.ts';
import { SQL_TYPE } from './staging.ts';
import { chunked, insertValuesSql, valuesParams, type WriteOptions } from './statements.ts';

async function writeRows<R>(
  session: Session,
  spec: TableSpec<R>,
  rows: readonly R[],
  opts: WriteOptions = {},
) {
  if (rows.length === 0) return;
  await session.exclusive(() =>
    session.transaction(async () => {
      for (const chunk of chunked(rows)) {
        await session.run(insertValuesSql(spec, chunk.length, opts), valuesParams(spec, chunk));
      }
    }),
  );
}

/** `UPDATE geo.t SET <non-key columns> WHERE <key>`; parameters in spec column order. */
function updateByKeySql<R>(spec: TableSpec<R>, synced: boolean): string {
  const placeholder = (name: string) => {
    const i = spec.columns.findIndex((c) => c.name === name);
    return `CAST($${i + 1} AS ${SQL_TYPE[spec.columns[i]!.kind]})`;
  };
  const set = nonKeyColumns(spec).map((c) => `${ident(c.name)} = ${placeholder(c.name)}`);
  if (synced) set.push('synced_at = now()');
  const where = spec.key.map((k) => `${ident(k)} = ${placeholder(k)}`).join(' AND ');
  return `UPDATE geo.${spec.table} SET ${set.join(', ')} WHERE ${where}`;
}

async function updateRows<R>(session: Session, spec: TableSpec<R>, rows: readonly R[]) {
  if (rows.length === 0) return;
  const sql = updateByKeySql(spec, true);
  await session.exclusive(() =>
    session.transaction(async () => {
      for (const r of rows) await session.run(sql, valuesParams(spec, [r]));
    }),
  );
}

export const upsertMonitoringTasks = (s: Session, rows: readonly MonitoringTaskRow[]) =>
  writeRows(
    s,
    MONITORING_TASKS,
    dedupeBy(rows, (r) => r.project_id),
  );

export const updateMonitoringTaskConfig = (s: Session, rows: readonly MonitoringTaskConfigRow[]) =>
  updateRows(s, MONITORING_TASK_CONFIG, rows);

export const upsertPlatformTasks = (s: Session, rows: readonly PlatformTaskRow[]) =>
  writeRows(
    s,
    PLATFORM_TASKS,
    dedupeBy(rows, (r) => r.task_id),
  );

export const updatePlatformTaskPrompts = (s: Session, rows: readonly PlatformTaskPromptsRow[]) =>
  updateRows(s, PLATFORM_TASK_PROMPTS, rows);

export const upsertSiteDiagnoses = (s: Session, rows: readonly SiteDiagnosisRow[]) =>
  writeRows(
    s,
    SITE_DIAGNOSES,
    dedupeBy(rows, (r) => r.diagnosis_id),
  );

export const insertBalanceSnapshot = (s: Session, row: BalanceSnapshotRow) =>
  writeRows(s, BALANCE_SNAPSHOTS, [row]);

export const upsertDeductions = (s: Session, rows: readonly DeductionRow[]) =>
  writeRows(
    s,
    DEDUCTIONS,
    dedupeBy(rows, (r) => r.id),
  );

export const insertRun = (s: Session, run: SyncRunRow) => writeRows(s, SYNC_RUNS, [run], { synced: false });

const UPDATE_RUN = updateByKeySql(SYNC_RUNS, false);

export async function updateRun(s: Session, run: SyncRunRow): Promise<void> {
  const changed = await s.exclusive(() => s.run(UPDATE_RUN, valuesParams(SYNC_RUNS, [run])));
  // A run never inserted (e.g. its insert failed) is recorded now rather than lost.
  if (changed === 0) await insertRun(s, run);
}

export const insertRejects = (s: Session, rows: readonly RejectRow[]) =>
  writeRows(s, SYNC_REJECTS, rows, { upsert: false, synced: false });
