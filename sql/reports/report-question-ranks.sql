-- HTML report: per question and brand over the report's days: runs, runs in which the brand has a
-- valid rank, its best position and its average position (each run's best, weighted by runs).
SELECT question, brand,
       CAST(SUM(runs) AS BIGINT) AS runs,
       CAST(SUM(runs_ranked) AS BIGINT) AS runs_ranked,
       MIN(best_position) AS best_position,
       CAST(SUM(avg_position * runs_ranked) AS DOUBLE PRECISION) / NULLIF(SUM(runs_ranked), 0) AS avg_position
FROM geo.question_rank_daily
WHERE TRUE {{filter}}
GROUP BY question, brand
ORDER BY question, brand
