-- HTML report: citations of the brands' own sites (owned) and of third parties, per platform.
SELECT platform_name, owned, CAST(SUM(citations) AS BIGINT) AS citations
FROM geo.citations_daily
WHERE TRUE {{filter}}
GROUP BY platform_name, owned
ORDER BY platform_name, owned
