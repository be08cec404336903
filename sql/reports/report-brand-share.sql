-- HTML report: per brand, the executions in which it has a valid rank, and all executions, over
-- the report's days and customers (filter marker: see report-brand-ranks.sql).
WITH ex AS (
  SELECT prompt_task_id
  FROM geo.prompt_executions
  WHERE TRUE {{filter}}
)
SELECT r.brand,
       CAST(COUNT(DISTINCT r.prompt_task_id) AS BIGINT) AS ranked,
       (SELECT CAST(COUNT(*) AS BIGINT) FROM ex) AS executions
FROM geo.execution_ranks r
JOIN ex ON ex.prompt_task_id = r.prompt_task_id
WHERE r.position IS NOT NULL
GROUP BY r.brand
ORDER BY ranked DESC, r.brand
