/**
 * Warehouse rows: one interface per table of schema `geo` (sql/<dialect>/*.sql), named and
 * shaped as the columns are. Transforms produce them; the warehouse (load/) writes them. Conventions:
 * - IDs are JS numbers (the API's integers fit 2^53); the warehouse stores BIGINT.
 * - Days are `YYYY-MM-DD` strings (DATE columns).
 * - Timestamps are ISO 8601 strings with an offset (`2026-11-21T08:00:00+08:00`): the API's
 *   `YYYY-MM-DD HH:MM:SS` values are Asia/Shanghai wall time (TIMESTAMPTZ columns).
 * - Money is a decimal string (exact NUMERIC/DECIMAL columns), never a float.
 * - `Json` values are written as JSON/JSONB.
 */
export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

export interface MonitoringTaskRow {
  project_id: number;
  customer_id: number | null;
  project_name: string;
  brand_cate_desc: string;
  brand_desc_list: string;
  status: number;
  status_name: string;
  created_at: string | null;
  task_count: number;
  prompts: string[];
}

/** Legacy project detail's configuration, merged onto monitoring_tasks (`enrich.taskConfig`). */
export interface MonitoringTaskConfigRow {
  project_id: number;
  week_restart: number;
  only_rank: number;
  rank_match: number;
  brand_urls: string[];
  emails: string[];
}

export interface PlatformTaskRow {
  task_id: number;
  project_id: number;
  customer_id: number | null;
  task_name: string;
  model_key: string;
  model_name: string;
  engine: string;
  status: number;
  status_name: string;
}

/** Legacy project detail's per-platform prompts, merged onto platform_tasks (`enrich.taskConfig`). */
export interface PlatformTaskPromptsRow {
  task_id: number;
  prompts: string[];
}

export interface PromptExecutionRow {
  prompt_task_id: number;
  task_id: number;
  project_id: number;
  customer_id: number | null;
  prompt_name: string;
  date_time: string;
  hours: number;
  status: number;
  model: string;
  engine: string;
  brand_exposure: string;
  screenshot_url: string | null;
  result_status: 'available' | 'missing';
  answer: string | null;
  think: string | null;
  rank_exposure: string;
  rank_exposure_number: string;
  /** From legacy task detail when that enrichment is on; otherwise null. */
  created_at: string | null;
  updated_at: string | null;
}

/**
 * An execution's children counted on its own row (sql/<dialect>/010): written by the writer
 * with the execution, read by the views at the execution grain instead of the child tables.
 */
export interface ExecutionCounts {
  prompt_task_id: number;
  rank_items: number | null;
  valid_ranks: number | null;
  sources: number | null;
  product_cards: number | null;
  has_screenshot: boolean | null;
}

/** An execution row as stored: the API's fields and its children's counts. */
export type StoredExecutionRow = PromptExecutionRow & Omit<ExecutionCounts, 'prompt_task_id'>;

export interface ExecutionRankRow {
  prompt_task_id: number;
  /** 0-based index in rank_details: every item is kept, valid or not. */
  ordinal: number;
  brand: string;
  brand_short: string;
  /** NULL when the rank is empty or <= 0 (spec 2.5 rule 2): never 0. */
  position: number | null;
  visibility: number | null;
  score: number | null;
  /**
   * The rank numbers stored as NULL although the API sent something that is not an integer of
   * their column (`{"visibility": "-"}`), as sent (api/schemas/rank-number.ts); null when none.
   */
  raw_values: Json;
}

export interface ExecutionSourceRow {
  source_id: number;
  prompt_task_id: number;
  task_id: number;
  project_id: number;
  customer_id: number | null;
  url: string;
  title: string;
  domain: string;
  cite_index: string;
  snippet: string;
  upstream_task_id: string;
  /** Legacy source fields (`enrich.legacySources`); null when not read. */
  site_name: string | null;
  site_icon: string | null;
  published_at: string | null;
  task_ai_id: string | null;
}

export interface ExecutionScreenshotRow {
  prompt_task_id: number;
  task_id: number;
  project_id: number;
  customer_id: number | null;
  screenshot_status: number;
  screenshot_url: string;
}

export interface ExecutionProductsRow {
  prompt_task_id: number;
  supported: boolean | null;
  result_status: string | null;
  total: number;
  field_order: Json;
  field_labels: Json;
}

export interface ProductCardRow {
  prompt_task_id: number;
  /** 0-based display order across all pages. */
  position: number;
  card: Json;
  product_name: string | null;
  price: string | null;
  shop: string | null;
  source: string | null;
  link: string | null;
}

/**
 * Everything one batch of executions carries. The warehouse writes it in ONE transaction:
 * executions upserted; for every execution in `executions`, its ranks, sources and product cards
 * are replaced by those given (an execution with none given ends with none); screenshots and
 * product summaries upserted.
 */
export interface ExecutionBatch {
  executions: PromptExecutionRow[];
  ranks: ExecutionRankRow[];
  sources: ExecutionSourceRow[];
  screenshots: ExecutionScreenshotRow[];
  products: ExecutionProductsRow[];
  cards: ProductCardRow[];
  /**
   * Children of the batch's executions that could not be read this time (their response was
   * quarantined, or answered 404): the rows stored for them are kept as they are, neither
   * replaced nor deleted, so a child that fails to read never costs the data already stored.
   * Rows given for a kept child are ignored; kept `times` leave a stored execution's created_at and
   * updated_at as they are. Ranks come with the execution and are always replaced.
   */
  kept?: KeptChild[];
  /**
   * Executions whose source list was read incompletely (an item quarantined, a list that shifted
   * between pages): the sources read are written, and none stored is deleted, since the ones
   * missing from the read may still be there upstream. The next run reads the execution again.
   */
  sourcesMerged?: number[];
  /** Fingerprints of the batch's executions, written in the same transaction as their rows. */
  fingerprints?: ExecutionFingerprintRow[];
}

/**
 * What an execution's own endpoints give, kept when one of them cannot be read: its sources, the
 * screenshot, the product cards, and `times`, the execution's `created_at`/`updated_at` (legacy
 * task/detail): the execution row is then written with every other column, its times untouched.
 */
export type ChildCollection = 'sources' | 'screenshot' | 'products' | 'times';

export interface KeptChild {
  prompt_task_id: number;
  child: ChildCollection;
}

export interface SiteDiagnosisRow {
  diagnosis_id: string;
  customer_id: number;
  status: string;
  diagnosis_task_id: string | null;
  result_ready: boolean | null;
  progress_percent: number | null;
  current_step: string | null;
  error: Json;
  project_url: string | null;
  url: string | null;
  is_current_url: boolean | null;
  composite_score: number | null;
  summary_text: Json;
  top_issues: Json;
  quick_wins: Json;
  modules_summary: Json;
  platform_scores: Json;
  observation: Json;
  page_diagnostics: Json;
  result_json: Json;
  seen_at: string;
}

export interface BalanceSnapshotRow {
  taken_at: string;
  run_id: string | null;
  user_id: number;
  user_name: string;
  amount: string;
}

export interface DeductionRow {
  id: number;
  user_id: number;
  /** The spec's deduction `project_id`: a prompt execution ID. */
  prompt_task_id: number;
  diff_amount: string;
  before_amount: string;
  after_amount: string;
  remark: string;
  created_at: string;
}

export type RunKind = 'sync' | 'backfill' | 'schedule' | 'demo' | 'diagnose';
export type RunStatus = 'running' | 'success' | 'partial' | 'failed' | 'interrupted';

export interface SyncRunRow {
  run_id: string;
  kind: RunKind;
  /** Arguments with every secret removed. */
  args: Json;
  started_at: string;
  finished_at: string | null;
  status: RunStatus;
  rows: Json;
  requests: number;
  retries: number;
  rate_limited: number;
  rejects: number;
  units_total: number;
  units_done: number;
  units_failed: number;
  error: string | null;
  /**
   * Monitoring tasks the key may not read (`[{ project_id, reason }]`), as the run's scope found
   * them; null when the run resolved no scope (a distributed job) or has not yet.
   */
  unreadable: Json;
  /**
   * Text and JSON values the run stored changed by the text rule (load/text.ts): U+0000
   * dropped, lone surrogates as U+FFFD.
   */
  text_values_changed: number;
  /** Executions whose children the run read; null for runs recorded before change detection. */
  executions_read: number | null;
  /** Listed executions left as stored: item unchanged, children complete (change detection). */
  executions_unchanged: number | null;
}

/**
 * Change detection: the fingerprint of an execution's task/results item as last read
 * and whether its children were read completely then.
 */
export interface ExecutionFingerprintRow {
  prompt_task_id: number;
  fingerprint: string;
  children_complete: boolean;
}

/** A finished unit of work: one platform task on one day. */
export interface CheckpointRow {
  task_id: number;
  date: string;
  run_id: string;
  finished_at: string;
  executions: number;
  /** The total the unit's task/results listing reported when it was read (`geo-sync check`). */
  listed_total?: number | null;
}

/** A unit whose last attempt failed: no checkpoint was written for that attempt. */
export interface UnitFailureRow {
  task_id: number;
  date: string;
  run_id: string;
  failed_at: string;
  error: string;
}

export interface RejectRow {
  run_id: string;
  endpoint: string;
  params: Json;
  reason: string;
  raw: Json;
  seen_at: string;
}

// ---- The per-day aggregates (load/tables.ts ROLLUP_*), computed by load/core/rollups.ts ----

/** The grain every aggregate starts with: a platform task's day, with its execution's owners. */
export interface RollupUnit {
  date: string;
  week_start: string;
  task_id: number;
  project_id: number;
  customer_id: number | null;
}

export interface RollupExecutionsRow extends RollupUnit {
  engine: string;
  model: string;
  executions: number;
  available: number;
  missing: number;
  with_screenshot: number;
  valid_rank_items: number;
  citations: number;
}

/** A brand's executions ranked and their sums: the same per platform task and per account. */
export interface BrandExecutionSums {
  executions_ranked: number;
  best_position_sum: number;
  best_position: number | null;
  top1_executions: number;
  top3_executions: number;
  visibility_sum: number;
  visibility_items: number;
  score_sum: number;
  score_items: number;
}

export interface RollupBrandsRow extends RollupUnit, BrandExecutionSums {
  engine: string;
  model: string;
  brand: string;
  rank_items: number;
  valid_rank_items: number;
  position_sum: number;
}

export interface RollupDomainsRow extends RollupUnit {
  domain: string;
  citations: number;
  executions_citing: number;
  owned: boolean;
}

/** A day of the whole account: the per-platform-task aggregates summed (rollups.ts ACCOUNT_SELECTS). */
export interface RollupAccountDay {
  date: string;
  week_start: string;
}

export interface RollupDomainsAccountRow extends RollupAccountDay {
  domain: string;
  citations: number;
  executions_citing: number;
}

export interface RollupBrandsAccountRow extends RollupAccountDay, BrandExecutionSums {
  brand: string;
  executions: number;
}

export interface RollupQuestionBrandsRow extends RollupUnit {
  question: string;
  brand: string;
  runs: number;
  runs_ranked: number;
  best_position_sum: number;
  best_position: number | null;
}
