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
  engine           VARCHAR NOT NULL,
  model            VARCHAR NOT NULL,
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
  engine             VARCHAR NOT NULL,
  model              VARCHAR NOT NULL,
  brand              VARCHAR NOT NULL,
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
  domain             VARCHAR NOT NULL,
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
  question           VARCHAR NOT NULL,
  brand              VARCHAR NOT NULL,
  runs               BIGINT NOT NULL,
  runs_ranked        BIGINT NOT NULL,
  best_position_sum  BIGINT NOT NULL,
  best_position      INTEGER
);

-- No index: DuckDB reads these by scanning with zone maps (min/max per row group), which serve
-- day ranges because rows are appended day after day; its ART indexes serve point lookups only
-- and would slow every recomputation's delete and insert.

-- The aggregates of the executions already stored are filled after the migrations, a batch of
-- days per transaction (src/load/core/rollups.ts fillRollupsStep); this row says it is to do, and
-- where it has got to if it was interrupted.
INSERT INTO geo.schema_migrations (version, name) VALUES ('rollups_fill', 'fill');
