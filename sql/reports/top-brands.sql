-- Top brands by average valid rank per platform (engine) over the synced days.
-- Portable SQL over the geo.brand_rank_daily view: runs on PostgreSQL and DuckDB alike.
SELECT engine,
       brand,
       SUM(valid_ranks) AS valid_ranks,
       ROUND(CAST(SUM(avg_position * valid_ranks) / NULLIF(SUM(valid_ranks), 0) AS NUMERIC), 2) AS avg_position,
       MIN(best_position) AS best_position
FROM geo.brand_rank_daily
WHERE valid_ranks > 0
GROUP BY engine, brand
HAVING SUM(valid_ranks) >= $1
ORDER BY engine, avg_position, valid_ranks DESC, brand
