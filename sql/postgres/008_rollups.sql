-- The per-day aggregates: the grain the views group by, stored so a dashboard never groups every
-- raw row. Kept by the sync: a write marks the units (platform task, day) whose rows it changed,
-- and a refresh recomputes those units' rows here from the execution tables (migration 010,
-- src/load/core/rollups.ts); `geo-sync rollups refresh` recomputes whole days. Only counts and
-- sums are stored, plus the least (best) positions and `owned`; names are joined by the views at
-- query time. No primary key: customer_id may be NULL (spec 1, rule 5); rows are replaced per
-- unit, never upserted, so the grain stays unique (check keys_unique). Filled from the stored
-- executions by this migration (see migrate.ts).
CREATE TABLE geo.rollup_executions_daily (
  date             DATE NOT NULL,
  week_start       DATE NOT NULL,
  task_id          BIGINT NOT NULL,
  project_id       BIGINT NOT NULL,
  customer_id      BIGINT,
  engine           TEXT NOT NULL,
  model            TEXT NOT NULL,
  executions       BIGINT NOT NULL,
  available        BIGINT NOT NULL,
  missing          BIGINT NOT NULL,
  with_screenshot  BIGINT NOT NULL,
  valid_rank_items BIGINT NOT NULL,
  citations        BIGINT NOT NULL
);

CREATE TABLE geo.rollup_brands_daily (
  date               DATE NOT NULL,
  week_start         DATE NOT NULL,
  task_id            BIGINT NOT NULL,
  project_id         BIGINT NOT NULL,
  customer_id        BIGINT,
  engine             TEXT NOT NULL,
  model              TEXT NOT NULL,
  brand              TEXT NOT NULL,
  rank_items         BIGINT NOT NULL,
  valid_rank_items   BIGINT NOT NULL,
  position_sum       BIGINT NOT NULL,
  executions_ranked  BIGINT NOT NULL,
  best_position_sum  BIGINT NOT NULL,
  best_position      INTEGER,
  top1_executions    BIGINT NOT NULL,
  top3_executions    BIGINT NOT NULL,
  visibility_sum     BIGINT NOT NULL,
  visibility_items   BIGINT NOT NULL,
  score_sum          BIGINT NOT NULL,
  score_items        BIGINT NOT NULL
);

CREATE TABLE geo.rollup_domains_daily (
  date               DATE NOT NULL,
  week_start         DATE NOT NULL,
  task_id            BIGINT NOT NULL,
  project_id         BIGINT NOT NULL,
  customer_id        BIGINT,
  domain             TEXT NOT NULL,
  citations          BIGINT NOT NULL,
  executions_citing  BIGINT NOT NULL,
  owned              BOOLEAN NOT NULL
);

CREATE TABLE geo.rollup_question_brands_daily (
  date               DATE NOT NULL,
  week_start         DATE NOT NULL,
  task_id            BIGINT NOT NULL,
  project_id         BIGINT NOT NULL,
  customer_id        BIGINT,
  question           TEXT NOT NULL,
  brand              TEXT NOT NULL,
  runs               BIGINT NOT NULL,
  runs_ranked        BIGINT NOT NULL,
  best_position_sum  BIGINT NOT NULL,
  best_position      INTEGER
);

-- What a dashboard filters by reaches an index: the day (and the unit, which every recomputation
-- deletes by), the platform task, the monitoring task, the week, a brand, a domain.
-- The views look each denominator up per row by (day or week, project_id, task_id): covering,
-- so a lookup reads the index alone.
CREATE INDEX rollup_executions_daily_date_idx ON geo.rollup_executions_daily (date, project_id, task_id)
  INCLUDE (executions, valid_rank_items, citations);
CREATE INDEX rollup_executions_daily_task_idx ON geo.rollup_executions_daily (task_id, date);
CREATE INDEX rollup_executions_daily_project_idx ON geo.rollup_executions_daily (project_id, date);
CREATE INDEX rollup_executions_daily_week_idx ON geo.rollup_executions_daily (week_start, project_id, task_id)
  INCLUDE (executions, valid_rank_items, citations);

CREATE INDEX rollup_brands_daily_date_idx ON geo.rollup_brands_daily (date, task_id);
CREATE INDEX rollup_brands_daily_task_idx ON geo.rollup_brands_daily (task_id, date);
CREATE INDEX rollup_brands_daily_project_idx ON geo.rollup_brands_daily (project_id, date);
CREATE INDEX rollup_brands_daily_week_idx ON geo.rollup_brands_daily (week_start, project_id);
CREATE INDEX rollup_brands_daily_brand_idx ON geo.rollup_brands_daily (brand, date);

CREATE INDEX rollup_domains_daily_date_idx ON geo.rollup_domains_daily (date, task_id);
CREATE INDEX rollup_domains_daily_task_idx ON geo.rollup_domains_daily (task_id, date);
CREATE INDEX rollup_domains_daily_project_idx ON geo.rollup_domains_daily (project_id, date);
CREATE INDEX rollup_domains_daily_week_idx ON geo.rollup_domains_daily (week_start, project_id);
CREATE INDEX rollup_domains_daily_domain_idx ON geo.rollup_domains_daily (domain, date);

CREATE INDEX rollup_question_brands_daily_date_idx ON geo.rollup_question_brands_daily (date, task_id);
CREATE INDEX rollup_question_brands_daily_task_idx ON geo.rollup_question_brands_daily (task_id, date);
CREATE INDEX rollup_question_brands_daily_project_idx ON geo.rollup_question_brands_daily (project_id, date);
CREATE INDEX rollup_question_brands_daily_brand_idx ON geo.rollup_question_brands_daily (brand, date);

-- How many rows an execution has in its child tables, for the planner: ANALYZE samples too few
-- rows to count the distinct prompt_task_id of a table of tens of millions (on a year of 10,000
-- executions a day it guessed 349 sources per execution, not 8), so the aggregates' recomputation
-- by day (rollups refresh, check rollups_match) chose a full scan of every child table over an
-- index lookup per execution. A negative n_distinct is a share of the rows: a tenth is about 10
-- sources (or ranks, or cards) per execution, the API's usual order of magnitude.
ALTER TABLE geo.execution_sources ALTER COLUMN prompt_task_id SET (n_distinct = -0.1);
ALTER TABLE geo.execution_ranks ALTER COLUMN prompt_task_id SET (n_distinct = -0.2);
ALTER TABLE geo.product_cards ALTER COLUMN prompt_task_id SET (n_distinct = -0.2);
-- Applied to the statistics now: the fill below (migrate.ts) and every later plan use them.
ANALYZE geo.prompt_executions, geo.execution_sources, geo.execution_ranks, geo.product_cards;

-- The aggregates of the executions already stored are filled after the migrations, a batch of
-- days per transaction (src/load/core/rollups.ts fillRollupsStep); this row says it is to do, and
-- where it has got to if it was interrupted.
INSERT INTO geo.schema_migrations (version, name) VALUES ('rollups_fill', 'fill');
