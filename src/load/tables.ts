/**
 * Schema `geo`, described once: every table with its columns in table order, the kind of value
 * each holds, whether it may be NULL, and its primary key. From this come the loaders' column
 * lists (COPY, Appender, staging tables, upserts: core/, duckdb/, postgres/) and the drift check
 * (test/load/schema-drift.test.ts compares it with what `migrate` creates from
 * sql/<dialect>/001_init.sql on both dialects). Kinds map to SQL types:
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
 * A column is written `kind`, or `kind?` when it may be NULL. Each table is typed by its row
 * interface (rows.ts): a field without a column, a column without a field, a kind that does not
 * hold the field's JS type, or a NOT NULL column for a field that may be null is a compile error.
 */
import type {
  BalanceSnapshotRow,
  CheckpointRow,
  DeductionRow,
  ExecutionCounts,
  ExecutionFingerprintRow,
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
  RollupBrandsAccountRow,
  RollupBrandsRow,
  RollupDomainsAccountRow,
  RollupDomainsRow,
  RollupExecutionsRow,
  RollupQuestionBrandsRow,
  StoredExecutionRow,
  SiteDiagnosisRow,
  SyncRunRow,
  UnitFailureRow,
} from '../transform/rows.ts';

import type { Dialect } from './warehouse.ts';

export type ColumnKind =
  'bigint' | 'integer' | 'double' | 'boolean' | 'text' | 'date' | 'timestamptz' | 'money' | 'json';

/** The kinds that hold a JS value of type T. */
type KindOf<T> = [T] extends [boolean]
  ? 'boolean'
  : [T] extends [number]
    ? 'bigint' | 'integer' | 'double'
    : [T] extends [string]
      ? 'text' | 'date' | 'timestamptz' | 'money'
      : 'json';

/** How a field of type T may be described: nullable when T admits null (a non-null field may fill a nullable column). */
type ColumnFor<T> = null extends T ? `${KindOf<NonNullable<T>>}?` : KindOf<T> | `${KindOf<T>}?`;

/** The columns of a row interface R, by name. */
export type Columns<R> = { readonly [K in keyof R & string]-?: ColumnFor<R[K]> };

export interface Column<R> {
  readonly name: keyof R & string;
  readonly kind: ColumnKind;
  readonly nullable: boolean;
}

/** What the loaders read: the columns a row carries, in table order. */
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

/** A whole table as the DDL creates it (what the drift check compares). */
export interface TableDef {
  readonly table: string;
  /** The PRIMARY KEY constraint's columns; empty for a table without one (the aggregates). */
  readonly primaryKey: readonly string[];
  /** The columns no two rows share (`check`'s keys_unique): the primary key, or an aggregate's grain. */
  readonly unique: readonly string[];
  /** Every column in table order, `synced_at` and serial ids included. */
  readonly columns: readonly {
    readonly name: string;
    readonly kind: ColumnKind;
    readonly nullable: boolean;
  }[];
  /** The dialects whose DDL creates it. */
  readonly dialects: readonly Dialect[];
}

export interface TableOptions {
  /** The table has `synced_at TIMESTAMPTZ NOT NULL DEFAULT now()` last. @default true */
  readonly synced?: boolean;
  /** A serial BIGINT primary key that rows do not carry, first (sync_rejects.id). */
  readonly serial?: string;
  /** Columns written by other row interfaces (the legacy configuration), after the row's own. */
  readonly also?: readonly TableSpec<never>[];
  /** @default both */
  readonly dialects?: readonly Dialect[];
  /**
   * No PRIMARY KEY constraint: the key is a grain with a nullable column (an aggregate's
   * customer_id), kept unique by how the rows are written (replaced by unit, never upserted).
   */
  readonly noPrimaryKey?: boolean;
  /**
   * Columns a later migration added to a table that has `synced_at`: ALTER TABLE ADD COLUMN puts
   * them after it, so the table holds them there (loaders name columns, never rely on order).
   */
  readonly afterSynced?: readonly string[];
}

/** A row interface's spec of (part of) a table. */
export function columnsOf<R>(
  table: string,
  key: readonly (keyof R & string)[],
  columns: Columns<R>,
  synced = true,
): TableSpec<R> {
  const list = Object.entries<string>(columns).map(([name, text]) => ({
    name: name as keyof R & string,
    kind: text.replace(/\?$/, '') as ColumnKind,
    nullable: text.endsWith('?'),
  }));
  return { table, key, columns: list, synced };
}

/** A table: its row interface's spec, and (in `def`) the whole table. */
function defineTable<R>(
  table: string,
  key: readonly (keyof R & string)[],
  columns: Columns<R>,
  opts: TableOptions = {},
): TableSpec<R> & { readonly def: TableDef } {
  const spec = columnsOf<R>(table, key, columns, opts.synced ?? true);
  const all: TableDef['columns'][number][] = [];
  if (opts.serial) all.push({ name: opts.serial, kind: 'bigint', nullable: false });
  for (const part of [spec as TableSpec<unknown>, ...(opts.also ?? [])]) {
    for (const c of part.columns) {
      const same = all.find((a) => a.name === c.name);
      if (!same) all.push(c);
      else if (same.kind !== c.kind)
        throw new Error(`geo.${table}.${c.name} is described twice, differently`);
    }
  }
  const later = all.filter((c) => opts.afterSynced?.includes(c.name));
  if (later.length > 0) all.splice(0, all.length, ...all.filter((c) => !later.includes(c)));
  if (spec.synced) all.push({ name: 'synced_at', kind: 'timestamptz', nullable: false });
  all.push(...later);
  const unique = opts.serial ? [opts.serial] : key;
  const def: TableDef = {
    table,
    primaryKey: opts.noPrimaryKey ? [] : unique,
    unique,
    columns: all,
    dialects: opts.dialects ?? ['postgres', 'duckdb'],
  };
  return { ...spec, def };
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

/** The legacy configuration columns of monitoring_tasks (updated, never inserted). */
export const MONITORING_TASK_CONFIG = columnsOf<MonitoringTaskConfigRow>('monitoring_tasks', ['project_id'], {
  project_id: 'bigint',
  week_restart: 'integer?',
  only_rank: 'integer?',
  rank_match: 'integer?',
  brand_urls: 'json?',
  emails: 'json?',
});

/** The legacy per-platform prompts column of platform_tasks (updated, never inserted). */
export const PLATFORM_TASK_PROMPTS = columnsOf<PlatformTaskPromptsRow>('platform_tasks', ['task_id'], {
  task_id: 'bigint',
  prompts: 'json?',
});

export const MONITORING_TASKS = defineTable<MonitoringTaskRow>(
  'monitoring_tasks',
  ['project_id'],
  {
    project_id: 'bigint',
    customer_id: 'bigint?',
    project_name: 'text',
    brand_cate_desc: 'text',
    brand_desc_list: 'text',
    status: 'integer',
    status_name: 'text',
    created_at: 'timestamptz?',
    task_count: 'integer',
    prompts: 'json',
  },
  { also: [MONITORING_TASK_CONFIG] },
);

export const PLATFORM_TASKS = defineTable<PlatformTaskRow>(
  'platform_tasks',
  ['task_id'],
  {
    task_id: 'bigint',
    project_id: 'bigint',
    customer_id: 'bigint?',
    task_name: 'text',
    model_key: 'text',
    model_name: 'text',
    engine: 'text',
    status: 'integer',
    status_name: 'text',
  },
  { also: [PLATFORM_TASK_PROMPTS] },
);

/** The children counts of an execution, on its row (sql/<dialect>/010_stale_units_and_counts.sql). */
export const EXECUTION_COUNTS = columnsOf<ExecutionCounts>('prompt_executions', ['prompt_task_id'], {
  prompt_task_id: 'bigint',
  rank_items: 'integer?',
  valid_ranks: 'integer?',
  sources: 'integer?',
  product_cards: 'integer?',
  has_screenshot: 'boolean?',
});
const COUNT_COLUMNS = EXECUTION_COUNTS.columns.filter((c) => c.name !== 'prompt_task_id');

/**
 * prompt_executions as the API describes an execution (what verify compares); the table also
 * holds the children counts (EXECUTION_COUNTS), which the writer adds (PROMPT_EXECUTIONS_STORED).
 */
export const PROMPT_EXECUTIONS = defineTable<PromptExecutionRow>(
  'prompt_executions',
  ['prompt_task_id'],
  {
    prompt_task_id: 'bigint',
    task_id: 'bigint',
    project_id: 'bigint',
    customer_id: 'bigint?',
    prompt_name: 'text',
    date_time: 'date',
    hours: 'integer',
    status: 'integer',
    model: 'text',
    engine: 'text',
    brand_exposure: 'text',
    screenshot_url: 'text?',
    result_status: 'text',
    answer: 'text?',
    think: 'text?',
    rank_exposure: 'text',
    rank_exposure_number: 'text',
    created_at: 'timestamptz?',
    updated_at: 'timestamptz?',
  },
  { also: [EXECUTION_COUNTS as TableSpec<never>], afterSynced: COUNT_COLUMNS.map((c) => c.name) },
);

/** prompt_executions as the writer stores a row: the execution and its children counts. */
export const PROMPT_EXECUTIONS_STORED: TableSpec<StoredExecutionRow> = {
  table: PROMPT_EXECUTIONS.table,
  key: PROMPT_EXECUTIONS.key,
  synced: PROMPT_EXECUTIONS.synced,
  columns: [...PROMPT_EXECUTIONS.columns, ...COUNT_COLUMNS] as TableSpec<StoredExecutionRow>['columns'],
};

/**
 * prompt_executions without created_at/updated_at: updates a stored execution whose times could
 * not be read this time (legacy task/detail), leaving the stored ones as they are.
 */
export const PROMPT_EXECUTIONS_BUT_TIMES: TableSpec<PromptExecutionRow> = {
  table: PROMPT_EXECUTIONS.table,
  key: PROMPT_EXECUTIONS.key,
  synced: PROMPT_EXECUTIONS.synced,
  columns: PROMPT_EXECUTIONS.columns.filter((c) => c.name !== 'created_at' && c.name !== 'updated_at'),
};

/** The same, with the children counts: the writer's update of such an execution. */
export const PROMPT_EXECUTIONS_STORED_BUT_TIMES: TableSpec<StoredExecutionRow> = {
  ...PROMPT_EXECUTIONS_STORED,
  columns: PROMPT_EXECUTIONS_STORED.columns.filter((c) => c.name !== 'created_at' && c.name !== 'updated_at'),
};

export const EXECUTION_RANKS = defineTable<ExecutionRankRow>(
  'execution_ranks',
  ['prompt_task_id', 'ordinal'],
  {
    prompt_task_id: 'bigint',
    ordinal: 'integer',
    brand: 'text',
    brand_short: 'text',
    position: 'integer?',
    visibility: 'bigint?',
    score: 'bigint?',
    raw_values: 'json?',
  },
  // sql/<dialect>/009_rank_raw_values.sql
  { afterSynced: ['raw_values'] },
);

export const EXECUTION_SOURCES = defineTable<ExecutionSourceRow>('execution_sources', ['source_id'], {
  source_id: 'bigint',
  prompt_task_id: 'bigint',
  task_id: 'bigint',
  project_id: 'bigint',
  customer_id: 'bigint?',
  url: 'text',
  title: 'text',
  domain: 'text',
  cite_index: 'text',
  snippet: 'text',
  upstream_task_id: 'text',
  site_name: 'text?',
  site_icon: 'text?',
  published_at: 'text?',
  task_ai_id: 'text?',
});

export const EXECUTION_SCREENSHOTS = defineTable<ExecutionScreenshotRow>(
  'execution_screenshots',
  ['prompt_task_id'],
  {
    prompt_task_id: 'bigint',
    task_id: 'bigint',
    project_id: 'bigint',
    customer_id: 'bigint?',
    screenshot_status: 'integer',
    screenshot_url: 'text',
  },
);

export const EXECUTION_PRODUCTS = defineTable<ExecutionProductsRow>(
  'execution_products',
  ['prompt_task_id'],
  {
    prompt_task_id: 'bigint',
    supported: 'boolean?',
    result_status: 'text?',
    total: 'integer',
    field_order: 'json?',
    field_labels: 'json?',
  },
);

export const PRODUCT_CARDS = defineTable<ProductCardRow>('product_cards', ['prompt_task_id', 'position'], {
  prompt_task_id: 'bigint',
  position: 'integer',
  card: 'json?',
  product_name: 'text?',
  price: 'text?',
  shop: 'text?',
  source: 'text?',
  link: 'text?',
});

export const SITE_DIAGNOSES = defineTable<SiteDiagnosisRow>('site_diagnoses', ['diagnosis_id'], {
  diagnosis_id: 'text',
  customer_id: 'bigint',
  status: 'text',
  diagnosis_task_id: 'text?',
  result_ready: 'boolean?',
  progress_percent: 'double?',
  current_step: 'text?',
  error: 'json?',
  project_url: 'text?',
  url: 'text?',
  is_current_url: 'boolean?',
  composite_score: 'double?',
  summary_text: 'json?',
  top_issues: 'json?',
  quick_wins: 'json?',
  modules_summary: 'json?',
  platform_scores: 'json?',
  observation: 'json?',
  page_diagnostics: 'json?',
  result_json: 'json?',
  seen_at: 'timestamptz',
});

export const BALANCE_SNAPSHOTS = defineTable<BalanceSnapshotRow>('balance_snapshots', ['taken_at'], {
  taken_at: 'timestamptz',
  run_id: 'text?',
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
    args: 'json?',
    started_at: 'timestamptz',
    finished_at: 'timestamptz?',
    status: 'text',
    rows: 'json?',
    requests: 'bigint',
    retries: 'bigint',
    rate_limited: 'bigint',
    rejects: 'bigint',
    units_total: 'integer',
    units_done: 'integer',
    units_failed: 'integer',
    error: 'text?',
    unreadable: 'json?',
    text_values_changed: 'bigint?',
    executions_read: 'bigint?',
    executions_unchanged: 'bigint?',
  },
  { synced: false },
);

/** Change detection: each execution's item fingerprint as last read (sql/<dialect>/006). */
export const EXECUTION_FINGERPRINTS = defineTable<ExecutionFingerprintRow>(
  'execution_fingerprints',
  ['prompt_task_id'],
  { prompt_task_id: 'bigint', fingerprint: 'text', children_complete: 'boolean' },
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
    listed_total: 'integer?',
  },
  { synced: false },
);

/** The latest failure of each unit whose last attempt failed (`geo-sync state show`). */
export const SYNC_UNIT_FAILURES = defineTable<UnitFailureRow>(
  'sync_unit_failures',
  ['task_id', 'date'],
  { task_id: 'bigint', date: 'date', run_id: 'text', failed_at: 'timestamptz', error: 'text' },
  { synced: false },
);

/** sync_rejects: keyed by its own serial `id`, which rows do not carry. */
export const SYNC_REJECTS = defineTable<RejectRow>(
  'sync_rejects',
  [],
  {
    run_id: 'text',
    endpoint: 'text',
    params: 'json?',
    reason: 'text',
    raw: 'json?',
    seen_at: 'timestamptz',
  },
  { synced: false, serial: 'id' },
);

// ---- The per-day aggregates (sql/<dialect>/008_rollups.sql, 010; core/rollups.ts) ----
// Computed from the execution tables, never from the API: each write transaction that changes a
// unit's (platform task, day) rows recomputes that unit's aggregate rows from them (delete, then
// insert), so their grain is unique by construction; customer_id may be NULL (spec 1, rule 5),
// which is why they have no PRIMARY KEY constraint. The views (sql/views.sql) read these.

const ROLLUP_UNIT = {
  date: 'date',
  week_start: 'date',
  task_id: 'bigint',
  project_id: 'bigint',
  customer_id: 'bigint?',
} as const;

export const ROLLUP_EXECUTIONS_DAILY = defineTable<RollupExecutionsRow>(
  'rollup_executions_daily',
  ['date', 'task_id', 'project_id', 'customer_id', 'engine', 'model'],
  {
    ...ROLLUP_UNIT,
    engine: 'text',
    model: 'text',
    executions: 'bigint',
    available: 'bigint',
    missing: 'bigint',
    with_screenshot: 'bigint',
    valid_rank_items: 'bigint',
    citations: 'bigint',
  },
  { synced: false, noPrimaryKey: true },
);

/** A brand's executions ranked, and their sums: the same columns per platform task and per account. */
const BRAND_EXECUTION_SUMS = {
  executions_ranked: 'bigint',
  best_position_sum: 'bigint',
  best_position: 'integer?',
  top1_executions: 'bigint',
  top3_executions: 'bigint',
  visibility_sum: 'bigint',
  visibility_items: 'bigint',
  score_sum: 'bigint',
  score_items: 'bigint',
} as const;

export const ROLLUP_BRANDS_DAILY = defineTable<RollupBrandsRow>(
  'rollup_brands_daily',
  ['date', 'task_id', 'project_id', 'customer_id', 'engine', 'model', 'brand'],
  {
    ...ROLLUP_UNIT,
    engine: 'text',
    model: 'text',
    brand: 'text',
    rank_items: 'bigint',
    valid_rank_items: 'bigint',
    position_sum: 'bigint',
    ...BRAND_EXECUTION_SUMS,
  },
  { synced: false, noPrimaryKey: true },
);

export const ROLLUP_DOMAINS_DAILY = defineTable<RollupDomainsRow>(
  'rollup_domains_daily',
  ['date', 'task_id', 'project_id', 'customer_id', 'domain'],
  {
    ...ROLLUP_UNIT,
    domain: 'text',
    citations: 'bigint',
    executions_citing: 'bigint',
    owned: 'boolean',
  },
  { synced: false, noPrimaryKey: true },
);

export const ROLLUP_QUESTION_BRANDS_DAILY = defineTable<RollupQuestionBrandsRow>(
  'rollup_question_brands_daily',
  ['date', 'task_id', 'project_id', 'customer_id', 'question', 'brand'],
  {
    ...ROLLUP_UNIT,
    question: 'text',
    brand: 'text',
    runs: 'bigint',
    runs_ranked: 'bigint',
    best_position_sum: 'bigint',
    best_position: 'integer?',
  },
  { synced: false, noPrimaryKey: true },
);

/** The aggregate tables, in the order a unit's recomputation writes them. */
export const ROLLUP_TABLES = [
  ROLLUP_EXECUTIONS_DAILY,
  ROLLUP_BRANDS_DAILY,
  ROLLUP_DOMAINS_DAILY,
  ROLLUP_QUESTION_BRANDS_DAILY,
] as const;

// ---- The whole account's days (sql/<dialect>/012_account_rollups.sql; core/rollups.ts) ----
// The per-platform-task aggregates of a day summed over the account: a tile of the whole account
// (its top cited domains, its brands' visibility) reads a day's few thousand rows here instead of
// summing every platform task's. Recomputed from the tables above, a day at a time, whenever a
// unit of that day is; unique per (date, domain) and (date, brand) by construction.

export const ROLLUP_DOMAINS_ACCOUNT_DAILY = defineTable<RollupDomainsAccountRow>(
  'rollup_domains_account_daily',
  ['date', 'domain'],
  { date: 'date', week_start: 'date', domain: 'text', citations: 'bigint', executions_citing: 'bigint' },
  { synced: false, noPrimaryKey: true },
);

export const ROLLUP_BRANDS_ACCOUNT_DAILY = defineTable<RollupBrandsAccountRow>(
  'rollup_brands_account_daily',
  ['date', 'brand'],
  {
    date: 'date',
    week_start: 'date',
    brand: 'text',
    executions: 'bigint',
    ...BRAND_EXECUTION_SUMS,
  },
  { synced: false, noPrimaryKey: true },
);

/** The account's aggregate tables, recomputed after the units' (from them) for the units' days. */
export const ACCOUNT_ROLLUP_TABLES = [ROLLUP_DOMAINS_ACCOUNT_DAILY, ROLLUP_BRANDS_ACCOUNT_DAILY] as const;

/**
 * The invalidation log of the aggregates: units (platform task, day) whose rows a write changed
 * since their aggregates were last refreshed (sql/<dialect>/010_stale_units_and_counts.sql).
 */
export const ROLLUP_STALE_UNITS = defineTable<{ marked: number; task_id: number; date: string }>(
  'rollup_stale_units',
  ['marked'],
  { marked: 'bigint', task_id: 'bigint', date: 'date' },
  { synced: false },
);

/** The migration ledger (created by ./migrate.ts before any migration). */
const SCHEMA_MIGRATIONS = defineTable<{ version: string; name: string; applied_at: string }>(
  'schema_migrations',
  ['version'],
  { version: 'text', name: 'text', applied_at: 'timestamptz' },
  { synced: false },
);

/** Who holds the no-overlap advisory lock (PostgreSQL only; written by postgres/advisory-lock.ts). */
const SYNC_LOCK = defineTable<{
  lock_key: number;
  holder: string;
  backend_pid: number;
  acquired_at: string;
  generation: number;
}>(
  'sync_lock',
  ['lock_key'],
  {
    lock_key: 'bigint',
    holder: 'text',
    backend_pid: 'integer',
    acquired_at: 'timestamptz',
    generation: 'bigint',
  },
  { synced: false, dialects: ['postgres'] },
);

/** Every table of schema `geo`, as `migrate` creates it. */
export const GEO_TABLES: readonly TableDef[] = [
  MONITORING_TASKS,
  PLATFORM_TASKS,
  PROMPT_EXECUTIONS,
  EXECUTION_RANKS,
  EXECUTION_SOURCES,
  EXECUTION_SCREENSHOTS,
  EXECUTION_PRODUCTS,
  PRODUCT_CARDS,
  SITE_DIAGNOSES,
  BALANCE_SNAPSHOTS,
  DEDUCTIONS,
  SYNC_RUNS,
  SYNC_CHECKPOINTS,
  SYNC_UNIT_FAILURES,
  SYNC_REJECTS,
  EXECUTION_FINGERPRINTS,
  ...ROLLUP_TABLES,
  ...ACCOUNT_ROLLUP_TABLES,
  ROLLUP_STALE_UNITS,
  SCHEMA_MIGRATIONS,
  SYNC_LOCK,
].map((t) => t.def);

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
