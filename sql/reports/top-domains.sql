-- Most cited domains over the synced days (citations and executions citing them).
SELECT domain,
       SUM(citations) AS citations,
       SUM(executions_citing) AS executions_citing
FROM geo.citation_domains_daily
GROUP BY domain
ORDER BY citations DESC, domain
LIMIT $1
