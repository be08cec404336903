-- No child row without its execution: ranks, sources, screenshots, product answers and cards
-- whose prompt_task_id is not in prompt_executions. One row per orphaned execution ID and table.
SELECT 'execution_ranks' AS table_name, c.prompt_task_id, count(*) AS orphan_rows
FROM geo.execution_ranks c
WHERE NOT EXISTS (SELECT 1 FROM geo.prompt_executions e WHERE e.prompt_task_id = c.prompt_task_id)
GROUP BY c.prompt_task_id
UNION ALL
SELECT 'execution_sources', c.prompt_task_id, count(*)
FROM geo.execution_sources c
WHERE NOT EXISTS (SELECT 1 FROM geo.prompt_executions e WHERE e.prompt_task_id = c.prompt_task_id)
GROUP BY c.prompt_task_id
UNION ALL
SELECT 'execution_screenshots', c.prompt_task_id, count(*)
FROM geo.execution_screenshots c
WHERE NOT EXISTS (SELECT 1 FROM geo.prompt_executions e WHERE e.prompt_task_id = c.prompt_task_id)
GROUP BY c.prompt_task_id
UNION ALL
SELECT 'execution_products', c.prompt_task_id, count(*)
FROM geo.execution_products c
WHERE NOT EXISTS (SELECT 1 FROM geo.prompt_executions e WHERE e.prompt_task_id = c.prompt_task_id)
GROUP BY c.prompt_task_id
UNION ALL
SELECT 'product_cards', c.prompt_task_id, count(*)
FROM geo.product_cards c
WHERE NOT EXISTS (SELECT 1 FROM geo.prompt_executions e WHERE e.prompt_task_id = c.prompt_task_id)
GROUP BY c.prompt_task_id
ORDER BY 1, 2
