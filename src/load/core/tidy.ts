/**
 * After a run: the tables it grew by a large share made ready for the readers that come next
 * (an analyst opening the dashboards right after a backfill). PostgreSQL's autovacuum gets to a
 * grown table in its own time; until then the planner's statistics describe the table before the
 * run, and an index-only scan fetches every heap page whose visibility map bit is not yet set
 * (a month of executions_enriched on a year grown by a backfill: 1.4-1.6 s, 0.19 s after VACUUM).
 * So the sync runs VACUUM (ANALYZE) on each table of schema geo that it grew by at least
 * TIDY_MIN_ROWS rows and TIDY_MIN_SHARE of its rows since its last vacuum; a small night touches
 * no table. DuckDB keeps no visibility map and plans from the data itself: nothing to do.
 */
import type { Connection, Driver } from './driver.ts';

/** Rows inserted since the table's last vacuum before a run tidies it. */
export const TIDY_MIN_ROWS = 10_000;
/** And that share of its live rows. */
export const TIDY_MIN_SHARE = 0.1;

/** A pg_stat_user_tables counter of rows since a table's last vacuum or analyze. */
type Since = 'n_ins_since_vacuum' | 'n_mod_since_analyze';

/**
 * The tables of schema geo (of `only`, when given) whose counter `since` is at least `minRows`
 * and `share` of their live rows, as PostgreSQL's statistics count them.
 */
async function tablesBehind(
  c: Connection,
  since: Since,
  minRows: number,
  share: number,
  only?: readonly string[],
): Promise<string[]> {
  const rows = await c.rows<{ relname: string }>(
    `SELECT relname FROM pg_stat_user_tables
     WHERE schemaname = 'geo' AND ${since} >= $1
       AND ${since} >= CAST($2 AS DOUBLE PRECISION) * GREATEST(n_live_tup, 1)
       ${only ? 'AND relname = ANY($3::text[])' : ''}
     ORDER BY relname`,
    only ? [minRows, share, [...only]] : [minRows, share],
  );
  return rows.map((r) => r.relname);
}

const qualified = (table: string) => `geo."${table.replaceAll('"', '""')}"`;

/** VACUUM (ANALYZE) of each grown table, outside a transaction; the tables tidied. */
export async function tidyGrownTables(driver: Driver): Promise<string[]> {
  if (driver.dialect !== 'postgres') return [];
  return driver.connection(async (c) => {
    const grown = await tablesBehind(c, 'n_ins_since_vacuum', TIDY_MIN_ROWS, TIDY_MIN_SHARE);
    for (const t of grown) await c.execute(`VACUUM (ANALYZE) ${qualified(t)}`);
    return grown;
  });
}

/** The tables a refresh of the aggregates joins: only their statistics matter to its plans. */
const REFRESH_READS = ['prompt_executions', 'execution_ranks', 'execution_sources', 'execution_screenshots'];

/** Rows changed since the table's last ANALYZE before a refresh analyzes it first. */
export const ANALYZE_MIN_ROWS = 1_000;

/**
 * Before the aggregates are refreshed on PostgreSQL: ANALYZE of the tables the refresh joins whose
 * statistics lag their rows by at least ANALYZE_MIN_ROWS and TIDY_MIN_SHARE. The refresh joins the
 * execution tables; planned on the statistics of tables a first read has just filled (they said
 * empty), its joins became nested loops over every row: one INSERT of a refresh ran for minutes on
 * a first read of 30,000 executions, and 0.5 s once analyzed. A table grown by a tenth gets new
 * statistics (a few hundred ms); a night that adds little analyzes nothing. The tables analyzed.
 */
export async function analyzeStaleStatistics(driver: Driver): Promise<string[]> {
  if (driver.dialect !== 'postgres') return [];
  return driver.connection(async (c) => {
    const stale = await tablesBehind(
      c,
      'n_mod_since_analyze',
      ANALYZE_MIN_ROWS,
      TIDY_MIN_SHARE,
      REFRESH_READS,
    );
    if (stale.length > 0) await c.execute(`ANALYZE ${stale.map(qualified).join(', ')}`);
    return stale;
  });
}
