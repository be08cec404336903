-- Every unit of the range finished: each platform task, on each day of the range from the first
-- day the warehouse knows it (a checkpoint, an execution or a failure), has a checkpoint, and no
-- failure newer than it. {{days}} is the range's days as parameters.
WITH days(day) AS (VALUES {{days}}),
first_seen AS (
  SELECT task_id, min(date) AS first_day FROM (
    SELECT task_id, date FROM geo.sync_checkpoints
    UNION ALL SELECT task_id, date_time FROM geo.prompt_executions
    UNION ALL SELECT task_id, date FROM geo.sync_unit_failures
  ) u
  GROUP BY task_id
)
SELECT p.task_id, d.day AS date,
  CASE WHEN c.task_id IS NULL THEN 'no checkpoint' ELSE 'failed after its checkpoint' END AS state,
  f.error AS last_error
FROM geo.platform_tasks p
JOIN first_seen s ON s.task_id = p.task_id
CROSS JOIN days d
LEFT JOIN geo.sync_checkpoints c ON c.task_id = p.task_id AND c.date = d.day
LEFT JOIN geo.sync_unit_failures f ON f.task_id = p.task_id AND f.date = d.day
WHERE d.day >= s.first_day
  AND (c.task_id IS NULL OR f.failed_at > c.finished_at)
ORDER BY 2, 1
