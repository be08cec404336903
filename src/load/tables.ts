/**
 * The columns of every table of schema `geo`, in table order, with the kind of value each holds:
 * one description that both adapters read (COPY and Appender column lists, staging tables,
 * upsert statements). Kinds map to SQL types in sql/<dialect>/001_init.sql:
 *
 * | kind        | PostgreSQL       | DuckDB          | JS value (rows.ts)            |
 * |-------------|------------------|-----------------|-------------------------------|
 * | bigint      | BIGINT           | BIGINT          | number                        |
 * | integer     | INTEGER          | INTEGER         | number                        |
 * | double      | DOUBLE PRECISION | DOUBLE          | number                        |
 * | boolean     | BOOLEAN          | BOOLEAN         | boolean                       |
 * | text        | TEXT             | VARCHAR         | string                        |
 * | date        | DATE             | DATE            | `YYYY-MM-DD`                  |
 * | timestamptz | TIMESTAMPTZ      | TIMESTAMPTZ     | ISO 8601 with offset          |
 * | money       | NUMERIC(18,4)    | DECIMAL(18,4)   | decimal string                |
 * | json        | JSONB            | JSON            | Json (SQL NULL for JS null)   |
 *
 * Each spec is typed by its row interface: a field added to rows.ts without a column here is a
 * compile error.
 */
import type {
  BalanceSnapshotRow,
  CheckpointRow,
  DeductionRow,
  ExecutionProductsRow,
  ExecutionRankRow,
  ExecutionScreenshotRow,
  ExecutionSourceRow,
  MonitoringTaskConfigRow,
  MonitoringTaskRow,
  PlatformTaskPromptsRow,
  PlatformTaskRow,
  ProductCardRow,
  PromptExecutionRow,
  RejectRow,
  SiteDiagnosisRow,
  SyncRunRow,
} from '../transform/rows.ts';

export type ColumnKind =
  'bigint' | 'integer' | 'double' | 'boolean' | 'text' | 'date' | 'timestamptz' | 'money' | 'json';

export interface Column<R> {
  readonly name: keyof R & string;
  readonly kind: ColumnKind;
}

export interface TableSpec<R> {
  /** Table name inside schema `geo`. */
  readonly table: string;
  /** The key the writes are idempotent by (the primary key). */
  readonly key: readonly (keyof R & string)[];
  /** Every column a row carries, in table order (`synced_at` and serial ids excluded). */
  readonly columns: readonly Column<R>[];
  /** The table has `synced_at`, which every upsert and update sets to now(). */
  readonly synced: boolean;
}

/** Any table's spec, for code that needs names and kinds but not the row type. */
export interface AnyTableSpec {
  readonly table: string;
  readonly key: readonly string[];
  readonly columns: readonly { readonly name: string; readonly kind: ColumnKind }[];
}

function defineTable<R>(
  table: string,
  key: readonly (keyof R & string)[],
  kinds: { readonly [K in keyof R & string]-?: ColumnKind },
  synced = true,
): TableSpec<R> {
  const columns = (Object.keys(kinds) as (keyof R & string)[]).map((name) => ({ name, kind: kinds[name] }));
  return { table, key, columns, synced };
}

/** Columns that are not part of the key: the ones an upsert overwrites. */
export function nonKeyColumns<R>(spec: TableSpec<R>): readonly Column<R>[] {
  return spec.columns.filter((c) => !spec.key.includes(c.name));
}

/** `geo.<table>`. */
export function qualified(spec: { readonly table: string }): string {
  return `geo.${spec.table}`;
}

/** A double-quoted SQL identifier (every name here is a constant of this file). */
export function ident(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

export const MONITORING_TASKS = defineTable<MonitoringTaskRow>('monitoring_tasks', ['project_id'], {
  project_id: 'bigint',
  customer_id: 'bigint',
  project_name: 'text',
  brand_cate_desc: 'text',
  brand_desc_list: 'text',
  status: 'integer',
  status_name: 'text',
  created_at: 'timestamptz',
  task_count: 'integer',
  prompts: 'json',
});

/** The legacy configuration columns of monitoring_tasks (updated, never inserted). */
export const MONITORING_TASK_CONFIG = defineTable<MonitoringTaskConfigRow>(
  'monitoring_tasks',
  ['project_id'],
  {
    project_id: 'bigint',
    week_restart: 'integer',
    only_rank: 'integer',
    rank_match: 'integer',
    brand_urls: 'json',
    emails: 'json',
  },
);

export const PLATFORM_TASKS = defineTable<PlatformTaskRow>('platform_tasks', ['task_id'], {
  task_id: 'bigint',
  project_id: 'bigint',
  customer_id: 'bigint',
  task_name: 'text',
  model_key: 'text',
  model_name: 'text',
  engine: 'text',
  status: 'integer',
  status_name: 'text',
});

/** The legacy per-platform prompts column of platform_tasks (updated, never inserted). */
export const PLATFORM_TASK_PROMPTS = defineTable<PlatformTaskPromptsRow>('platform_tasks', ['task_id'], {
  task_id: 'bigint',
  prompts: 'json',
});

export const PROMPT_EXECUTIONS = defineTable<PromptExecutionRow>('prompt_executions', ['prompt_task_id'], {
  prompt_task_id: 'bigint',
  task_id: 'bigint',
  project_id: 'bigint',
  customer_id: 'bigint',
  prompt_name: 'text',
  date_time: 'date',
  hours: 'integer',
  status: 'integer',
  model: 'text',
  engine: 'text',
  brand_exposure: 'text',
  screenshot_url: 'text',
  result_status: 'text',
  answer: 'text',
  think: 'text',
  rank_exposure: 'text',
  rank_exposure_number: 'text',
  created_at: 'timestamptz',
  updated_at: 'timestamptz',
});

export const EXECUTION_RANKS = defineTable<ExecutionRankRow>(
  'execution_ranks',
  ['prompt_task_id', 'ordinal'],
  {
    prompt_task_id: 'bigint',
    ordinal: 'integer',
    brand: 'text',
    brand_short: 'text',
    position: 'integer',
    visibility: 'bigint',
    score: 'bigint',
  },
);

export const EXECUTION_SOURCES = defineTable<ExecutionSourceRow>('execution_sources', ['source_id'], {
  source_id: 'bigint',
  prompt_task_id: 'bigint',
  task_id: 'bigint',
  project_id: 'bigint',
  customer_id: 'bigint',
  url: 'text',
  title: 'text',
  domain: 'text',
  cite_index: 'text',
  snippet: 'text',
  upstream_task_id: 'text',
  site_name: 'text',
  site_icon: 'text',
  published_at: 'text',
  task_ai_id: 'text',
});

export const EXECUTION_SCREENSHOTS = defineTable<ExecutionScreenshotRow>(
  'execution_screenshots',
  ['prompt_task_id'],
  {
    prompt_task_id: 'bigint',
    task_id: 'bigint',
    project_id: 'bigint',
    customer_id: 'bigint',
    screenshot_status: 'integer',
    screenshot_url: 'text',
  },
);

export const EXECUTION_PRODUCTS = defineTable<ExecutionProductsRow>(
  'execution_products',
  ['prompt_task_id'],
  {
    prompt_task_id: 'bigint',
    supported: 'boolean',
    result_status: 'text',
    total: 'integer',
    field_order: 'json',
    field_labels: 'json',
  },
);

export const PRODUCT_CARDS = defineTable<ProductCardRow>('product_cards', ['prompt_task_id', 'position'], {
  prompt_task_id: 'bigint',
  position: 'integer',
  card: 'json',
  product_name: 'text',
  price: 'text',
  shop: 'text',
  source: 'text',
  link: 'text',
});

export const SITE_DIAGNOSES = defineTable<SiteDiagnosisRow>('site_diagnoses', ['diagnosis_id'], {
  diagnosis_id: 'text',
  customer_id: 'bigint',
  status: 'text',
  diagnosis_task_id: 'text',
  result_ready: 'boolean',
  progress_percent: 'double',
  current_step: 'text',
  error: 'json',
  project_url: 'text',
  url: 'text',
  is_current_url: 'boolean',
  composite_score: 'double',
  summary_text: 'json',
  top_issues: 'json',
  quick_wins: 'json',
  modules_summary: 'json',
  platform_scores: 'json',
  observation: 'json',
  page_diagnostics: 'json',
  result_json: 'json',
  seen_at: 'timestamptz',
});

export const BALANCE_SNAPSHOTS = defineTable<BalanceSnapshotRow>('balance_snapshots', ['taken_at'], {
  taken_at: 'timestamptz',
  run_id: 'text',
  user_id: 'bigint',
  user_name: 'text',
  amount: 'money',
});

export const DEDUCTIONS = defineTable<DeductionRow>('deductions', ['id'], {
  id: 'bigint',
  user_id: 'bigint',
  prompt_task_id: 'bigint',
  diff_amount: 'money',
  before_amount: 'money',
  after_amount: 'money',
  remark: 'text',
  created_at: 'timestamptz',
});

export const SYNC_RUNS = defineTable<SyncRunRow>(
  'sync_runs',
  ['run_id'],
  {
    run_id: 'text',
    kind: 'text',
    args: 'json',
    started_at: 'timestamptz',
    finished_at: 'timestamptz',
    status: 'text',
    rows: 'json',
    requests: 'bigint',
    retries: 'bigint',
    rate_limited: 'bigint',
    rejects: 'bigint',
    units_total: 'integer',
    units_done: 'integer',
    units_failed: 'integer',
    error: 'text',
  },
  false,
);

export const SYNC_CHECKPOINTS = defineTable<CheckpointRow>(
  'sync_checkpoints',
  ['task_id', 'date'],
  {
    task_id: 'bigint',
    date: 'date',
    run_id: 'text',
    finished_at: 'timestamptz',
    executions: 'integer',
  },
  false,
);

/** sync_rejects: keyed by its own serial `id`, which rows do not carry. */
export const SYNC_REJECTS = defineTable<RejectRow>(
  'sync_rejects',
  [],
  {
    run_id: 'text',
    endpoint: 'text',
    params: 'json',
    reason: 'text',
    raw: 'json',
    seen_at: 'timestamptz',
  },
  false,
);

/** The children of an execution that a batch replaces, keyed by prompt_task_id. */
export const EXECUTION_CHILD_TABLES = [
  'execution_ranks',
  'execution_sources',
  'execution_screenshots',
  'execution_products',
  'product_cards',
] as const;

/** The tables an execution batch writes (executions and their children). */
export const EXECUTION_BATCH_TABLES = ['prompt_executions', ...EXECUTION_CHILD_TABLES] as const;
