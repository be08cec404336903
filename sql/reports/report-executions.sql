-- HTML report: executions per day, and how many have no answer (filter marker: see report-brand-ranks.sql).
SELECT CAST(date AS VARCHAR) AS date,
       CAST(SUM(executions) AS BIGINT) AS executions,
       CAST(SUM(missing) AS BIGINT) AS missing
FROM geo.executions_daily
WHERE TRUE {{filter}}
GROUP BY date
ORDER BY date
