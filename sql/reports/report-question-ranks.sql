-- HTML report: per question and brand over the report's days: runs, runs in which the brand has a
-- valid rank, its best position and its average position (each run's best, weighted by runs).
-- runs counts every run of the question on the platform tasks where the brand is named at least
-- once in the range, from executions_enriched: question_rank_daily has rows only for the days the
-- brand is named, so summing its runs would leave out the runs of the other days. The filter
-- marker (see report-brand-ranks.sql) appears twice, with the same parameters.
WITH cells AS (
  SELECT question, brand, task_id,
         SUM(runs_ranked) AS runs_ranked,
         MIN(best_position) AS best_position,
         SUM(avg_position * runs_ranked) AS position_sum
  FROM geo.question_rank_daily
  WHERE TRUE {{filter}}
  GROUP BY question, brand, task_id
),
runs AS (
  SELECT question, task_id, count(*) AS runs
  FROM geo.executions_enriched
  WHERE TRUE {{filter}}
  GROUP BY question, task_id
)
SELECT c.question, c.brand,
       CAST(SUM(r.runs) AS BIGINT) AS runs,
       CAST(SUM(c.runs_ranked) AS BIGINT) AS runs_ranked,
       MIN(c.best_position) AS best_position,
       CAST(SUM(c.position_sum) AS DOUBLE PRECISION) / NULLIF(SUM(c.runs_ranked), 0) AS avg_position
FROM cells c
JOIN runs r ON r.question = c.question AND r.task_id = c.task_id
GROUP BY c.question, c.brand
ORDER BY c.question, c.brand
