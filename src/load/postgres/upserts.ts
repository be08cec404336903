/**
 * The small tables, PostgreSQL: typed multi-row upserts (kysely), each call one transaction.
 * Every upsert overwrites the columns it carries and leaves the others (e.g. the legacy
 * configuration of a monitoring task survives a re-sync of its hierarchy fields).
 */
import type pg from 'pg';
import type {
  BalanceSnapshotRow,
  DeductionRow,
  MonitoringTaskConfigRow,
  MonitoringTaskRow,
  PlatformTaskPromptsRow,
  PlatformTaskRow,
  SiteDiagnosisRow,
} from '../../transform/rows.ts';
import { dedupeBy, jsonText } from '../values.ts';
import {
  BALANCE_SNAPSHOTS,
  DEDUCTIONS,
  MONITORING_TASKS,
  PLATFORM_TASKS,
  SITE_DIAGNOSES,
  nonKeyColumns,
  type TableSpec,
} from '../tables.ts';
import { chunksFor } from './merge.ts';
import { withTransaction } from './pool.ts';
import { db, fromExcluded, now, run } from './query-builder.ts';
import { withJsonText } from './schema.ts';

const updated = <R>(spec: TableSpec<R>) => nonKeyColumns(spec).map((c) => c.name);

export async function upsertMonitoringTasks(
  pool: pg.Pool,
  rows: readonly MonitoringTaskRow[],
): Promise<void> {
  const unique = dedupeBy(rows, (r) => r.project_id);
  if (unique.length === 0) return;
  await withTransaction(pool, async (client) => {
    for (const chunk of chunksFor(unique, MONITORING_TASKS.columns.length)) {
      const q = db
        .insertInto('geo.monitoring_tasks')
        .values(chunk.map((r) => withJsonText(r, ['prompts'] as const)))
        .onConflict((oc) =>
          oc.column('project_id').doUpdateSet({ ...fromExcluded(updated(MONITORING_TASKS)), synced_at: now }),
        );
      await run(client, q.compile());
    }
  });
}

export async function updateMonitoringTaskConfig(
  pool: pg.Pool,
  rows: readonly MonitoringTaskConfigRow[],
): Promise<void> {
  if (rows.length === 0) return;
  await withTransaction(pool, async (client) => {
    for (const r of rows) {
      const q = db
        .updateTable('geo.monitoring_tasks')
        .set({
          week_restart: r.week_restart,
          only_rank: r.only_rank,
          rank_match: r.rank_match,
          brand_urls: jsonText(r.brand_urls),
          emails: jsonText(r.emails),
          synced_at: now,
        })
        .where('project_id', '=', r.project_id);
      await run(client, q.compile());
    }
  });
}

export async function upsertPlatformTasks(pool: pg.Pool, rows: readonly PlatformTaskRow[]): Promise<void> {
  const unique = dedupeBy(rows, (r) => r.task_id);
  if (unique.length === 0) return;
  await withTransaction(pool, async (client) => {
    for (const chunk of chunksFor(unique, PLATFORM_TASKS.columns.length)) {
      const q = db
        .insertInto('geo.platform_tasks')
        .values(chunk)
        .onConflict((oc) =>
          oc.column('task_id').doUpdateSet({ ...fromExcluded(updated(PLATFORM_TASKS)), synced_at: now }),
        );
      await run(client, q.compile());
    }
  });
}

export async function updatePlatformTaskPrompts(
  pool: pg.Pool,
  rows: readonly PlatformTaskPromptsRow[],
): Promise<void> {
  if (rows.length === 0) return;
  await withTransaction(pool, async (client) => {
    for (const r of rows) {
      const q = db
        .updateTable('geo.platform_tasks')
        .set({ prompts: jsonText(r.prompts), synced_at: now })
        .where('task_id', '=', r.task_id);
      await run(client, q.compile());
    }
  });
}

const DIAGNOSIS_JSON = [
  'error',
  'summary_text',
  'top_issues',
  'quick_wins',
  'modules_summary',
  'platform_scores',
  'observation',
  'page_diagnostics',
  'result_json',
] as const;

export async function upsertSiteDiagnoses(pool: pg.Pool, rows: readonly SiteDiagnosisRow[]): Promise<void> {
  const unique = dedupeBy(rows, (r) => r.diagnosis_id);
  if (unique.length === 0) return;
  await withTransaction(pool, async (client) => {
    for (const chunk of chunksFor(unique, SITE_DIAGNOSES.columns.length)) {
      const q = db
        .insertInto('geo.site_diagnoses')
        .values(chunk.map((r) => withJsonText(r, DIAGNOSIS_JSON)))
        .onConflict((oc) =>
          oc.column('diagnosis_id').doUpdateSet({ ...fromExcluded(updated(SITE_DIAGNOSES)), synced_at: now }),
        );
      await run(client, q.compile());
    }
  });
}

export async function insertBalanceSnapshot(pool: pg.Pool, row: BalanceSnapshotRow): Promise<void> {
  const q = db
    .insertInto('geo.balance_snapshots')
    .values(row)
    .onConflict((oc) =>
      oc.column('taken_at').doUpdateSet({ ...fromExcluded(updated(BALANCE_SNAPSHOTS)), synced_at: now }),
    );
  await run(pool, q.compile());
}

export async function upsertDeductions(pool: pg.Pool, rows: readonly DeductionRow[]): Promise<void> {
  const unique = dedupeBy(rows, (r) => r.id);
  if (unique.length === 0) return;
  await withTransaction(pool, async (client) => {
    for (const chunk of chunksFor(unique, DEDUCTIONS.columns.length)) {
      const q = db
        .insertInto('geo.deductions')
        .values(chunk)
        .onConflict((oc) =>
          oc.column('id').doUpdateSet({ ...fromExcluded(updated(DEDUCTIONS)), synced_at: now }),
        );
      await run(client, q.compile());
    }
  });
}
