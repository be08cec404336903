-- No execution of the range without its platform task: executions whose task_id is not in
-- platform_tasks (their names and model keys would be missing from every view). One row per task.
SELECT e.task_id, count(*) AS executions, min(e.date_time) AS first_date, max(e.date_time) AS last_date
FROM geo.prompt_executions e
WHERE e.date_time BETWEEN CAST($1 AS DATE) AND CAST($2 AS DATE)
  AND NOT EXISTS (SELECT 1 FROM geo.platform_tasks p WHERE p.task_id = e.task_id)
GROUP BY e.task_id
ORDER BY 1
