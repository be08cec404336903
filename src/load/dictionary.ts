/**
 * The data dictionary: a one-line description of every table, view and column of schema `geo`,
 * kept here, next to the table description (tables.ts) and the views (sql/views.sql).
 * `migrate` applies it as COMMENT ON in both warehouses (PostgreSQL clients, `\d+`, and DuckDB's
 * duckdb_tables(), duckdb_views(), duckdb_columns() show it), and docs/data-dictionary.md is
 * generated from it (`npm run docs:dictionary`; a test fails when the file is stale, and another
 * when a table, view or column of the database has no description here, or one here is gone).
 */
import type { Dialect } from './warehouse.ts';

export interface ObjectDoc {
  kind: 'table' | 'view';
  description: string;
  /** Column -> description, in the object's column order. */
  columns: Record<string, string>;
  /** Only in these warehouses. @default both */
  dialects?: readonly Dialect[];
}

/** Columns that mean the same wherever they appear. */
const C = {
  customer_id: 'Page project ID (the number after /partner/ in the web app; the API’s customer_id).',
  project_id: 'Monitoring task ID (the API’s project_id, number_id in the legacy endpoints).',
  task_id: 'Platform task ID: one monitoring task on one AI platform.',
  prompt_task_id: 'Prompt execution ID: one run of one question on one platform on one day.',
  synced_at: 'When geo-sync last wrote this row.',
  date: 'The day (Asia/Shanghai, as the API dates executions).',
  week_start: 'Monday of the ISO week (of Shanghai days).',
  iso_week: 'ISO week, as YYYY-Www.',
  monitoring_task_name: 'Name of the monitoring task (monitoring_tasks.project_name).',
  model_key: 'The platform’s key (platform_tasks.model_key), e.g. deepseek.',
  platform_name: 'The platform’s display name (platform_tasks.model_name).',
  engine: 'AI engine of the execution.',
  model: 'AI model of the execution.',
  brand: 'Brand name as the answer’s rank details give it.',
  executions: 'Executions of the platform task in the period, answered or not.',
  run_id: 'The geo-sync run (geo.sync_runs.run_id).',
  status_name: 'Status as text.',
  domain: 'Domain of the cited source.',
  citations: 'Source rows citing the domain.',
  executions_citing: 'Executions with at least one source of the domain.',
  citation_share: 'The domain’s share of all citations of the platform task in the period (0..1).',
  owned:
    'The domain is, or is below, a host of the monitoring task’s brand_urls (both lower-cased, without surrounding blanks, scheme, user@, :port, path, a leading "www." or trailing dots): the brand’s own site.',
  best_position: 'Best (lowest) valid position; NULL when none (empty or <= 0 ranks are not ranks).',
  question: 'The question text (prompt_name).',
} as const;

const visibility = (period: string): Record<string, string> => ({
  brand: C.brand,
  executions: C.executions,
  executions_ranked: `Executions of the ${period} in which the brand has a valid rank.`,
  visibility_rate: 'executions_ranked / executions (0..1).',
  avg_position: 'Average of the brand’s best valid position per ranked execution.',
  best_position: C.best_position,
  top1_rate: 'Share of executions in which the brand ranks first (0..1).',
  top3_rate: 'Share of executions in which the brand ranks in the top 3 (0..1).',
  avg_visibility: 'Average visibility over the brand’s rank items (NULL when none has one).',
  avg_score: 'Average score over the brand’s rank items (NULL when none has one).',
});

/** What `executions` sums at the account grain: as summing brand_visibility_daily gives. */
const ACCOUNT_EXECUTIONS =
  'Executions of the platform tasks’ days on which the brand is named in a rank (the sum of brand_visibility_daily.executions): the denominator of the rates.';

/** A brand's executions ranked and their sums, per platform task or per account. */
const brandExecutionSums = {
  executions_ranked: 'Executions in which the brand has a valid rank.',
  best_position_sum: 'Sum over those executions of the brand’s best valid position in each.',
  best_position: C.best_position,
  top1_executions: 'Executions in which the brand’s best valid position is 1.',
  top3_executions: 'Executions in which the brand’s best valid position is 3 or better.',
  visibility_sum: 'Sum of the items’ visibility (0 when none has one).',
  visibility_items: 'Items with a visibility.',
  score_sum: 'Sum of the items’ score (0 when none has one).',
  score_items: 'Items with a score.',
};

const names = {
  customer_id: C.customer_id,
  project_id: C.project_id,
  monitoring_task_name: C.monitoring_task_name,
  task_id: C.task_id,
  model_key: C.model_key,
  platform_name: C.platform_name,
};

/** The columns every per-day aggregate starts with. */
const rollupUnit = {
  date: C.date,
  week_start: C.week_start,
  task_id: C.task_id,
  project_id: C.project_id,
  customer_id: `${C.customer_id} NULL for historical data not attached to a project.`,
};

const citations = {
  domain: C.domain,
  citations: C.citations,
  executions_citing: C.executions_citing,
  citation_share: C.citation_share,
  owned: C.owned,
};

export const DICTIONARY: Record<string, ObjectDoc> = {
  monitoring_tasks: {
    kind: 'table',
    description:
      'Monitoring tasks (a brand watched across platforms), with the legacy detail’s configuration.',
    columns: {
      project_id: C.project_id,
      customer_id: C.customer_id,
      project_name: 'Monitoring task name.',
      brand_cate_desc: 'Brand category description.',
      brand_desc_list: 'Brands watched, one per line.',
      status: 'Status: -2 paused for arrears, -1 paused, 0 pending, 1 in progress, 2 completed.',
      status_name: C.status_name,
      created_at: 'When the monitoring task was created.',
      task_count: 'Number of platform tasks.',
      prompts: 'Question texts (JSON array).',
      week_restart: 'Legacy configuration: week_restart (NULL until the legacy detail is read).',
      only_rank: 'Legacy configuration: only_rank.',
      rank_match: 'Legacy configuration: rank_match.',
      brand_urls:
        'The brand’s own sites (JSON array of URLs); owned citations are matched against their hosts.',
      emails: 'Notification e-mails (JSON array).',
      synced_at: C.synced_at,
    },
  },
  platform_tasks: {
    kind: 'table',
    description: 'Platform tasks: one monitoring task on one AI platform.',
    columns: {
      task_id: C.task_id,
      project_id: C.project_id,
      customer_id: C.customer_id,
      task_name: 'Platform task name.',
      model_key: 'Platform key, e.g. deepseek.',
      model_name: 'Platform display name.',
      engine: 'AI engine.',
      status: 'Status (same values as monitoring_tasks.status).',
      status_name: C.status_name,
      prompts: 'Question texts of this platform task (JSON array, from the legacy detail).',
      synced_at: C.synced_at,
    },
  },
  prompt_executions: {
    kind: 'table',
    description: 'Prompt executions: one run of one question on one platform on one day, with its answer.',
    columns: {
      prompt_task_id: C.prompt_task_id,
      task_id: C.task_id,
      project_id: C.project_id,
      customer_id: C.customer_id,
      prompt_name: 'The question text.',
      date_time: C.date,
      hours: 'Hour of the run.',
      status: 'Execution status (its values are not documented by the API).',
      model: C.model,
      engine: C.engine,
      brand_exposure: 'Brand exposure as the API reports it.',
      screenshot_url: 'Screenshot URL from the listing (NULL when none).',
      result_status: 'available when an answer exists, missing when not.',
      answer: 'Latest saved answer; NULL when missing.',
      think: 'Latest saved reasoning text; NULL when missing.',
      rank_exposure: 'Rank exposure as the API reports it.',
      rank_exposure_number: 'Rank exposure count as the API reports it.',
      created_at: 'When the execution was created (legacy detail; NULL when not read).',
      updated_at: 'When the execution was last updated (legacy detail; NULL when not read).',
      synced_at: C.synced_at,
      rank_items: 'Rank items of the answer (its rows in execution_ranks), written with the execution.',
      valid_ranks: 'Of those, items with a valid position.',
      sources: 'Cited sources of the answer (its rows in execution_sources).',
      product_cards: 'Product cards of the answer (its rows in product_cards; 0 on platforms without them).',
      has_screenshot: 'A screenshot URL is stored (the screenshot endpoint’s or the listing’s).',
    },
  },
  execution_ranks: {
    kind: 'table',
    description: 'Rank details of each answer, every item in order.',
    columns: {
      prompt_task_id: C.prompt_task_id,
      ordinal: 'Position of the item in rank_details (0-based).',
      brand: C.brand,
      brand_short: 'Short brand name.',
      position:
        'Rank position; NULL when empty or <= 0 (not a valid rank, never 0), or when the API sent no integer (see raw_values).',
      visibility:
        'Visibility as the API reports it; NULL when empty, or when the API sent no integer (see raw_values).',
      score:
        'Score as the API reports it; NULL when empty, or when the API sent no integer (see raw_values).',
      synced_at: C.synced_at,
      raw_values:
        'What the API sent for position, visibility or score when it was not an integer of the column (a dash, a fraction, text), by field, e.g. {"visibility": "-"}; those columns hold NULL. NULL when every number was an integer or empty.',
    },
  },
  execution_sources: {
    kind: 'table',
    description: 'Sources cited by each answer.',
    columns: {
      source_id: 'Source ID.',
      prompt_task_id: C.prompt_task_id,
      task_id: C.task_id,
      project_id: C.project_id,
      customer_id: C.customer_id,
      url: 'Source URL.',
      title: 'Source title.',
      domain: C.domain,
      cite_index: 'Citation index as the API gives it (text).',
      snippet: 'Snippet of the source.',
      upstream_task_id: 'Upstream task ID as the API gives it.',
      site_name: 'Site name (legacy sources; NULL when not read).',
      site_icon: 'Site icon URL (legacy sources).',
      published_at: 'Publication date as the API sends it (text: its format is not specified).',
      task_ai_id: 'Legacy task_ai_id.',
      synced_at: C.synced_at,
    },
  },
  execution_screenshots: {
    kind: 'table',
    description: 'Screenshot of each answer, where the API has one.',
    columns: {
      prompt_task_id: C.prompt_task_id,
      task_id: C.task_id,
      project_id: C.project_id,
      customer_id: C.customer_id,
      screenshot_status: 'Screenshot status (its values are not documented by the API).',
      screenshot_url: 'Screenshot URL; empty when there is none.',
      synced_at: C.synced_at,
    },
  },
  execution_products: {
    kind: 'table',
    description: 'The product-card answer of each execution (the cards are in product_cards).',
    columns: {
      prompt_task_id: C.prompt_task_id,
      supported: 'Whether the platform supports product cards.',
      result_status: 'Result status of the product answer.',
      total: 'Number of cards.',
      field_order: 'Display order of card fields (JSON).',
      field_labels: 'Display labels of card fields (JSON).',
      synced_at: C.synced_at,
    },
  },
  product_cards: {
    kind: 'table',
    description: 'Product cards of each answer, in display order.',
    columns: {
      prompt_task_id: C.prompt_task_id,
      position: 'Display position (0-based).',
      card: 'The whole card (JSON).',
      product_name: 'Product name.',
      price: 'Price as displayed.',
      shop: 'Shop.',
      source: 'Source.',
      link: 'Link.',
      synced_at: C.synced_at,
    },
  },
  site_diagnoses: {
    kind: 'table',
    description: 'Site diagnoses of page projects, one row per diagnosis record.',
    columns: {
      diagnosis_id: 'Diagnosis record ID.',
      customer_id: C.customer_id,
      status: 'Diagnosis status.',
      diagnosis_task_id: 'Diagnosis task ID.',
      result_ready: 'Whether the report is ready.',
      progress_percent: 'Progress, percent.',
      current_step: 'Current step.',
      error: 'Error (JSON) of a failed diagnosis.',
      project_url: 'The project’s site URL.',
      url: 'Diagnosed URL.',
      is_current_url: 'Whether the diagnosed URL is the project’s current one.',
      composite_score: 'Composite score.',
      summary_text: 'Summary (JSON).',
      top_issues: 'Top issues (JSON).',
      quick_wins: 'Quick wins (JSON).',
      modules_summary: 'Modules summary (JSON).',
      platform_scores: 'Per-platform scores (JSON).',
      observation: 'Observation (JSON).',
      page_diagnostics: 'Page diagnostics (JSON).',
      result_json: 'The complete result (JSON).',
      seen_at: 'When geo-sync read this record.',
      synced_at: C.synced_at,
    },
  },
  balance_snapshots: {
    kind: 'table',
    description: 'The account balance, one snapshot per run that reads finance.',
    columns: {
      taken_at: 'When the balance was read.',
      run_id: C.run_id,
      user_id: 'Account user ID.',
      user_name: 'Account user name.',
      amount: 'Balance.',
      synced_at: C.synced_at,
    },
  },
  deductions: {
    kind: 'table',
    description: 'Deduction records of the account (what each execution cost).',
    columns: {
      id: 'Deduction ID.',
      user_id: 'Account user ID.',
      prompt_task_id: 'The execution charged (the API calls it project_id).',
      diff_amount: 'Amount deducted.',
      before_amount: 'Balance before.',
      after_amount: 'Balance after.',
      remark: 'Remark.',
      created_at: 'When it was deducted.',
      synced_at: C.synced_at,
    },
  },
  sync_runs: {
    kind: 'table',
    description: 'The run log: one row per geo-sync run (and per distributed job attempt).',
    columns: {
      run_id: 'Run ID.',
      kind: 'sync, backfill, schedule, demo or diagnose.',
      args: 'What the run covered (JSON: dates, customers, backfill, job...).',
      started_at: 'When the run started.',
      finished_at:
        'When it finished (NULL while running, and for a run found interrupted: when its process ended is unknown).',
      status:
        'running, success, partial, failed or interrupted (by a signal, or found still running by a later run that took the lock: its process was killed).',
      rows: 'Rows written per table (JSON).',
      requests: 'API requests made.',
      retries: 'Requests retried.',
      rate_limited: '429 answers received.',
      rejects: 'Records quarantined in sync_rejects.',
      units_total: 'Units (platform task, day) planned.',
      units_done: 'Units finished.',
      units_failed: 'Units failed.',
      error:
        'Why the run failed, if it did; for a run found still running by a later one, which run found it and when.',
      unreadable: 'Monitoring tasks that could not be read (JSON).',
      text_values_changed:
        'Text and JSON values stored changed by the text rule (U+0000 dropped, lone surrogates as U+FFFD).',
      executions_read:
        'Listed executions whose children the run read (NULL for a distributed enqueue, and for runs before migration 007 added change detection).',
      executions_unchanged:
        'Listed executions left as stored: item unchanged and children complete last time (change detection; NULL where executions_read is).',
    },
  },
  execution_fingerprints: {
    kind: 'table',
    description:
      'Change detection: the fingerprint of each execution’s listed item as last read, and whether its children were read completely.',
    columns: {
      prompt_task_id: C.prompt_task_id,
      fingerprint: 'sha256 of the task/results item’s canonical JSON (every member, unknown ones included).',
      children_complete: 'Whether every child was read and none quarantined when the item was last read.',
      synced_at: C.synced_at,
    },
  },
  sync_checkpoints: {
    kind: 'table',
    description: 'Finished units (platform task, day): written in the transaction that closes the unit.',
    columns: {
      task_id: C.task_id,
      date: C.date,
      run_id: C.run_id,
      finished_at: 'When the unit was closed.',
      executions: 'Executions the unit’s listing named (stored ones plus quarantined ones).',
      listed_total:
        'The total the API’s task/results listing reported when the unit was read (NULL for units closed before migration 005).',
    },
  },
  sync_unit_failures: {
    kind: 'table',
    description: 'The latest failure of each unit that failed.',
    columns: {
      task_id: C.task_id,
      date: C.date,
      run_id: C.run_id,
      failed_at: 'When it failed.',
      error: 'Why.',
    },
  },
  sync_rejects: {
    kind: 'table',
    description: 'Quarantined API records, with the reason they were refused.',
    columns: {
      id: 'Reject ID.',
      run_id: C.run_id,
      endpoint: 'The endpoint that answered.',
      params: 'The request’s parameters (JSON).',
      reason: 'Why the record was refused.',
      raw: 'The record as received (JSON).',
      seen_at: 'When it was received.',
    },
  },
  sync_lock: {
    kind: 'table',
    description: 'Who holds the warehouse lock (PostgreSQL advisory lock) and its generation.',
    dialects: ['postgres'],
    columns: {
      lock_key: 'Advisory lock key.',
      holder: 'The holding run (pid@host since time).',
      backend_pid: 'PostgreSQL backend holding the lock when it was taken.',
      acquired_at: 'When it was taken.',
      generation: 'Incremented by every exclusive taker; writes check it before they commit.',
    },
  },
  rollup_executions_daily: {
    kind: 'table',
    description:
      'Per-day aggregate (kept by the sync with each unit’s rows; `geo-sync rollups refresh` recomputes it): executions per platform task and day. Read by the views.',
    columns: {
      ...rollupUnit,
      engine: C.engine,
      model: C.model,
      executions: 'Executions of the platform task that day, answered or not.',
      available: 'Executions with an answer (result_status available).',
      missing: 'Executions without an answer (result_status missing).',
      with_screenshot: 'Executions with a screenshot URL (their screenshot’s, or their listed item’s).',
      valid_rank_items:
        'Rank items with a valid position in those executions, every brand’s: the denominator of share_of_voice.',
      citations: 'Sources cited by those executions, every domain’s: the denominator of citation_share.',
    },
  },
  rollup_brands_daily: {
    kind: 'table',
    description:
      'Per-day aggregate of the rank items per platform task and brand (kept by the sync; counts and sums only, plus the best position).',
    columns: {
      ...rollupUnit,
      engine: C.engine,
      model: C.model,
      brand: C.brand,
      rank_items: 'Rank items naming the brand.',
      valid_rank_items: 'Of those, items with a valid position (> 0).',
      position_sum: 'Sum of the valid items’ positions (avg_position = position_sum / valid_rank_items).',
      ...brandExecutionSums,
    },
  },
  rollup_domains_daily: {
    kind: 'table',
    description:
      'Per-day aggregate of the cited sources per platform task and domain (kept by the sync; `owned` decided again when brand_urls change).',
    columns: {
      ...rollupUnit,
      domain: C.domain,
      citations: C.citations,
      executions_citing: C.executions_citing,
      owned: C.owned,
    },
  },
  rollup_question_brands_daily: {
    kind: 'table',
    description: 'Per-day aggregate of each question’s runs per platform task and brand (kept by the sync).',
    columns: {
      ...rollupUnit,
      question: C.question,
      brand: C.brand,
      runs: 'Runs (executions) of the question on the platform task that day, the same in each brand’s row.',
      runs_ranked: 'Runs in which the brand has a valid rank.',
      best_position_sum: 'Sum over those runs of the brand’s best valid position in each.',
      best_position: C.best_position,
    },
  },
  rollup_domains_account_daily: {
    kind: 'table',
    description:
      'Per-day aggregate of the whole account’s cited sources per domain: rollup_domains_daily summed over the platform tasks (recomputed with them, a day at a time).',
    columns: {
      date: C.date,
      week_start: C.week_start,
      domain: C.domain,
      citations: C.citations,
      executions_citing: C.executions_citing,
    },
  },
  rollup_brands_account_daily: {
    kind: 'table',
    description:
      'Per-day aggregate of the whole account’s brands: brand_visibility_daily’s counts summed over the platform tasks (recomputed with them, a day at a time).',
    columns: {
      date: C.date,
      week_start: C.week_start,
      brand: C.brand,
      executions: ACCOUNT_EXECUTIONS,
      ...brandExecutionSums,
    },
  },
  rollup_stale_units: {
    kind: 'table',
    description:
      'Units (platform task, day) whose rows a write changed since their aggregates were last refreshed: their rollup_* rows are behind until the sync refreshes them (during a run, and always at its end). Empty at rest.',
    columns: {
      marked:
        'Number of the mark (a sequence, the key): a unit written by several transactions has several marks; a refresh deletes those it finds.',
      task_id: C.task_id,
      date: C.date,
    },
  },
  schema_migrations: {
    kind: 'table',
    description: 'Migrations applied to this warehouse, and the version of its views.',
    columns: {
      version: "Migration number; 'views' for the row that identifies the views and comments applied.",
      name: "Migration name; for the 'views' row, the SHA-256 of the views and comments applied.",
      applied_at: 'When it was applied.',
    },
  },

  // ---- views
  brand_rank_daily: {
    kind: 'view',
    description: 'Per day, platform task and brand: how the brand ranked (by IDs and engine).',
    columns: {
      date: C.date,
      customer_id: C.customer_id,
      project_id: C.project_id,
      task_id: C.task_id,
      engine: C.engine,
      model: C.model,
      brand: C.brand,
      appearances: 'Rank items naming the brand.',
      valid_ranks: 'Those with a valid position.',
      avg_position: 'Average valid position over the items.',
      best_position: C.best_position,
      executions: C.executions,
      rank_share: 'Share of the executions in which the brand has a valid rank (0..1).',
    },
  },
  citation_domains_daily: {
    kind: 'view',
    description: 'Per day, platform task and cited domain: citations and executions citing it (by IDs).',
    columns: {
      date: C.date,
      customer_id: C.customer_id,
      project_id: C.project_id,
      task_id: C.task_id,
      domain: C.domain,
      citations: C.citations,
      executions_citing: C.executions_citing,
    },
  },
  executions_daily: {
    kind: 'view',
    description: 'Per day and platform task: executions, with and without an answer.',
    columns: {
      date: C.date,
      customer_id: C.customer_id,
      project_id: C.project_id,
      task_id: C.task_id,
      engine: C.engine,
      model: C.model,
      executions: C.executions,
      available: 'Executions with an answer.',
      missing: 'Executions without an answer.',
    },
  },
  executions_enriched: {
    kind: 'view',
    description: 'One row per execution with the names people filter by and its counts of children.',
    columns: {
      prompt_task_id: C.prompt_task_id,
      date: C.date,
      week_start: C.week_start,
      iso_week: C.iso_week,
      customer_id: C.customer_id,
      project_id: C.project_id,
      monitoring_task_name: C.monitoring_task_name,
      brands: 'Brands the monitoring task watches, one per line.',
      task_id: C.task_id,
      model_key: C.model_key,
      platform_name: C.platform_name,
      engine: C.engine,
      model: C.model,
      question: C.question,
      hours: 'Hour of the run.',
      result_status: 'available or missing.',
      has_answer: 'result_status is available.',
      has_screenshot: 'A screenshot URL exists (the screenshot endpoint’s or the listing’s).',
      rank_items: 'Rank items of the answer.',
      valid_ranks: 'Rank items with a valid position.',
      sources: 'Sources cited.',
      product_cards: 'Product cards (0 on platforms without them).',
    },
  },
  execution_brand_ranks: {
    kind: 'view',
    description: 'One row per execution and brand it names: its best valid position and sums for averages.',
    columns: {
      prompt_task_id: C.prompt_task_id,
      brand: C.brand,
      rank_items: 'Rank items naming the brand in this answer.',
      valid_rank_items: 'Those with a valid position.',
      best_position: C.best_position,
      visibility_sum: 'Sum of the items’ visibility.',
      visibility_items: 'Items with a visibility.',
      score_sum: 'Sum of the items’ score.',
      score_items: 'Items with a score.',
      date: `${C.date} Of the execution (NULL for a rank item without its execution).`,
      task_id: C.task_id,
    },
  },
  brand_visibility_daily: {
    kind: 'view',
    description:
      'Per day, monitoring task, platform task and brand: visibility, positions, top-1/top-3 rates.',
    columns: { date: C.date, ...names, ...visibility('day') },
  },
  brand_visibility_weekly: {
    kind: 'view',
    description:
      'brand_visibility_daily per ISO week, computed from the executions (not from daily averages).',
    columns: { week_start: C.week_start, iso_week: C.iso_week, ...names, ...visibility('week') },
  },
  brand_share_of_voice_daily: {
    kind: 'view',
    description:
      'Per day and platform task: each brand’s share of all valid rank items (share of voice) and its rank.',
    columns: {
      date: C.date,
      ...names,
      brand: C.brand,
      valid_rank_items: 'The brand’s valid rank items that day.',
      all_valid_rank_items: 'Valid rank items of every brand of the platform task that day.',
      share_of_voice: 'valid_rank_items / all_valid_rank_items (0..1); NULL when there are none that day.',
      brand_rank:
        'Rank of the brand by valid rank items (1 = most; ties share a rank); NULL when the brand has none that day.',
    },
  },
  monitoring_task_hosts: {
    kind: 'view',
    description:
      'The hosts of each monitoring task’s brand_urls, normalised for own-site matching (citations_daily.owned).',
    columns: {
      project_id: C.project_id,
      host: 'Host of one of the brand’s URLs: lower case; blanks, scheme, user@, :port, path, a leading "www." and trailing dots dropped.',
    },
  },
  citations_daily: {
    kind: 'view',
    description:
      'Per day, platform task and cited domain: citations, share, and whether it is the brand’s own site.',
    columns: { date: C.date, ...names, ...citations },
  },
  citations_account_daily: {
    kind: 'view',
    description:
      'Per day and cited domain, over the whole account: citations and share (citations_daily summed over the platform tasks, read from rollup_domains_account_daily).',
    columns: {
      date: C.date,
      domain: C.domain,
      citations: C.citations,
      executions_citing: C.executions_citing,
      citation_share: 'The domain’s share of all the account’s citations that day (0..1).',
    },
  },
  brand_visibility_account_daily: {
    kind: 'view',
    description:
      'Per day and brand, over the whole account: brand_visibility_daily summed over the platform tasks (read from rollup_brands_account_daily).',
    columns: { date: C.date, ...visibility('day'), executions: ACCOUNT_EXECUTIONS },
  },
  citations_weekly: {
    kind: 'view',
    description: 'citations_daily per ISO week.',
    columns: { week_start: C.week_start, iso_week: C.iso_week, ...names, ...citations },
  },
  question_rank_daily: {
    kind: 'view',
    description:
      'Per question, platform task, brand and day: best and average valid position over the day’s runs.',
    columns: {
      date: C.date,
      ...names,
      question: C.question,
      brand: C.brand,
      runs: 'Runs (executions) of the question that day on the platform.',
      runs_ranked: 'Runs in which the brand has a valid rank.',
      best_position: C.best_position,
      avg_position: 'Average of the brand’s best valid position per ranked run.',
    },
  },
};

/** The objects of one warehouse, by name. */
export function dictionaryFor(dialect: Dialect): [string, ObjectDoc][] {
  return Object.entries(DICTIONARY).filter(([, d]) => !d.dialects || d.dialects.includes(dialect));
}

/** A SQL string literal (COMMENT ON takes no parameters); the text is ours, quotes doubled. */
const literal = (text: string) => `'${text.replace(/'/g, "''")}'`;

/** COMMENT ON statements for every object and column, for `migrate` to run after the views. */
export function commentSql(dialect: Dialect): string {
  const lines: string[] = ['-- The data dictionary (src/load/dictionary.ts).'];
  for (const [name, doc] of dictionaryFor(dialect)) {
    lines.push(
      `COMMENT ON ${doc.kind === 'view' ? 'VIEW' : 'TABLE'} geo.${name} IS ${literal(doc.description)};`,
    );
    for (const [column, text] of Object.entries(doc.columns)) {
      lines.push(`COMMENT ON COLUMN geo.${name}.${column} IS ${literal(text)};`);
    }
  }
  return lines.join('\n') + '\n';
}

/** docs/data-dictionary.md. */
export function renderDataDictionary(): string {
  const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
  const out: string[] = [
    '# Data dictionary',
    '',
    'Every table and view of schema `geo`, on PostgreSQL and DuckDB alike (unless marked). Generated',
    'from `src/load/dictionary.ts` by `npm run docs:dictionary`; `migrate` applies the same text as',
    '`COMMENT ON`, so BI tools show it too. Do not edit by hand.',
    '',
  ];
  for (const kind of ['table', 'view'] as const) {
    out.push(kind === 'table' ? '## Tables' : '## Views', '');
    for (const [name, doc] of Object.entries(DICTIONARY).filter(([, d]) => d.kind === kind)) {
      const only = doc.dialects ? ` (${doc.dialects.join(', ')} only)` : '';
      out.push(`### geo.${name}${only}`, '', doc.description, '', '| column | description |', '|---|---|');
      for (const [column, text] of Object.entries(doc.columns)) out.push(`| \`${column}\` | ${cell(text)} |`);
      out.push('');
    }
  }
  return out.join('\n');
}
