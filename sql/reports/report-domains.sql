-- HTML report: the most cited domains (filter marker: see report-brand-ranks.sql; the limit is $1).
SELECT domain,
       CAST(SUM(citations) AS BIGINT) AS citations,
       CAST(SUM(executions_citing) AS BIGINT) AS executions_citing
FROM geo.citation_domains_daily
WHERE TRUE {{filter}}
GROUP BY domain
ORDER BY citations DESC, domain
LIMIT $1
