/**
 * Schema `geo` as kysely sees it (sql/postgres/001_init.sql). Row interfaces come from rows.ts;
 * JSON columns read back parsed (pg's JSON parser) and are written as JSON text, because pg
 * would turn a JS array parameter into a PostgreSQL array, not JSON.
 */
import type { ColumnType, Generated } from 'kysely';
import type {
  BalanceSnapshotRow,
  CheckpointRow,
  DeductionRow,
  ExecutionProductsRow,
  ExecutionScreenshotRow,
  Json,
  MonitoringTaskRow,
  PlatformTaskRow,
  RejectRow,
  SiteDiagnosisRow,
  SyncRunRow,
  UnitFailureRow,
} from '../../transform/rows.ts';
import { jsonText } from '../values.ts';

export type JsonColumn = ColumnType<Json, string | null, string | null>;

/** A row interface with its JSON fields as JSON columns. */
export type WithJson<R, J extends keyof R> = { [K in keyof R]: K extends J ? JsonColumn : R[K] };

/** The same row as written: JSON fields as JSON text. */
export type WithJsonText<R, J extends keyof R> = { [K in keyof R]: K extends J ? string | null : R[K] };

interface Synced {
  synced_at: Generated<string>;
}

export interface GeoDatabase {
  'geo.monitoring_tasks': WithJson<MonitoringTaskRow, 'prompts'> &
    Synced & {
      week_restart: number | null;
      only_rank: number | null;
      rank_match: number | null;
      brand_urls: JsonColumn;
      emails: JsonColumn;
    };
  'geo.platform_tasks': PlatformTaskRow & Synced & { prompts: JsonColumn };
  'geo.execution_screenshots': ExecutionScreenshotRow & Synced;
  'geo.execution_products': WithJson<ExecutionProductsRow, 'field_order' | 'field_labels'> & Synced;
  'geo.site_diagnoses': WithJson<
    SiteDiagnosisRow,
    | 'error'
    | 'summary_text'
    | 'top_issues'
    | 'quick_wins'
    | 'modules_summary'
    | 'platform_scores'
    | 'observation'
    | 'page_diagnostics'
    | 'result_json'
  > &
    Synced;
  'geo.balance_snapshots': BalanceSnapshotRow & Synced;
  'geo.deductions': DeductionRow & Synced;
  'geo.sync_runs': WithJson<SyncRunRow, 'args' | 'rows'>;
  'geo.sync_checkpoints': CheckpointRow;
  'geo.sync_unit_failures': UnitFailureRow;
  'geo.sync_rejects': WithJson<RejectRow, 'params' | 'raw'> & { id: Generated<number> };
  'geo.sync_lock': { lock_key: number; holder: string; backend_pid: number; acquired_at: Generated<string> };
  'geo.schema_migrations': { version: string; name: string; applied_at: Generated<string> };
}

/** `row` with the named JSON fields serialized for a parameter. */
export function withJsonText<R, J extends keyof R>(row: R, jsonFields: readonly J[]): WithJsonText<R, J> {
  const out = { ...row } as Record<PropertyKey, unknown>;
  for (const f of jsonFields) out[f] = jsonText(row[f] as Json);
  return out as WithJsonText<R, J>;
}
