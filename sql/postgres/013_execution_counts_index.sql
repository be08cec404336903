-- The execution grain by days reads an index alone. A month of `executions_enriched` by day read
-- every execution row of the month from the heap (an index scan on (date_time, task_id), a page
-- a row): on a year of 10,000 executions a day, p95 1,123 ms after the run's tidy (2026-12-07;
-- 314 ms in an earlier run). The index now carries what that tile and the views at the execution
-- grain count (status, screenshot, children's counts) and the two join keys the view's LEFT
-- JOINs keep in the plan even when PostgreSQL removes the joins (project_id, task_id): with them
-- the scan is index-only once VACUUM has set the visibility map (the sync's tidy after a large
-- write does). On 3,650,000 synthetic executions of ~1.2 KB, the month took 110-117 ms warm
-- against 960 ms; the index is 268 MB against the old one's 37 MB (B-tree deduplication does not
-- apply to an index with INCLUDE columns), beside a 4.8 GB table.
CREATE INDEX prompt_executions_date_task_counts_idx ON geo.prompt_executions (date_time, task_id)
  INCLUDE (project_id, result_status, has_screenshot, rank_items, valid_ranks, sources, product_cards);
DROP INDEX IF EXISTS geo.prompt_executions_date_task_idx;
