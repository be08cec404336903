-- geo-sync warehouse, PostgreSQL. One table per row interface of src/transform/rows.ts, keyed by
-- the API's own IDs. Days are DATE, instants TIMESTAMPTZ, money NUMERIC(18,4), documents JSONB.
-- Applied by src/load/migrate.ts in one transaction, under an advisory lock.

CREATE SCHEMA IF NOT EXISTS geo;

-- Monitoring tasks (spec 2.2); the legacy detail's configuration (2.11) fills the nullable
-- columns week_restart .. emails.
CREATE TABLE geo.monitoring_tasks (
  project_id      BIGINT PRIMARY KEY,
  customer_id     BIGINT,
  project_name    TEXT NOT NULL,
  brand_cate_desc TEXT NOT NULL,
  brand_desc_list TEXT NOT NULL,
  status          INTEGER NOT NULL,
  status_name     TEXT NOT NULL,
  created_at      TIMESTAMPTZ,
  task_count      INTEGER NOT NULL,
  prompts         JSONB NOT NULL,
  week_restart    INTEGER,
  only_rank       INTEGER,
  rank_match      INTEGER,
  brand_urls      JSONB,
  emails          JSONB,
  synced_at       TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX monitoring_tasks_customer_idx ON geo.monitoring_tasks (customer_id);

-- Platform tasks (2.3); `prompts` from the legacy detail's projects[].prompts.
CREATE TABLE geo.platform_tasks (
  task_id     BIGINT PRIMARY KEY,
  project_id  BIGINT NOT NULL,
  customer_id BIGINT,
  task_name   TEXT NOT NULL,
  model_key   TEXT NOT NULL,
  model_name  TEXT NOT NULL,
  engine      TEXT NOT NULL,
  status      INTEGER NOT NULL,
  status_name TEXT NOT NULL,
  prompts     JSONB,
  synced_at   TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX platform_tasks_project_idx ON geo.platform_tasks (project_id);

-- Prompt executions with their results (2.4, 2.5). created_at/updated_at from legacy task detail.
CREATE TABLE geo.prompt_executions (
  prompt_task_id       BIGINT PRIMARY KEY,
  task_id              BIGINT NOT NULL,
  project_id           BIGINT NOT NULL,
  customer_id          BIGINT,
  prompt_name          TEXT NOT NULL,
  date_time            DATE NOT NULL,
  hours                INTEGER NOT NULL,
  status               INTEGER NOT NULL,
  model                TEXT NOT NULL,
  engine               TEXT NOT NULL,
  brand_exposure       TEXT NOT NULL,
  screenshot_url       TEXT,
  result_status        TEXT NOT NULL CHECK (result_status IN ('available', 'missing')),
  answer               TEXT,
  think                TEXT,
  rank_exposure        TEXT NOT NULL,
  rank_exposure_number TEXT NOT NULL,
  created_at           TIMESTAMPTZ,
  updated_at           TIMESTAMPTZ,
  synced_at            TIMESTAMPTZ NOT NULL DEFAULT now()
);
-- Views filter by day; a unit (task, day) is closed by task_id + date_time.
CREATE INDEX prompt_executions_date_task_idx ON geo.prompt_executions (date_time, task_id);
CREATE INDEX prompt_executions_task_date_idx ON geo.prompt_executions (task_id, date_time);

-- rank_details items, every one kept in order; position NULL when empty or <= 0, never 0.
CREATE TABLE geo.execution_ranks (
  prompt_task_id BIGINT NOT NULL,
  ordinal        INTEGER NOT NULL,
  brand          TEXT NOT NULL,
  brand_short    TEXT NOT NULL,
  position       INTEGER CHECK (position IS NULL OR position > 0),
  visibility     BIGINT,
  score          BIGINT,
  synced_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (prompt_task_id, ordinal)
);
CREATE INDEX execution_ranks_brand_idx ON geo.execution_ranks (brand);

-- Sources (2.6); site_name .. task_ai_id from legacy sources (2.11). published_at is kept as
-- the text the API sends: its format is not specified.
CREATE TABLE geo.execution_sources (
  source_id        BIGINT PRIMARY KEY,
  prompt_task_id   BIGINT NOT NULL,
  task_id          BIGINT NOT NULL,
  project_id       BIGINT NOT NULL,
  customer_id      BIGINT,
  url              TEXT NOT NULL,
  title            TEXT NOT NULL,
  domain           TEXT NOT NULL,
  cite_index       TEXT NOT NULL,
  snippet          TEXT NOT NULL,
  upstream_task_id TEXT NOT NULL,
  site_name        TEXT,
  site_icon        TEXT,
  published_at     TEXT,
  task_ai_id       TEXT,
  synced_at        TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX execution_sources_prompt_task_idx ON geo.execution_sources (prompt_task_id);
CREATE INDEX execution_sources_domain_idx ON geo.execution_sources (domain);

CREATE TABLE geo.execution_screenshots (
  prompt_task_id    BIGINT PRIMARY KEY,
  task_id           BIGINT NOT NULL,
  project_id        BIGINT NOT NULL,
  customer_id       BIGINT,
  screenshot_status INTEGER NOT NULL,
  screenshot_url    TEXT NOT NULL,
  synced_at         TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- The product-card answer of an execution (2.8), without the cards themselves.
CREATE TABLE geo.execution_products (
  prompt_task_id BIGINT PRIMARY KEY,
  supported      BOOLEAN,
  result_status  TEXT,
  total          INTEGER NOT NULL,
  field_order    JSONB,
  field_labels   JSONB,
  synced_at      TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Cards in display order; the whole card as JSON plus the common fields as columns.
CREATE TABLE geo.product_cards (
  prompt_task_id BIGINT NOT NULL,
  position       INTEGER NOT NULL,
  card           JSONB,
  product_name   TEXT,
  price          TEXT,
  shop           TEXT,
  source         TEXT,
  link           TEXT,
  synced_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (prompt_task_id, position)
);

-- Site diagnoses (2.9), one row per diagnosis record; the report members as JSON.
CREATE TABLE geo.site_diagnoses (
  diagnosis_id      TEXT PRIMARY KEY,
  customer_id       BIGINT NOT NULL,
  status            TEXT NOT NULL,
  diagnosis_task_id TEXT,
  result_ready      BOOLEAN,
  progress_percent  DOUBLE PRECISION,
  current_step      TEXT,
  error             JSONB,
  project_url       TEXT,
  url               TEXT,
  is_current_url    BOOLEAN,
  composite_score   DOUBLE PRECISION,
  summary_text      JSONB,
  top_issues        JSONB,
  quick_wins        JSONB,
  modules_summary   JSONB,
  platform_scores   JSONB,
  observation       JSONB,
  page_diagnostics  JSONB,
  result_json       JSONB,
  seen_at           TIMESTAMPTZ NOT NULL,
  synced_at         TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX site_diagnoses_customer_idx ON geo.site_diagnoses (customer_id);

CREATE TABLE geo.balance_snapshots (
  taken_at  TIMESTAMPTZ PRIMARY KEY,
  run_id    TEXT,
  user_id   BIGINT NOT NULL,
  user_name TEXT NOT NULL,
  amount    NUMERIC(18, 4) NOT NULL,
  synced_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Deduction records (2.10); the API's `project_id` is a prompt execution: prompt_task_id.
CREATE TABLE geo.deductions (
  id             BIGINT PRIMARY KEY,
  user_id        BIGINT NOT NULL,
  prompt_task_id BIGINT NOT NULL,
  diff_amount    NUMERIC(18, 4) NOT NULL,
  before_amount  NUMERIC(18, 4) NOT NULL,
  after_amount   NUMERIC(18, 4) NOT NULL,
  remark         TEXT NOT NULL,
  created_at     TIMESTAMPTZ NOT NULL,
  synced_at      TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX deductions_created_at_idx ON geo.deductions (created_at);
CREATE INDEX deductions_prompt_task_idx ON geo.deductions (prompt_task_id);

-- The run log.
CREATE TABLE geo.sync_runs (
  run_id       TEXT PRIMARY KEY,
  kind         TEXT NOT NULL,
  args         JSONB,
  started_at   TIMESTAMPTZ NOT NULL,
  finished_at  TIMESTAMPTZ,
  status       TEXT NOT NULL,
  rows         JSONB,
  requests     BIGINT NOT NULL,
  retries      BIGINT NOT NULL,
  rate_limited BIGINT NOT NULL,
  rejects      BIGINT NOT NULL,
  units_total  INTEGER NOT NULL,
  units_done   INTEGER NOT NULL,
  units_failed INTEGER NOT NULL,
  error        TEXT
);
CREATE INDEX sync_runs_started_at_idx ON geo.sync_runs (started_at);

-- Finished units (platform task, day), written in the transaction that closes the unit.
CREATE TABLE geo.sync_checkpoints (
  task_id     BIGINT NOT NULL,
  date        DATE NOT NULL,
  run_id      TEXT NOT NULL,
  finished_at TIMESTAMPTZ NOT NULL,
  executions  INTEGER NOT NULL,
  PRIMARY KEY (task_id, date)
);
CREATE INDEX sync_checkpoints_date_idx ON geo.sync_checkpoints (date);

-- Quarantined records with the reason they were refused.
CREATE TABLE geo.sync_rejects (
  id       BIGSERIAL PRIMARY KEY,
  run_id   TEXT NOT NULL,
  endpoint TEXT NOT NULL,
  params   JSONB,
  reason   TEXT NOT NULL,
  raw      JSONB,
  seen_at  TIMESTAMPTZ NOT NULL
);
CREATE INDEX sync_rejects_run_idx ON geo.sync_rejects (run_id);

-- Who holds the no-overlap advisory lock (the lock itself is pg_try_advisory_lock; a row whose
-- backend no longer holds it is stale and ignored).
CREATE TABLE geo.sync_lock (
  lock_key    BIGINT PRIMARY KEY,
  holder      TEXT NOT NULL,
  backend_pid INTEGER NOT NULL,
  acquired_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
