-- The whole account's per-day aggregates: the per-platform-task aggregates (008) of a day summed
-- over the account, by cited domain and by brand. A tile of the whole account (its top cited
-- domains, its brands' visibility) read every platform task's rows of its days and summed them:
-- on a year of 10,000 executions a day, 30 days of domains were 1.38 million rows (1.7 s); here
-- they are a day's distinct domains. Recomputed from the tables of 008, a day at a time, in the
-- transaction that recomputes a unit of that day (src/load/core/rollups.ts); filled for the days
-- already stored after this migration, a batch of days per transaction (migration-store.ts).
-- No primary key, as 008's: the grain (date, domain) and (date, brand) is unique by construction.
CREATE TABLE geo.rollup_domains_account_daily (
  date               DATE NOT NULL,
  week_start         DATE NOT NULL,
  domain             TEXT NOT NULL,
  citations          BIGINT NOT NULL,
  executions_citing  BIGINT NOT NULL
);

CREATE TABLE geo.rollup_brands_account_daily (
  date               DATE NOT NULL,
  week_start         DATE NOT NULL,
  brand              TEXT NOT NULL,
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

-- A tile reads a range of days whole, by the day. No domain in a btree (not even INCLUDEd):
-- an entry holds ~2,700 bytes, and the API may cite a longer domain (011). Brands and domains
-- as 011 indexes them.
CREATE INDEX rollup_domains_account_daily_date_idx ON geo.rollup_domains_account_daily (date);
CREATE INDEX rollup_domains_account_daily_week_idx ON geo.rollup_domains_account_daily (week_start);
CREATE INDEX rollup_domains_account_daily_domain_idx ON geo.rollup_domains_account_daily USING spgist (domain);
CREATE INDEX rollup_brands_account_daily_date_idx ON geo.rollup_brands_account_daily (date);
CREATE INDEX rollup_brands_account_daily_week_idx ON geo.rollup_brands_account_daily (week_start);
CREATE INDEX rollup_brands_account_daily_brand_idx ON geo.rollup_brands_account_daily USING spgist (brand);

INSERT INTO geo.schema_migrations (version, name) VALUES ('account_rollups_fill', 'fill');
