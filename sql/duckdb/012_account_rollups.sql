-- The whole account's per-day aggregates: the per-platform-task aggregates (008) of a day summed
-- over the account, by cited domain and by brand, so a tile of the whole account reads a day's
-- distinct domains or brands instead of every platform task's rows. Recomputed from the tables of
-- 008, a day at a time, in the transaction that recomputes a unit of that day
-- (src/load/core/rollups.ts); filled for the days already stored after this migration, a batch
-- of days per transaction (migration-store.ts). No primary key, as 008's.
CREATE TABLE geo.rollup_domains_account_daily (
  date               DATE NOT NULL,
  week_start         DATE NOT NULL,
  domain             VARCHAR NOT NULL,
  citations          BIGINT NOT NULL,
  executions_citing  BIGINT NOT NULL
);

CREATE TABLE geo.rollup_brands_account_daily (
  date               DATE NOT NULL,
  week_start         DATE NOT NULL,
  brand              VARCHAR NOT NULL,
  executions         BIGINT NOT NULL,
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

INSERT INTO geo.schema_migrations (version, name) VALUES ('account_rollups_fill', 'fill');
