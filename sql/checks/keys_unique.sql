-- Keys unique: no two rows of a table share its key (the primary keys say so; this proves it to
-- a reader, as a modelled layer's uniqueness tests do). One row per duplicated key.
SELECT 'monitoring_tasks' AS table_name, CAST(project_id AS VARCHAR) AS key, count(*) AS copies
FROM geo.monitoring_tasks GROUP BY project_id HAVING count(*) > 1
UNION ALL
SELECT 'platform_tasks', CAST(task_id AS VARCHAR), count(*) FROM geo.platform_tasks GROUP BY task_id HAVING count(*) > 1
UNION ALL
SELECT 'prompt_executions', CAST(prompt_task_id AS VARCHAR), count(*)
FROM geo.prompt_executions GROUP BY prompt_task_id HAVING count(*) > 1
UNION ALL
SELECT 'execution_ranks', CAST(prompt_task_id AS VARCHAR) || '/' || CAST(ordinal AS VARCHAR), count(*)
FROM geo.execution_ranks GROUP BY prompt_task_id, ordinal HAVING count(*) > 1
UNION ALL
SELECT 'execution_sources', CAST(source_id AS VARCHAR), count(*)
FROM geo.execution_sources GROUP BY source_id HAVING count(*) > 1
UNION ALL
SELECT 'execution_screenshots', CAST(prompt_task_id AS VARCHAR), count(*)
FROM geo.execution_screenshots GROUP BY prompt_task_id HAVING count(*) > 1
UNION ALL
SELECT 'execution_products', CAST(prompt_task_id AS VARCHAR), count(*)
FROM geo.execution_products GROUP BY prompt_task_id HAVING count(*) > 1
UNION ALL
SELECT 'product_cards', CAST(prompt_task_id AS VARCHAR) || '/' || CAST(position AS VARCHAR), count(*)
FROM geo.product_cards GROUP BY prompt_task_id, position HAVING count(*) > 1
UNION ALL
SELECT 'site_diagnoses', diagnosis_id, count(*) FROM geo.site_diagnoses GROUP BY diagnosis_id HAVING count(*) > 1
UNION ALL
SELECT 'deductions', CAST(id AS VARCHAR), count(*) FROM geo.deductions GROUP BY id HAVING count(*) > 1
UNION ALL
SELECT 'sync_checkpoints', CAST(task_id AS VARCHAR) || '/' || CAST(date AS VARCHAR), count(*)
FROM geo.sync_checkpoints GROUP BY task_id, date HAVING count(*) > 1
ORDER BY 1, 2
