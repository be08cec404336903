-- The per-day aggregates are no longer recomputed inside every write transaction. A write
-- transaction records here, with its rows, the units (platform task, day) whose rows it changed;
-- the sync refreshes those units set-based in transactions of their own (during a run, and always
-- at its end; `geo-sync rollups refresh` too) and deletes the markers it covered. A unit listed
-- here may show aggregates older than its rows; `check rollups_match` skips it. `marked` comes
-- from a sequence, so a refresh deletes exactly the markers it read: a unit written again while
-- it ran keeps its newer marker and is refreshed again.
-- Every table it alters is locked first, before the update of every execution: a lock it waited for
-- after that update (a dashboard reading an aggregate table) would roll the update back when the
-- wait gives up (migrate bounds each wait: upgrades-and-backups.md), and the next try redo it.
LOCK TABLE geo.prompt_executions, geo.rollup_brands_daily, geo.rollup_domains_daily,
  geo.rollup_question_brands_daily IN ACCESS EXCLUSIVE MODE;
CREATE TABLE geo.rollup_stale_units (
  marked   BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  task_id  BIGINT NOT NULL,
  date     DATE NOT NULL
);
CREATE INDEX rollup_stale_units_unit_idx ON geo.rollup_stale_units (date, task_id);

-- Each execution's children counted on its own row, written by the writer with the execution
-- (it holds them), so a view at the execution grain (executions_enriched) reads no child table
-- per row. Filled here for the executions already stored.
ALTER TABLE geo.prompt_executions
  ADD COLUMN rank_items INTEGER,
  ADD COLUMN valid_ranks INTEGER,
  ADD COLUMN sources INTEGER,
  ADD COLUMN product_cards INTEGER,
  ADD COLUMN has_screenshot BOOLEAN;

UPDATE geo.prompt_executions e SET
  rank_items = COALESCE(r.items, 0),
  valid_ranks = COALESCE(r.valid, 0),
  sources = COALESCE(s.n, 0),
  product_cards = COALESCE(c.n, 0),
  has_screenshot = COALESCE(NULLIF(sc.screenshot_url, ''), NULLIF(e.screenshot_url, '')) IS NOT NULL
FROM geo.prompt_executions x
LEFT JOIN (SELECT prompt_task_id, count(*) AS items, count(position) AS valid
           FROM geo.execution_ranks GROUP BY prompt_task_id) r ON r.prompt_task_id = x.prompt_task_id
LEFT JOIN (SELECT prompt_task_id, count(*) AS n FROM geo.execution_sources GROUP BY prompt_task_id) s
  ON s.prompt_task_id = x.prompt_task_id
LEFT JOIN (SELECT prompt_task_id, count(*) AS n FROM geo.product_cards GROUP BY prompt_task_id) c
  ON c.prompt_task_id = x.prompt_task_id
LEFT JOIN geo.execution_screenshots sc ON sc.prompt_task_id = x.prompt_task_id
WHERE x.prompt_task_id = e.prompt_task_id;

-- The aggregates' btree indexes on brand and domain refused a brand or domain past about 2,700
-- bytes (the API may send one): the refresh of its unit failed, every time. They go here; 011
-- indexes brand and domain again, with SP-GiST. (Releases before 011 created hash indexes here.)
DROP INDEX geo.rollup_brands_daily_brand_idx;
DROP INDEX geo.rollup_domains_daily_domain_idx;
DROP INDEX geo.rollup_question_brands_daily_brand_idx;
