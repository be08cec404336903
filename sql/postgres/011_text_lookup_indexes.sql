-- Brand and domain lookups by SP-GiST, not hash. A hash index keeps every entry of one value in
-- one bucket's chain of overflow pages, and an insert walks that chain from its start to find
-- room: the cost of an insert grows with the rows already stored under its value. Brands and the
-- top domains are few values repeated without end, so a year's nightly inserts walked chains
-- thousands of pages long (measured on PostgreSQL 15: 40,000 rows of 8 values inserted after
-- 1,000,000 took 3.0 s with a hash index, 0.17 s with a btree, 0.07 s with none). SP-GiST's text
-- radix tree takes text of any length, as hash did (a btree entry holds ~2,700 bytes; a longer
-- brand failed its batch), serves `brand = ...` and `domain = ...`, and inserts in time that
-- does not grow with the duplicates (the same 40,000 rows: 0.51 s). Built on 3,000,000 rows of
-- 12 brands: hash 13.6 minutes, SP-GiST 16 s.
--
-- The execution tables lose their brand and domain indexes: every dashboard view reads the
-- per-day aggregates, which keep theirs; a lookup by brand on execution_ranks itself is a scan
-- (filter by day or execution first, as the views do).
--
-- The hash indexes exist where 009 and 010 were applied by a release before this one (which
-- created them there); 009 and 010 no longer do.
-- Every table it alters is locked first: a lock it waited for after building an index would roll
-- the build back when the wait gives up (migrate bounds each wait), and the next try build again.
LOCK TABLE geo.execution_ranks, geo.execution_sources, geo.rollup_brands_daily, geo.rollup_domains_daily,
  geo.rollup_question_brands_daily IN ACCESS EXCLUSIVE MODE;
DROP INDEX IF EXISTS geo.execution_ranks_brand_idx;
DROP INDEX IF EXISTS geo.execution_sources_domain_idx;
DROP INDEX IF EXISTS geo.rollup_brands_daily_brand_idx;
CREATE INDEX rollup_brands_daily_brand_idx ON geo.rollup_brands_daily USING spgist (brand);
DROP INDEX IF EXISTS geo.rollup_domains_daily_domain_idx;
CREATE INDEX rollup_domains_daily_domain_idx ON geo.rollup_domains_daily USING spgist (domain);
DROP INDEX IF EXISTS geo.rollup_question_brands_daily_brand_idx;
CREATE INDEX rollup_question_brands_daily_brand_idx ON geo.rollup_question_brands_daily USING spgist (brand);
