-- The views as geo-sync 34f2257 defined them (before the per-day aggregates): every measure computed from the raw
-- rows at each query. The dashboards scenario creates them in schema bench_raw to time the same
-- queries before and after (bench/dashboards.ts). Verbatim but for comments.
-- BI views, re-created by every migrate (after the migrations). Same names, columns and
-- semantics as sql/postgres/views.sql.
--
-- Table names inside the views are unqualified on purpose: DuckDB binds a view's body in the
-- view's own catalog and schema, so the views keep working however the file is opened. A
-- qualified `geo.<table>` would be ambiguous when the file is opened directly as `geo.duckdb`
-- (catalog `geo` and schema `geo`).

-- Per day, platform task and brand: how the brand ranked in that day's executions of the task.
-- appearances: rank_details items naming the brand; valid_ranks: those with a real position
-- (NULL positions are empty or <= 0 ranks, spec 2.5 rule 2); executions: the day's executions
-- of the task; rank_share: share of those executions in which the brand has a valid rank.
CREATE OR REPLACE VIEW geo.brand_rank_daily AS
WITH day_executions AS (
  SELECT date_time, task_id, count(*) AS executions
  FROM prompt_executions
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
  avg(CAST(r.position AS DOUBLE)) AS avg_position,
  min(r.position) AS best_position,
  d.executions,
  CAST(count(DISTINCT r.prompt_task_id) FILTER (WHERE r.position IS NOT NULL) AS DOUBLE)
    / d.executions AS rank_share
FROM execution_ranks r
JOIN prompt_executions e ON e.prompt_task_id = r.prompt_task_id
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
FROM execution_sources s
JOIN prompt_executions e ON e.prompt_task_id = s.prompt_task_id
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
FROM prompt_executions
GROUP BY date_time, customer_id, project_id, task_id, engine, model;

-- ---- The modelled layer: what GEO teams ask, by name. Every column is described in
-- the data dictionary (src/load/dictionary.ts; docs/data-dictionary.md), applied as COMMENT ON.

-- One row per execution, with the names people filter by and its counts of children.
CREATE OR REPLACE VIEW geo.executions_enriched AS
SELECT
  e.prompt_task_id,
  e.date_time AS date,
  CAST(date_trunc('week', e.date_time) AS DATE) AS week_start,
  strftime(e.date_time, '%G-W%V') AS iso_week,
  e.customer_id,
  e.project_id,
  m.project_name AS monitoring_task_name,
  m.brand_desc_list AS brands,
  e.task_id,
  p.model_key,
  p.model_name AS platform_name,
  e.engine,
  e.model,
  e.prompt_name AS question,
  e.hours,
  e.result_status,
  e.result_status = 'available' AS has_answer,
  COALESCE(NULLIF(sc.screenshot_url, ''), NULLIF(e.screenshot_url, '')) IS NOT NULL AS has_screenshot,
  COALESCE(r.rank_items, 0) AS rank_items,
  COALESCE(r.valid_ranks, 0) AS valid_ranks,
  COALESCE(s.sources, 0) AS sources,
  COALESCE(c.product_cards, 0) AS product_cards
FROM prompt_executions e
LEFT JOIN monitoring_tasks m ON m.project_id = e.project_id
LEFT JOIN platform_tasks p ON p.task_id = e.task_id
LEFT JOIN execution_screenshots sc ON sc.prompt_task_id = e.prompt_task_id
LEFT JOIN (SELECT prompt_task_id, count(*) AS rank_items, count(position) AS valid_ranks
           FROM execution_ranks GROUP BY prompt_task_id) r ON r.prompt_task_id = e.prompt_task_id
LEFT JOIN (SELECT prompt_task_id, count(*) AS sources
           FROM execution_sources GROUP BY prompt_task_id) s ON s.prompt_task_id = e.prompt_task_id
LEFT JOIN (SELECT prompt_task_id, count(*) AS product_cards
           FROM product_cards GROUP BY prompt_task_id) c ON c.prompt_task_id = e.prompt_task_id;

-- One row per execution and brand it names: the brand's best valid position in that answer
-- (NULL when none of its items has one), and sums for averaging its items' visibility and score.
-- The execution's day and platform task are grouping columns (added last, so an existing view can
-- be replaced): the brand views join on (prompt_task_id, date), so a filter on the day reaches
-- the grouping instead of grouping every rank item first. A rank item without its execution (the
-- children_have_execution check reports it) keeps its row, with NULL date and task_id.
CREATE OR REPLACE VIEW geo.execution_brand_ranks AS
SELECT
  r.prompt_task_id,
  r.brand,
  count(*) AS rank_items,
  count(r.position) AS valid_rank_items,
  min(r.position) AS best_position,
  CAST(sum(r.visibility) AS BIGINT) AS visibility_sum,
  count(r.visibility) AS visibility_items,
  CAST(sum(r.score) AS BIGINT) AS score_sum,
  count(r.score) AS score_items,
  e.date_time AS date,
  e.task_id
FROM execution_ranks r
LEFT JOIN prompt_executions e ON e.prompt_task_id = r.prompt_task_id
GROUP BY r.prompt_task_id, r.brand, e.date_time, e.task_id;

-- Per day, monitoring task, platform task and brand: in how many of the day's executions the
-- brand has a valid rank, where, and how often first or in the top 3. Every average here and
-- below is an average of doubles, on both warehouses: PostgreSQL's avg() of an integer is a
-- numeric, rounded otherwise than DuckDB's double (30/11 differed in the last digit).
CREATE OR REPLACE VIEW geo.brand_visibility_daily AS
WITH runs AS (
  SELECT date, task_id, count(*) AS executions FROM executions_enriched GROUP BY date, task_id
)
SELECT
  x.date, x.customer_id, x.project_id, x.monitoring_task_name, x.task_id, x.model_key, x.platform_name,
  b.brand,
  r.executions,
  count(b.best_position) AS executions_ranked,
  CAST(count(b.best_position) AS DOUBLE) / r.executions AS visibility_rate,
  avg(CAST(b.best_position AS DOUBLE)) AS avg_position,
  min(b.best_position) AS best_position,
  CAST(count(*) FILTER (WHERE b.best_position = 1) AS DOUBLE) / r.executions AS top1_rate,
  CAST(count(*) FILTER (WHERE b.best_position <= 3) AS DOUBLE) / r.executions AS top3_rate,
  CAST(sum(b.visibility_sum) AS DOUBLE) / NULLIF(sum(b.visibility_items), 0) AS avg_visibility,
  CAST(sum(b.score_sum) AS DOUBLE) / NULLIF(sum(b.score_items), 0) AS avg_score
FROM execution_brand_ranks b
JOIN executions_enriched x ON x.prompt_task_id = b.prompt_task_id AND x.date = b.date
JOIN runs r ON r.date = x.date AND r.task_id = x.task_id
GROUP BY x.date, x.customer_id, x.project_id, x.monitoring_task_name, x.task_id, x.model_key, x.platform_name,
  b.brand, r.executions;

-- The same per ISO week (Monday to Sunday of Shanghai days).
CREATE OR REPLACE VIEW geo.brand_visibility_weekly AS
WITH runs AS (
  SELECT week_start, task_id, count(*) AS executions FROM executions_enriched GROUP BY week_start, task_id
)
SELECT
  x.week_start, x.iso_week, x.customer_id, x.project_id, x.monitoring_task_name, x.task_id, x.model_key,
  x.platform_name,
  b.brand,
  r.executions,
  count(b.best_position) AS executions_ranked,
  CAST(count(b.best_position) AS DOUBLE) / r.executions AS visibility_rate,
  avg(CAST(b.best_position AS DOUBLE)) AS avg_position,
  min(b.best_position) AS best_position,
  CAST(count(*) FILTER (WHERE b.best_position = 1) AS DOUBLE) / r.executions AS top1_rate,
  CAST(count(*) FILTER (WHERE b.best_position <= 3) AS DOUBLE) / r.executions AS top3_rate,
  CAST(sum(b.visibility_sum) AS DOUBLE) / NULLIF(sum(b.visibility_items), 0) AS avg_visibility,
  CAST(sum(b.score_sum) AS DOUBLE) / NULLIF(sum(b.score_items), 0) AS avg_score
FROM execution_brand_ranks b
JOIN executions_enriched x ON x.prompt_task_id = b.prompt_task_id AND x.date = b.date
JOIN runs r ON r.week_start = x.week_start AND r.task_id = x.task_id
GROUP BY x.week_start, x.iso_week, x.customer_id, x.project_id, x.monitoring_task_name, x.task_id, x.model_key,
  x.platform_name, b.brand, r.executions;

-- Per day, monitoring task, platform task and brand: the brand's share of all valid rank items
-- of that platform task on that day (share of voice; NULL when the day has none), and its rank
-- among the brands by it (NULL when the brand has no valid rank item that day).
CREATE OR REPLACE VIEW geo.brand_share_of_voice_daily AS
WITH items AS (
  SELECT
    x.date, x.customer_id, x.project_id, x.monitoring_task_name, x.task_id, x.model_key, x.platform_name,
    b.brand,
    CAST(sum(b.valid_rank_items) AS BIGINT) AS valid_rank_items
  FROM execution_brand_ranks b
  JOIN executions_enriched x ON x.prompt_task_id = b.prompt_task_id AND x.date = b.date
  GROUP BY x.date, x.customer_id, x.project_id, x.monitoring_task_name, x.task_id, x.model_key, x.platform_name,
    b.brand
)
SELECT
  i.*,
  CAST(sum(i.valid_rank_items) OVER (PARTITION BY i.date, i.task_id) AS BIGINT) AS all_valid_rank_items,
  CAST(i.valid_rank_items AS DOUBLE)
    / NULLIF(sum(i.valid_rank_items) OVER (PARTITION BY i.date, i.task_id), 0) AS share_of_voice,
  -- Ranked only among the brands with valid items (those with none sort last, so their rows
  -- change no other brand's rank): NULL for a brand without any, as on a day without valid ranks.
  CASE WHEN i.valid_rank_items > 0
    THEN rank() OVER (PARTITION BY i.date, i.task_id ORDER BY i.valid_rank_items DESC) END AS brand_rank
FROM items i;

-- The hosts of each monitoring task's brand_urls, normalised for own-site matching: lower case,
-- surrounding blanks, scheme, user@, :port, path, a leading "www." and trailing dots dropped.
-- citations_daily normalises each cited domain with the same expression (keep the two alike).
CREATE OR REPLACE VIEW geo.monitoring_task_hosts AS
SELECT DISTINCT
  m.project_id,
  regexp_replace(
    regexp_replace(lower(u.url), '(?s)^\s*([a-z][a-z0-9+.-]*://)?([^/?#]*@)?([^/?#:\s]*).*$', '\3'),
    '^www\.|\.+$', '', 'g') AS host
FROM monitoring_tasks m
CROSS JOIN unnest(
  CASE WHEN json_type(m.brand_urls) = 'ARRAY' THEN json_extract_string(m.brand_urls, '$[*]') ELSE [] END) AS u(url);

-- Per day, monitoring task, platform task and cited domain: citations, executions citing it, its
-- share of the day's citations of that platform task, and whether it is the brand's own site
-- (`owned`: the domain, normalised as monitoring_task_hosts normalises the brand_urls, is or is
-- below one of the monitoring task's hosts). The one place `owned` is decided: citations_weekly
-- sums these rows.
CREATE OR REPLACE VIEW geo.citations_daily AS
WITH cites AS (
  SELECT
    x.date, x.customer_id, x.project_id, x.monitoring_task_name, x.task_id, x.model_key, x.platform_name,
    s.domain,
    count(*) AS citations,
    count(DISTINCT s.prompt_task_id) AS executions_citing
  FROM execution_sources s
  JOIN executions_enriched x ON x.prompt_task_id = s.prompt_task_id
  GROUP BY x.date, x.customer_id, x.project_id, x.monitoring_task_name, x.task_id, x.model_key, x.platform_name,
    s.domain
),
sites AS (
  SELECT
    c.*,
    regexp_replace(
      regexp_replace(lower(c.domain), '(?s)^\s*([a-z][a-z0-9+.-]*://)?([^/?#]*@)?([^/?#:\s]*).*$', '\3'),
      '^www\.|\.+$', '', 'g') AS site
  FROM cites c
)
SELECT
  c.date, c.customer_id, c.project_id, c.monitoring_task_name, c.task_id, c.model_key, c.platform_name,
  c.domain, c.citations, c.executions_citing,
  CAST(c.citations AS DOUBLE) / sum(c.citations) OVER (PARTITION BY c.date, c.task_id) AS citation_share,
  EXISTS (
    SELECT 1 FROM monitoring_task_hosts h
    WHERE h.project_id = c.project_id AND h.host <> ''
      AND (c.site = h.host OR right(c.site, length(h.host) + 1) = '.' || h.host)
  ) AS owned
FROM sites c;

-- The same per ISO week, summed from citations_daily (an execution has one day, so the days'
-- executions_citing add up to the week's; `owned` depends on the domain and monitoring task only).
CREATE OR REPLACE VIEW geo.citations_weekly AS
WITH cites AS (
  SELECT
    CAST(date_trunc('week', d.date) AS DATE) AS week_start,
    strftime(d.date, '%G-W%V') AS iso_week,
    d.customer_id, d.project_id, d.monitoring_task_name, d.task_id, d.model_key, d.platform_name,
    d.domain,
    CAST(sum(d.citations) AS BIGINT) AS citations,
    CAST(sum(d.executions_citing) AS BIGINT) AS executions_citing,
    d.owned
  FROM citations_daily d
  GROUP BY CAST(date_trunc('week', d.date) AS DATE), strftime(d.date, '%G-W%V'), d.customer_id, d.project_id,
    d.monitoring_task_name, d.task_id, d.model_key, d.platform_name, d.domain, d.owned
)
SELECT
  c.week_start, c.iso_week, c.customer_id, c.project_id, c.monitoring_task_name, c.task_id, c.model_key,
  c.platform_name, c.domain, c.citations, c.executions_citing,
  CAST(c.citations AS DOUBLE) / sum(c.citations) OVER (PARTITION BY c.week_start, c.task_id) AS citation_share,
  c.owned
FROM cites c;

-- Per question text, platform task, brand and day: over that day's runs of the question (one
-- question can run several times a day), in how many the brand has a valid rank, its best and
-- its average position (of each run's best).
CREATE OR REPLACE VIEW geo.question_rank_daily AS
WITH runs AS (
  SELECT date, task_id, question, count(*) AS runs
  FROM executions_enriched GROUP BY date, task_id, question
)
SELECT
  x.date, x.customer_id, x.project_id, x.monitoring_task_name, x.task_id, x.model_key, x.platform_name,
  x.question,
  b.brand,
  q.runs,
  count(b.best_position) AS runs_ranked,
  min(b.best_position) AS best_position,
  avg(CAST(b.best_position AS DOUBLE)) AS avg_position
FROM execution_brand_ranks b
JOIN executions_enriched x ON x.prompt_task_id = b.prompt_task_id AND x.date = b.date
JOIN runs q ON q.date = x.date AND q.task_id = x.task_id AND q.question = x.question
GROUP BY x.date, x.customer_id, x.project_id, x.monitoring_task_name, x.task_id, x.model_key, x.platform_name,
  x.question, b.brand, q.runs;

-- Not of 34f2257: the views of the whole account, as a tile of the whole account computed them
-- before geo-sync kept them: the per-platform-task views above summed by day.
CREATE OR REPLACE VIEW geo.citations_account_daily AS
SELECT date, domain, CAST(sum(citations) AS BIGINT) AS citations,
  CAST(sum(executions_citing) AS BIGINT) AS executions_citing
FROM geo.citations_daily GROUP BY date, domain;

CREATE OR REPLACE VIEW geo.brand_visibility_account_daily AS
SELECT date, brand, CAST(sum(executions) AS BIGINT) AS executions,
  CAST(sum(executions_ranked) AS BIGINT) AS executions_ranked
FROM geo.brand_visibility_daily GROUP BY date, brand;
