-- BI views, re-created by every migrate (after the migrations). Same names, columns and
-- semantics as sql/duckdb/views.sql.

-- Per day, platform task and brand: how the brand ranked in that day's executions of the task.
-- appearances: rank_details items naming the brand; valid_ranks: those with a real position
-- (NULL positions are empty or <= 0 ranks, spec 2.5 rule 2); executions: the day's executions
-- of the task; rank_share: share of those executions in which the brand has a valid rank.
CREATE OR REPLACE VIEW geo.brand_rank_daily AS
WITH day_executions AS (
  SELECT date_time, task_id, count(*) AS executions
  FROM geo.prompt_executions
  GROUP BY date_time, task_id
)
SELECT
  e.date_time AS date,
  e.customer_id,
  e.project_id,
  e.task_id,
  e.engine,
  e.model,
  r.brand,
  count(*) AS appearances,
  count(r.position) AS valid_ranks,
  CAST(avg(r.position) AS DOUBLE PRECISION) AS avg_position,
  min(r.position) AS best_position,
  d.executions,
  CAST(count(DISTINCT r.prompt_task_id) FILTER (WHERE r.position IS NOT NULL) AS DOUBLE PRECISION)
    / d.executions AS rank_share
FROM geo.execution_ranks r
JOIN geo.prompt_executions e ON e.prompt_task_id = r.prompt_task_id
JOIN day_executions d ON d.date_time = e.date_time AND d.task_id = e.task_id
GROUP BY e.date_time, e.customer_id, e.project_id, e.task_id, e.engine, e.model, r.brand, d.executions;

-- Per day, platform task and cited domain: source rows and executions citing it.
CREATE OR REPLACE VIEW geo.citation_domains_daily AS
SELECT
  e.date_time AS date,
  e.customer_id,
  e.project_id,
  e.task_id,
  s.domain,
  count(*) AS citations,
  count(DISTINCT s.prompt_task_id) AS executions_citing
FROM geo.execution_sources s
JOIN geo.prompt_executions e ON e.prompt_task_id = s.prompt_task_id
GROUP BY e.date_time, e.customer_id, e.project_id, e.task_id, s.domain;

-- Per day and platform task: executions, with and without an answer.
CREATE OR REPLACE VIEW geo.executions_daily AS
SELECT
  date_time AS date,
  customer_id,
  project_id,
  task_id,
  engine,
  model,
  count(*) AS executions,
  count(*) FILTER (WHERE result_status = 'available') AS available,
  count(*) FILTER (WHERE result_status = 'missing') AS missing
FROM geo.prompt_executions
GROUP BY date_time, customer_id, project_id, task_id, engine, model;
