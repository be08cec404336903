-- geo-sync warehouse, DuckDB. One table per row interface of src/transform/rows.ts, keyed by
-- the API's own IDs. Days are DATE, instants TIMESTAMPTZ, money DECIMAL(18,4), documents JSON.
-- Applied by src/load/migrate.ts in one transaction. Same tables and columns as
-- sql/postgres/001_init.sql. Keys are PRIMARY KEYs (ON CONFLICT needs them); secondary indexes
-- are left out on purpose: DuckDB cannot use an ART index for the IN (subquery) deletes and
-- joins the adapter and the views run, while every index makes each merge slower. Zone maps
-- (rows arrive roughly in prompt_task_id and day order) serve those scans instead.

CREATE SCHEMA IF NOT EXISTS geo;

-- Monitoring tasks (spec 2.2); the legacy detail's configuration (2.11) fills the nullable
-- columns week_restart .. emails.
CREATE TABLE geo.monitoring_tasks (
  project_id      BIGINT PRIMARY KEY,
  customer_id     BIGINT,
  project_name    VARCHAR NOT NULL,
  brand_cate_desc VARCHAR NOT NULL,
  brand_desc_list VARCHAR NOT NULL,
  status          INTEGER NOT NULL,
  status_name     VARCHAR NOT NULL,
  created_at      TIMESTAMPTZ,
  task_count      INTEGER NOT NULL,
  prompts         JSON NOT NULL,
  week_restart    INTEGER,
  only_rank       INTEGER,
  rank_match      INTEGER,
  brand_urls      JSON,
  emails          JSON,
  synced_at       TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Platform tasks (2.3); `prompts` from the legacy detail's projects[].prompts.
CREATE TABLE geo.platform_tasks (
  task_id     BIGINT PRIMARY KEY,
  project_id  BIGINT NOT NULL,
  customer_id BIGINT,
  task_name   VARCHAR NOT NULL,
  model_key   VARCHAR NOT NULL,
  model_name  VARCHAR NOT NULL,
  engine      VARCHAR NOT NULL,
  status      INTEGER NOT NULL,
  status_name VARCHAR NOT NULL,
  prompts     JSON,
  synced_at   TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Prompt executions with their results (2.4, 2.5). created_at/updated_at from legacy task detail.
CREATE TABLE geo.prompt_executions (
  prompt_task_id       BIGINT PRIMARY KEY,
  task_id              BIGINT NOT NULL,
  project_id           BIGINT NOT NULL,
  customer_id          BIGINT,
  prompt_name          VARCHAR NOT NULL,
  date_time            DATE NOT NULL,
  hours                INTEGER NOT NULL,
  status               INTEGER NOT NULL,
  model                VARCHAR NOT NULL,
  engine               VARCHAR NOT NULL,
  brand_exposure       VARCHAR NOT NULL,
  screenshot_url       VARCHAR,
  result_status        VARCHAR NOT NULL CHECK (result_status IN ('available', 'missing')),
  answer               VARCHAR,
  think                VARCHAR,
  rank_exposure        VARCHAR NOT NULL,
  rank_exposure_number VARCHAR NOT NULL,
  created_at           TIMESTAMPTZ,
  updated_at           TIMESTAMPTZ,
  synced_at            TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- rank_details items, every one kept in order; position NULL when empty or <= 0, never 0.
CREATE TABLE geo.execution_ranks (
  prompt_task_id BIGINT NOT NULL,
  ordinal        INTEGER NOT NULL,
  brand          VARCHAR NOT NULL,
  brand_short    VARCHAR NOT NULL,
  position       INTEGER CHECK (position IS NULL OR position > 0),
  visibility     BIGINT,
  score          BIGINT,
  synced_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (prompt_task_id, ordinal)
);

-- Sources (2.6); site_name .. task_ai_id from legacy sources (2.11). published_at is kept as
-- the text the API sends: its format is not specified.
CREATE TABLE geo.execution_sources (
  source_id        BIGINT PRIMARY KEY,
  prompt_task_id   BIGINT NOT NULL,
  task_id          BIGINT NOT NULL,
  project_id       BIGINT NOT NULL,
  customer_id      BIGINT,
  url              VARCHAR NOT NULL,
  title            VARCHAR NOT NULL,
  domain           VARCHAR NOT NULL,
  cite_index       VARCHAR NOT NULL,
  snippet          VARCHAR NOT NULL,
  upstream_task_id VARCHAR NOT NULL,
  site_name        VARCHAR,
  site_icon        VARCHAR,
  published_at     VARCHAR,
  task_ai_id       VARCHAR,
  synced_at        TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE geo.execution_screenshots (
  prompt_task_id    BIGINT PRIMARY KEY,
  task_id           BIGINT NOT NULL,
  project_id        BIGINT NOT NULL,
  customer_id       BIGINT,
  screenshot_status INTEGER NOT NULL,
  screenshot_url    VARCHAR NOT NULL,
  synced_at         TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- The product-card answer of an execution (2.8), without the cards themselves.
CREATE TABLE geo.execution_products (
  prompt_task_id BIGINT PRIMARY KEY,
  supported      BOOLEAN,
  result_status  VARCHAR,
  total          INTEGER NOT NULL,
  field_order    JSON,
  field_labels   JSON,
  synced_at      TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Cards in display order; the whole card as JSON plus the common fields as columns.
CREATE TABLE geo.product_cards (
  prompt_task_id BIGINT NOT NULL,
  position       INTEGER NOT NULL,
  card           JSON,
  product_name   VARCHAR,
  price          VARCHAR,
  shop           VARCHAR,
  source         VARCHAR,
  link           VARCHAR,
  synced_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (prompt_task_id, position)
);

-- Site diagnoses (2.9), one row per diagnosis record; the report members as JSON.
CREATE TABLE geo.site_diagnoses (
  diagnosis_id      VARCHAR PRIMARY KEY,
  customer_id       BIGINT NOT NULL,
  status            VARCHAR NOT NULL,
  diagnosis_task_id VARCHAR,
  result_ready      BOOLEAN,
  progress_percent  DOUBLE,
  current_step      VARCHAR,
  error             JSON,
  project_url       VARCHAR,
  url               VARCHAR,
  is_current_url    BOOLEAN,
  composite_score   DOUBLE,
  summary_text      JSON,
  top_issues        JSON,
  quick_wins        JSON,
  modules_summary   JSON,
  platform_scores   JSON,
  observation       JSON,
  page_diagnostics  JSON,
  result_json       JSON,
  seen_at           TIMESTAMPTZ NOT NULL,
  synced_at         TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE geo.balance_snapshots (
  taken_at  TIMESTAMPTZ PRIMARY KEY,
  run_id    VARCHAR,
  user_id   BIGINT NOT NULL,
  user_name VARCHAR NOT NULL,
  amount    DECIMAL(18, 4) NOT NULL,
  synced_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Deduction records (2.10); the API's `project_id` is a prompt execution: prompt_task_id.
CREATE TABLE geo.deductions (
  id             BIGINT PRIMARY KEY,
  user_id        BIGINT NOT NULL,
  prompt_task_id BIGINT NOT NULL,
  diff_amount    DECIMAL(18, 4) NOT NULL,
  before_amount  DECIMAL(18, 4) NOT NULL,
  after_amount   DECIMAL(18, 4) NOT NULL,
  remark         VARCHAR NOT NULL,
  created_at     TIMESTAMPTZ NOT NULL,
  synced_at      TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- The run log.
CREATE TABLE geo.sync_runs (
  run_id       VARCHAR PRIMARY KEY,
  kind         VARCHAR NOT NULL,
  args         JSON,
  started_at   TIMESTAMPTZ NOT NULL,
  finished_at  TIMESTAMPTZ,
  status       VARCHAR NOT NULL,
  rows         JSON,
  requests     BIGINT NOT NULL,
  retries      BIGINT NOT NULL,
  rate_limited BIGINT NOT NULL,
  rejects      BIGINT NOT NULL,
  units_total  INTEGER NOT NULL,
  units_done   INTEGER NOT NULL,
  units_failed INTEGER NOT NULL,
  error        VARCHAR
);

-- Finished units (platform task, day), written in the transaction that closes the unit.
CREATE TABLE geo.sync_checkpoints (
  task_id     BIGINT NOT NULL,
  date        DATE NOT NULL,
  run_id      VARCHAR NOT NULL,
  finished_at TIMESTAMPTZ NOT NULL,
  executions  INTEGER NOT NULL,
  PRIMARY KEY (task_id, date)
);

-- Quarantined records with the reason they were refused.
CREATE SEQUENCE geo.sync_rejects_id_seq;
CREATE TABLE geo.sync_rejects (
  id       BIGINT PRIMARY KEY DEFAULT nextval('geo.sync_rejects_id_seq'),
  run_id   VARCHAR NOT NULL,
  endpoint VARCHAR NOT NULL,
  params   JSON,
  reason   VARCHAR NOT NULL,
  raw      JSON,
  seen_at  TIMESTAMPTZ NOT NULL
);
