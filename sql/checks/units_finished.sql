-- Every unit of the range finished: each platform task, on each day of the range from the first
-- day the warehouse knows it (a checkpoint, an execution or a failure), has a checkpoint, and no
-- failure newer than it. $1 and $2 are the range's first and last day.
--
-- Only while the task is still synced: platform_tasks rows are never deleted, so a task that left
-- the sync scope (its monitoring task ended, or the key lost it) would otherwise fail every day
-- after it left, forever. A task is still synced when the latest successful run that resolved the
-- scope (kind sync, backfill, schedule or demo, not a job attempt; see freshness.sql) wrote
-- its platform_tasks row (synced_at, which every upsert sets, is not before that run started).
-- A task it did not write is required only up to the last day the warehouse knows it (its last
-- checkpoint, execution or failure). So a run scoped to some customers leaves the others' tasks
-- checked up to their last known day, and a task still synced is checked through the range's end.
WITH days AS (
  SELECT CAST(CAST($1 AS DATE) + CAST(g.i AS INTEGER) AS DATE) AS day
  FROM generate_series(0, CAST($2 AS DATE) - CAST($1 AS DATE)) AS g(i)
),
known AS (
  SELECT task_id, min(date) AS first_day, max(date) AS last_day FROM (
    SELECT task_id, date FROM geo.sync_checkpoints
    UNION ALL SELECT task_id, date_time FROM geo.prompt_executions
    UNION ALL SELECT task_id, date FROM geo.sync_unit_failures
  ) u
  GROUP BY task_id
),
latest_scope AS (
  SELECT max(started_at) AS started_at FROM geo.sync_runs
  WHERE status = 'success' AND kind IN ('sync', 'backfill', 'schedule', 'demo') AND (args -> 'job') IS NULL
)
SELECT p.task_id, d.day AS date,
  CASE WHEN c.task_id IS NULL THEN 'no checkpoint' ELSE 'failed after its checkpoint' END AS state,
  f.error AS last_error
FROM geo.platform_tasks p
JOIN known k ON k.task_id = p.task_id
CROSS JOIN days d
CROSS JOIN latest_scope l
LEFT JOIN geo.sync_checkpoints c ON c.task_id = p.task_id AND c.date = d.day
LEFT JOIN geo.sync_unit_failures f ON f.task_id = p.task_id AND f.date = d.day
WHERE d.day >= k.first_day
  -- started_at is the app host's clock, synced_at the database's: five minutes of skew allowed.
  AND (d.day <= k.last_day OR p.synced_at >= l.started_at - INTERVAL '5 minutes')
  AND (c.task_id IS NULL OR f.failed_at > c.finished_at)
ORDER BY 2, 1
