/**
 * The dashboard tiles the per-day aggregates were built for (the tiles of a large account's
 * BI dashboards), as a BI tool sends them: one query per tile over the
 * views (a tile of the whole account over the views of the whole account). `v` is the schema of the views queried: `geo` (now) or `bench_raw` (the views as they
 * were before the per-day aggregates, bench/dashboards/before-views.*.sql).
 */
export interface DashboardParams {
  /** The monitoring task with the most executions. */
  project_id: number;
  /** Its platform task with the most executions. */
  task_id: number;
  /** The last day of the year. */
  last: string;
}

export interface DashboardQuery {
  name: string;
  sql(v: string): string;
  params(p: DashboardParams): (string | number)[];
}

const day = (n: number) => `CAST($${n} AS DATE)`;

export const DASHBOARD_QUERIES: readonly DashboardQuery[] = [
  {
    name: 'top brands by visibility of one monitoring task, last 90 days',
    sql: (v) => `SELECT brand, sum(executions_ranked) * 1.0 / sum(executions) AS visibility_rate,
        min(best_position) AS best_position
      FROM ${v}.brand_visibility_daily WHERE project_id = $1 AND date > ${day(2)} - 90
      GROUP BY brand ORDER BY visibility_rate DESC, brand LIMIT 20`,
    params: (p) => [p.project_id, p.last],
  },
  {
    name: 'share of voice of one platform task, last 30 days',
    sql: (v) => `SELECT date, brand, share_of_voice, brand_rank FROM ${v}.brand_share_of_voice_daily
      WHERE task_id = $1 AND date > ${day(2)} - 30 ORDER BY date, brand`,
    params: (p) => [p.task_id, p.last],
  },
  {
    name: 'top cited domains of the whole account, last 30 days',
    sql: (v) => `SELECT domain, sum(citations) AS citations, sum(executions_citing) AS executions
      FROM ${v}.citations_account_daily WHERE date > ${day(1)} - 30
      GROUP BY domain ORDER BY citations DESC, domain LIMIT 20`,
    params: (p) => [p.last],
  },
  {
    name: 'weekly visibility of one monitoring task over the year',
    sql: (v) => `SELECT iso_week, platform_name, brand, visibility_rate, avg_position, top3_rate
      FROM ${v}.brand_visibility_weekly WHERE project_id = $1 ORDER BY iso_week, platform_name, brand`,
    params: (p) => [p.project_id],
  },
  {
    name: 'the account’s brand visibility, last 7 days',
    sql: (v) => `SELECT brand, sum(executions_ranked) * 1.0 / sum(executions) AS visibility_rate
      FROM ${v}.brand_visibility_account_daily WHERE date > ${day(1)} - 7
      GROUP BY brand ORDER BY visibility_rate DESC, brand`,
    params: (p) => [p.last],
  },
  {
    name: 'weekly own-site citations of one monitoring task over the year',
    sql: (v) => `SELECT iso_week, platform_name,
        sum(citations) FILTER (WHERE owned) * 1.0 / sum(citations) AS own_site_share
      FROM ${v}.citations_weekly WHERE project_id = $1 GROUP BY iso_week, platform_name ORDER BY 1, 2`,
    params: (p) => [p.project_id],
  },
  {
    name: 'question ranks of one platform task, last 30 days',
    sql: (v) => `SELECT question, brand, sum(runs_ranked) AS runs_ranked, sum(runs) AS runs,
        min(best_position) AS best_position
      FROM ${v}.question_rank_daily WHERE task_id = $1 AND date > ${day(2)} - 30
      GROUP BY question, brand ORDER BY question, brand`,
    params: (p) => [p.task_id, p.last],
  },
  {
    name: 'a month of executions at the execution grain, by day',
    sql: (v) => `SELECT date, count(*) AS executions, count(*) FILTER (WHERE has_answer) AS answered,
        count(*) FILTER (WHERE has_screenshot) AS with_screenshot, sum(rank_items) AS rank_items,
        sum(valid_ranks) AS valid_ranks, sum(sources) AS sources, sum(product_cards) AS product_cards
      FROM ${v}.executions_enriched WHERE date > ${day(1)} - 30 GROUP BY date ORDER BY date`,
    params: (p) => [p.last],
  },
  {
    name: 'executions of the last day without an answer or a screenshot',
    sql: (v) => `SELECT platform_name, question, rank_items, sources FROM ${v}.executions_enriched
      WHERE date = ${day(1)} AND (NOT has_answer OR NOT has_screenshot) ORDER BY prompt_task_id`,
    params: (p) => [p.last],
  },
];

/** Rows as comparable text: numbers to 9 significant digits (sums of doubles in another order). */
export function comparable(rows: readonly Record<string, unknown>[]): string[] {
  return rows.map((r) =>
    Object.values(r)
      .map((v) => {
        if (typeof v === 'number') return Number.isInteger(v) ? String(v) : v.toPrecision(9);
        if (typeof v === 'bigint') return v.toString();
        if (typeof v === 'string' && /^-?\d+\.\d+$/.test(v)) return Number(v).toPrecision(9);
        if (v instanceof Date) return v.toISOString().slice(0, 10);
        return String(v);
      })
      .join('|'),
  );
}
