-- HTML report: average valid rank per platform (engine), day and brand. The filter marker becomes
-- `AND ...` conditions on date and customer_id made of `$n` placeholders only (src/report/queries.ts).
SELECT engine,
       CAST(date AS VARCHAR) AS date,
       brand,
       CAST(SUM(valid_ranks) AS BIGINT) AS valid_ranks,
       CAST(SUM(avg_position * valid_ranks) / SUM(valid_ranks) AS DOUBLE PRECISION) AS avg_position
FROM geo.brand_rank_daily
WHERE valid_ranks > 0 {{filter}}
GROUP BY engine, date, brand
ORDER BY engine, date, brand
