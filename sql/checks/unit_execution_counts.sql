-- Each finished unit of the range holds as many executions as its task/results listing reported
-- when it was read (sync_checkpoints.listed_total; units closed before it was kept are skipped).
SELECT c.task_id, c.date, c.listed_total, count(e.prompt_task_id) AS stored
FROM geo.sync_checkpoints c
LEFT JOIN geo.prompt_executions e ON e.task_id = c.task_id AND e.date_time = c.date
WHERE c.date BETWEEN CAST($1 AS DATE) AND CAST($2 AS DATE) AND c.listed_total IS NOT NULL
GROUP BY c.task_id, c.date, c.listed_total
HAVING count(e.prompt_task_id) <> c.listed_total
ORDER BY 2, 1
