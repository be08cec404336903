-- A month of `executions_enriched` by day reads an index alone. It read the index on
-- (date_time, task_id), then fetched every execution row of the month from the heap: on a year of
-- 10,000 executions a day, p95 1,123 ms after the run's tidy (2026-12-07; an earlier run of the
-- same plan 314 ms, the difference not explained). The index now carries what that view counts
-- (status, screenshot, the children's counts) and project_id: the view's LEFT JOINs keep both
-- join keys in the plan even where PostgreSQL removes the joins. The scan is then index-only
-- wherever VACUUM has set the visibility map. On 3,650,000 synthetic executions of ~1.2 KB
-- (PostgreSQL's defaults, JIT included), the month took 110-117 ms warm against 960 ms; on the
-- bench's year of 10,000 a day, p95 71 ms after the run's tidy (docs/aggregates.md).
--
-- The visibility map: the sync's tidy vacuums a table after a run that grew it by a tenth (a
-- backfill), and autovacuum otherwise after a fifth of its rows were inserted (PostgreSQL's
-- default): on a year's warehouse, every ~70 nights, and a month's newest days, which nightly
-- runs write, would fetch the heap until then. At a hundredth this table is vacuumed every few
-- nights; what a vacuum reads is the pages not yet all-visible.
--
-- The cost: the index takes ~70 bytes an execution where the old one took ~10 (B-tree
-- deduplication does not apply with INCLUDE columns): 268 MB against 37 MB on that synthetic year,
-- beside a 4.8 GB table. A row updated in place (a re-read that keeps its times, a recount) is no
-- longer a HOT update when a count or its status changes; rows read again are mostly deleted and
-- inserted anyway. The load bench saw no difference (PostgreSQL 0.40 with it, 0.40 without).
--
-- The table is locked first, for the whole migration: the index is built under it (4.6 s for that
-- year with the table cached), so a sync's write transaction waits instead of deadlocking with the
-- DROP's lock upgrade, and readers wait for the build.
LOCK TABLE geo.prompt_executions IN ACCESS EXCLUSIVE MODE;
CREATE INDEX prompt_executions_date_task_counts_idx ON geo.prompt_executions (date_time, task_id)
  INCLUDE (project_id, result_status, has_screenshot, rank_items, valid_ranks, sources, product_cards);
DROP INDEX IF EXISTS geo.prompt_executions_date_task_idx;
ALTER TABLE geo.prompt_executions SET (autovacuum_vacuum_insert_scale_factor = 0.01);
