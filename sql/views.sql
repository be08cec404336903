-- BI views, re-created by every migrate (after the migrations): one definition for both
-- warehouses. src/load/views.ts renders it per dialect: @double is the double type, @iso_week(d)
-- an ISO week `YYYY-Www`, @site(x) a host normalised for own-site matching,
-- @json_array_texts(j, alias) the text elements of a JSON array; on DuckDB the tables inside a
-- view are named unqualified (DuckDB binds a view's body in the view's own catalog and schema, so
-- the views work however the file is opened; `geo.<table>` would be ambiguous in a file named
-- geo.duckdb).
--
-- The dashboards' views read the per-day aggregates (geo.rollup_*: the grain these views group by,
-- refreshed by the sync for the units its writes marked stale; src/load/core/rollups.ts says what
-- a reader sees during a run), never every raw row: a filter on the
-- day, the monitoring task (project_id), the platform task (task_id), a brand or a domain
-- reaches those tables' indexes. Rates and averages are computed here from stored counts and
-- sums. Names (monitoring task, platform) are joined at query time, so a rename shows at once.
--
-- No view groups or windows anything before a filter applies: each denominator (a platform
-- task's executions, valid rank items or citations of a day or week) is looked up in
-- rollup_executions_daily for each row a query keeps, by (day or week, project_id, task_id), an
-- index of that table (a LATERAL join where the row uses it more than once, so it is looked up
-- once; a scalar subquery where once, so a query that does not ask for it skips it). A platform
-- task belongs to one monitoring task: that is its day.

-- Per day, platform task and brand: how the brand ranked in that day's executions of the task.
-- appearances: rank_details items naming the brand; valid_ranks: those with a real position
-- (NULL positions are empty or <= 0 ranks, spec 2.5 rule 2); executions: the day's executions
-- of the task; rank_share: share of those executions in which the brand has a valid rank.
CREATE OR REPLACE VIEW geo.brand_rank_daily AS
SELECT
  b.date,
  b.customer_id,
  b.project_id,
  b.task_id,
  b.engine,
  b.model,
  b.brand,
  b.rank_items AS appearances,
  b.valid_rank_items AS valid_ranks,
  CAST(b.position_sum AS @double) / NULLIF(b.valid_rank_items, 0) AS avg_position,
  b.best_position,
  b.executions,
  CAST(b.executions_ranked AS @double) / b.executions AS rank_share
FROM (
  SELECT r.*, d.executions
  FROM geo.rollup_brands_daily r
  CROSS JOIN LATERAL (
    SELECT CAST(sum(t.executions) AS BIGINT) AS executions FROM geo.rollup_executions_daily t
    WHERE t.date = r.date AND t.project_id = r.project_id AND t.task_id = r.task_id
  ) d
) b;

-- Per day, platform task and cited domain: source rows and executions citing it.
CREATE OR REPLACE VIEW geo.citation_domains_daily AS
SELECT date, customer_id, project_id, task_id, domain, citations, executions_citing
FROM geo.rollup_domains_daily;

-- Per day and platform task: executions, with and without an answer.
CREATE OR REPLACE VIEW geo.executions_daily AS
SELECT date, customer_id, project_id, task_id, engine, model, executions, available, missing
FROM geo.rollup_executions_daily;

-- ---- The modelled layer: what GEO teams ask, by name. Every column is described in
-- the data dictionary (src/load/dictionary.ts; docs/data-dictionary.md), applied as COMMENT ON.

-- One row per execution, with the names people filter by and its counts of children (kept on
-- the execution's own row by the writer, so a month of executions reads no child table).
CREATE OR REPLACE VIEW geo.executions_enriched AS
SELECT
  e.prompt_task_id,
  e.date_time AS date,
  CAST(date_trunc('week', e.date_time) AS DATE) AS week_start,
  @iso_week(e.date_time) AS iso_week,
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
  e.has_screenshot,
  CAST(e.rank_items AS BIGINT) AS rank_items,
  CAST(e.valid_ranks AS BIGINT) AS valid_ranks,
  CAST(e.sources AS BIGINT) AS sources,
  CAST(e.product_cards AS BIGINT) AS product_cards
FROM geo.prompt_executions e
LEFT JOIN geo.monitoring_tasks m ON m.project_id = e.project_id
LEFT JOIN geo.platform_tasks p ON p.task_id = e.task_id;

-- One row per execution and brand it names: the brand's best valid position in that answer
-- (NULL when none of its items has one), and sums for averaging its items' visibility and score.
-- The execution's day and platform task are grouping columns (added last, so an existing view can
-- be replaced). A rank item without its execution (the children_have_execution check reports it)
-- keeps its row, with NULL date and task_id. Built from the raw rows: the building block for
-- questions of one's own (geo.rollup_brands_daily holds its sums per day).
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
FROM geo.execution_ranks r
LEFT JOIN geo.prompt_executions e ON e.prompt_task_id = r.prompt_task_id
GROUP BY r.prompt_task_id, r.brand, e.date_time, e.task_id;

-- Per day, monitoring task, platform task and brand: in how many of the day's executions the
-- brand has a valid rank, where (avg_position: of each answer's best valid position), and how
-- often first or in the top 3. Every average is a double divided on both warehouses alike.
CREATE OR REPLACE VIEW geo.brand_visibility_daily AS
SELECT
  b.date, b.customer_id, b.project_id, m.project_name AS monitoring_task_name, b.task_id, p.model_key,
  p.model_name AS platform_name,
  b.brand,
  b.executions,
  b.executions_ranked,
  CAST(b.executions_ranked AS @double) / b.executions AS visibility_rate,
  CAST(b.best_position_sum AS @double) / NULLIF(b.executions_ranked, 0) AS avg_position,
  b.best_position,
  CAST(b.top1_executions AS @double) / b.executions AS top1_rate,
  CAST(b.top3_executions AS @double) / b.executions AS top3_rate,
  CAST(b.visibility_sum AS @double) / NULLIF(b.visibility_items, 0) AS avg_visibility,
  CAST(b.score_sum AS @double) / NULLIF(b.score_items, 0) AS avg_score
FROM (
  SELECT g.*, d.executions
  FROM (
    SELECT date, customer_id, project_id, task_id, brand,
    CAST(sum(executions_ranked) AS BIGINT) AS executions_ranked,
    CAST(sum(best_position_sum) AS BIGINT) AS best_position_sum,
    min(best_position) AS best_position,
    CAST(sum(top1_executions) AS BIGINT) AS top1_executions,
    CAST(sum(top3_executions) AS BIGINT) AS top3_executions,
    CAST(sum(visibility_sum) AS BIGINT) AS visibility_sum,
    CAST(sum(visibility_items) AS BIGINT) AS visibility_items,
    CAST(sum(score_sum) AS BIGINT) AS score_sum,
    CAST(sum(score_items) AS BIGINT) AS score_items
    FROM geo.rollup_brands_daily
    GROUP BY date, customer_id, project_id, task_id, brand
  ) g
  CROSS JOIN LATERAL (
    SELECT CAST(sum(t.executions) AS BIGINT) AS executions FROM geo.rollup_executions_daily t
    WHERE t.date = g.date AND t.project_id = g.project_id AND t.task_id = g.task_id
  ) d
) b
LEFT JOIN geo.monitoring_tasks m ON m.project_id = b.project_id
LEFT JOIN geo.platform_tasks p ON p.task_id = b.task_id;

-- Per day and brand over the whole account: brand_visibility_daily summed over its platform
-- tasks (its `executions` too: the days of the platform tasks that name the brand), read from
-- the account's aggregate, a day's brands, where summing brand_visibility_daily reads every
-- platform task's. The same figures as that sum.
CREATE OR REPLACE VIEW geo.brand_visibility_account_daily AS
SELECT
  b.date,
  b.brand,
  b.executions,
  b.executions_ranked,
  CAST(b.executions_ranked AS @double) / b.executions AS visibility_rate,
  CAST(b.best_position_sum AS @double) / NULLIF(b.executions_ranked, 0) AS avg_position,
  b.best_position,
  CAST(b.top1_executions AS @double) / b.executions AS top1_rate,
  CAST(b.top3_executions AS @double) / b.executions AS top3_rate,
  CAST(b.visibility_sum AS @double) / NULLIF(b.visibility_items, 0) AS avg_visibility,
  CAST(b.score_sum AS @double) / NULLIF(b.score_items, 0) AS avg_score
FROM geo.rollup_brands_account_daily b;

-- The same per ISO week (Monday to Sunday of Shanghai days), summed from the days: every count
-- is of executions, and an execution has one day.
CREATE OR REPLACE VIEW geo.brand_visibility_weekly AS
SELECT
  b.week_start, @iso_week(b.week_start) AS iso_week, b.customer_id, b.project_id,
  m.project_name AS monitoring_task_name, b.task_id, p.model_key, p.model_name AS platform_name,
  b.brand,
  b.executions,
  b.executions_ranked,
  CAST(b.executions_ranked AS @double) / b.executions AS visibility_rate,
  CAST(b.best_position_sum AS @double) / NULLIF(b.executions_ranked, 0) AS avg_position,
  b.best_position,
  CAST(b.top1_executions AS @double) / b.executions AS top1_rate,
  CAST(b.top3_executions AS @double) / b.executions AS top3_rate,
  CAST(b.visibility_sum AS @double) / NULLIF(b.visibility_items, 0) AS avg_visibility,
  CAST(b.score_sum AS @double) / NULLIF(b.score_items, 0) AS avg_score
FROM (
  SELECT g.*, d.executions
  FROM (
    SELECT week_start, customer_id, project_id, task_id, brand,
    CAST(sum(executions_ranked) AS BIGINT) AS executions_ranked,
    CAST(sum(best_position_sum) AS BIGINT) AS best_position_sum,
    min(best_position) AS best_position,
    CAST(sum(top1_executions) AS BIGINT) AS top1_executions,
    CAST(sum(top3_executions) AS BIGINT) AS top3_executions,
    CAST(sum(visibility_sum) AS BIGINT) AS visibility_sum,
    CAST(sum(visibility_items) AS BIGINT) AS visibility_items,
    CAST(sum(score_sum) AS BIGINT) AS score_sum,
    CAST(sum(score_items) AS BIGINT) AS score_items
    FROM geo.rollup_brands_daily
    GROUP BY week_start, customer_id, project_id, task_id, brand
  ) g
  CROSS JOIN LATERAL (
    SELECT CAST(sum(t.executions) AS BIGINT) AS executions FROM geo.rollup_executions_daily t
    WHERE t.week_start = g.week_start AND t.project_id = g.project_id AND t.task_id = g.task_id
  ) d
) b
LEFT JOIN geo.monitoring_tasks m ON m.project_id = b.project_id
LEFT JOIN geo.platform_tasks p ON p.task_id = b.task_id;

-- Per day, monitoring task, platform task and brand: the brand's share of all valid rank items
-- of that platform task on that day (share of voice; NULL when the day has none), and its rank
-- among the brands by it (NULL when the brand has no valid rank item that day). No window: the
-- day's total comes from rollup_executions_daily and the rank counts the brands ahead, so a filter
-- on a brand alone reaches the aggregates too.
CREATE OR REPLACE VIEW geo.brand_share_of_voice_daily AS
WITH items AS (
  SELECT date, customer_id, project_id, task_id, brand,
    CAST(sum(valid_rank_items) AS BIGINT) AS valid_rank_items
  FROM geo.rollup_brands_daily
  GROUP BY date, customer_id, project_id, task_id, brand
)
SELECT
  i.date, i.customer_id, i.project_id, m.project_name AS monitoring_task_name, i.task_id, p.model_key,
  p.model_name AS platform_name,
  i.brand, i.valid_rank_items,
  i.all_valid_rank_items,
  CAST(i.valid_rank_items AS @double) / NULLIF(i.all_valid_rank_items, 0) AS share_of_voice,
  -- rank() among the day's brands with valid items: 1 + the brands with more (ties share a rank).
  CASE WHEN i.valid_rank_items > 0 THEN 1 + (
    SELECT count(*) FROM (
      SELECT sum(o.valid_rank_items) AS valid_rank_items FROM geo.rollup_brands_daily o
      WHERE o.date = i.date AND o.project_id = i.project_id AND o.task_id = i.task_id
      GROUP BY o.customer_id, o.brand
    ) ahead WHERE ahead.valid_rank_items > i.valid_rank_items
  ) END AS brand_rank
FROM (
  SELECT g.*, d.all_valid_rank_items
  FROM items g
  CROSS JOIN LATERAL (
    SELECT CAST(sum(t.valid_rank_items) AS BIGINT) AS all_valid_rank_items FROM geo.rollup_executions_daily t
    WHERE t.date = g.date AND t.project_id = g.project_id AND t.task_id = g.task_id
  ) d
) i
LEFT JOIN geo.monitoring_tasks m ON m.project_id = i.project_id
LEFT JOIN geo.platform_tasks p ON p.task_id = i.task_id;

-- The hosts of each monitoring task's brand_urls, normalised for own-site matching: lower case,
-- surrounding blanks, scheme, user@, :port, path, a leading "www." and trailing dots dropped.
-- The aggregates' `owned` compares each cited domain, normalised alike, with these hosts.
CREATE OR REPLACE VIEW geo.monitoring_task_hosts AS
SELECT DISTINCT
  m.project_id,
  @site(u.url) AS host
FROM geo.monitoring_tasks m
CROSS JOIN @json_array_texts(m.brand_urls, u)
WHERE u.url IS NOT NULL;

-- Per day, monitoring task, platform task and cited domain: citations, executions citing it, its
-- share of the day's citations of that platform task, and whether it is the brand's own site
-- (`owned`: the domain, normalised as monitoring_task_hosts normalises the brand_urls, is or is
-- below one of the monitoring task's hosts; decided once per monitoring task and domain, and
-- decided again when the task's brand_urls change).
CREATE OR REPLACE VIEW geo.citations_daily AS
SELECT
  c.date, c.customer_id, c.project_id, m.project_name AS monitoring_task_name, c.task_id, p.model_key,
  p.model_name AS platform_name,
  c.domain, c.citations, c.executions_citing,
  -- The day's citations of the platform task, every domain's (not computed when not asked for).
  CAST(c.citations AS @double) / (
    SELECT CAST(sum(t.citations) AS BIGINT) FROM geo.rollup_executions_daily t
    WHERE t.date = c.date AND t.project_id = c.project_id AND t.task_id = c.task_id) AS citation_share,
  c.owned
FROM geo.rollup_domains_daily c
LEFT JOIN geo.monitoring_tasks m ON m.project_id = c.project_id
LEFT JOIN geo.platform_tasks p ON p.task_id = c.task_id;

-- Per day and cited domain over the whole account: citations_daily summed over its platform
-- tasks, read from the account's aggregate (a day's distinct domains), with the domain's share
-- of all the account's citations that day. `owned` is a monitoring task's: it is not here.
CREATE OR REPLACE VIEW geo.citations_account_daily AS
SELECT
  c.date, c.domain, c.citations, c.executions_citing,
  CAST(c.citations AS @double) / (
    SELECT CAST(sum(t.citations) AS BIGINT) FROM geo.rollup_executions_daily t WHERE t.date = c.date
  ) AS citation_share
FROM geo.rollup_domains_account_daily c;

-- The same per ISO week, summed from the days (an execution has one day, so the days'
-- executions_citing add up to the week's; `owned` depends on the domain and monitoring task only).
CREATE OR REPLACE VIEW geo.citations_weekly AS
WITH cites AS (
  SELECT week_start, customer_id, project_id, task_id, domain,
    CAST(sum(citations) AS BIGINT) AS citations,
    CAST(sum(executions_citing) AS BIGINT) AS executions_citing,
    owned
  FROM geo.rollup_domains_daily
  GROUP BY week_start, customer_id, project_id, task_id, domain, owned
)
SELECT
  c.week_start, @iso_week(c.week_start) AS iso_week, c.customer_id, c.project_id,
  m.project_name AS monitoring_task_name, c.task_id, p.model_key, p.model_name AS platform_name,
  c.domain, c.citations, c.executions_citing,
  CAST(c.citations AS @double) / (
    SELECT CAST(sum(t.citations) AS BIGINT) FROM geo.rollup_executions_daily t
    WHERE t.week_start = c.week_start AND t.project_id = c.project_id AND t.task_id = c.task_id
  ) AS citation_share,
  c.owned
FROM cites c
LEFT JOIN geo.monitoring_tasks m ON m.project_id = c.project_id
LEFT JOIN geo.platform_tasks p ON p.task_id = c.task_id;

-- Per question text, platform task, brand and day: over that day's runs of the question (one
-- question can run several times a day), in how many the brand has a valid rank, its best and
-- its average position (of each run's best).
CREATE OR REPLACE VIEW geo.question_rank_daily AS
SELECT
  q.date, q.customer_id, q.project_id, m.project_name AS monitoring_task_name, q.task_id, p.model_key,
  p.model_name AS platform_name,
  q.question,
  q.brand,
  q.runs,
  q.runs_ranked,
  q.best_position,
  CAST(q.best_position_sum AS @double) / NULLIF(q.runs_ranked, 0) AS avg_position
FROM geo.rollup_question_brands_daily q
LEFT JOIN geo.monitoring_tasks m ON m.project_id = q.project_id
LEFT JOIN geo.platform_tasks p ON p.task_id = q.task_id;
