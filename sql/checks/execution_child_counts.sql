-- Each execution of the range carries its children's counts as they are stored: rank items, those
-- with a position, sources, product cards, and whether a screenshot URL is stored (the screenshot
-- row's, else the execution's own). The writer sets them from the rows it writes; the views at the
-- execution grain and the per-day executions' aggregates read them instead of the child tables.
SELECT e.prompt_task_id, e.date_time AS date, e.task_id,
  e.rank_items, COALESCE(r.items, 0) AS rank_items_stored,
  e.valid_ranks, COALESCE(r.valid, 0) AS valid_ranks_stored,
  e.sources, COALESCE(s.n, 0) AS sources_stored,
  e.product_cards, COALESCE(k.n, 0) AS product_cards_stored,
  e.has_screenshot,
  COALESCE(NULLIF(sc.screenshot_url, ''), NULLIF(e.screenshot_url, '')) IS NOT NULL AS screenshot_stored
FROM geo.prompt_executions e
LEFT JOIN (
  SELECT r.prompt_task_id, count(*) AS items, count(r.position) AS valid
  FROM geo.execution_ranks r JOIN geo.prompt_executions x ON x.prompt_task_id = r.prompt_task_id
  WHERE x.date_time BETWEEN CAST($1 AS DATE) AND CAST($2 AS DATE)
  GROUP BY r.prompt_task_id
) r ON r.prompt_task_id = e.prompt_task_id
LEFT JOIN (
  SELECT s.prompt_task_id, count(*) AS n
  FROM geo.execution_sources s JOIN geo.prompt_executions x ON x.prompt_task_id = s.prompt_task_id
  WHERE x.date_time BETWEEN CAST($1 AS DATE) AND CAST($2 AS DATE)
  GROUP BY s.prompt_task_id
) s ON s.prompt_task_id = e.prompt_task_id
LEFT JOIN (
  SELECT k.prompt_task_id, count(*) AS n
  FROM geo.product_cards k JOIN geo.prompt_executions x ON x.prompt_task_id = k.prompt_task_id
  WHERE x.date_time BETWEEN CAST($1 AS DATE) AND CAST($2 AS DATE)
  GROUP BY k.prompt_task_id
) k ON k.prompt_task_id = e.prompt_task_id
LEFT JOIN geo.execution_screenshots sc ON sc.prompt_task_id = e.prompt_task_id
WHERE e.date_time BETWEEN CAST($1 AS DATE) AND CAST($2 AS DATE)
  AND (e.rank_items IS DISTINCT FROM COALESCE(r.items, 0)
    OR e.valid_ranks IS DISTINCT FROM COALESCE(r.valid, 0)
    OR e.sources IS DISTINCT FROM COALESCE(s.n, 0)
    OR e.product_cards IS DISTINCT FROM COALESCE(k.n, 0)
    OR e.has_screenshot IS DISTINCT FROM (COALESCE(NULLIF(sc.screenshot_url, ''), NULLIF(e.screenshot_url, '')) IS NOT NULL))
ORDER BY 2, 3, 1
