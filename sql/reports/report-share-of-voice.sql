-- HTML report: each platform's valid rank items per brand over the report's days (share of voice
-- is each brand's part of its platform's total). Brands without a valid rank item on these days
-- are left out: they have no voice to share. Filter marker: see report-brand-ranks.sql.
SELECT platform_name, brand, CAST(SUM(valid_rank_items) AS BIGINT) AS items
FROM geo.brand_share_of_voice_daily
WHERE TRUE {{filter}}
GROUP BY platform_name, brand
HAVING SUM(valid_rank_items) > 0
ORDER BY platform_name, items DESC, brand
