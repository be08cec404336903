/**
 * After a run: the tables it grew by a large share made ready for the readers that come next
 * (an analyst opening the dashboards right after a backfill). PostgreSQL's autovacuum gets to a
 * grown table in its own time; until then the planner's statistics describe the table before the
 * run, and an index-only scan fetches every heap page whose visibility map bit is not yet set
 * (a month of executions_enriched on a year grown by a backfill, when that view counted each
 * execution's child rows: 1.4-1.6 s, 0.19 s after VACUUM; sql/postgres/013 makes it index-only).
 * So the sync runs VACUUM (ANALYZE) on each table of schema geo that it grew by at least
 * TIDY_MIN_ROWS rows and TIDY_MIN_SHARE of its rows since its last vacuum; a small night touches
 * no table. DuckDB keeps no visibility map and plans from the data itself: nothing to do.
 */
import type { Connection, Driver } from './driver.ts';

/** Rows inserted since the table's last vacuum before a run tidies it. */
export const TIDY_MIN_ROWS = 10_000;
/** And that share of its live rows. */
export const TIDY_MIN_SHARE = 0.1;

/**
 * The tables of schema geo that gained at least `minRows` rows and `share` of their live rows since
 * their last vacuum, as PostgreSQL's statistics count them.
 */
async function tablesGrown(c: Connection, minRows: number, share: number): Promise<string[]> {
  const rows = await c.rows<{ relname: string }>(
    `SELECT relname FROM pg_stat_user_tables
     WHERE schemaname = 'geo' AND n_ins_since_vacuum >= $1
       AND n_ins_since_vacuum >= CAST($2 AS DOUBLE PRECISION) * GREATEST(n_live_tup, 1)
     ORDER BY relname`,
    [minRows, share],
  );
  return rows.map((r) => r.relname);
}

const qualified = (table: string) => `geo."${table.replaceAll('"', '""')}"`;

/** VACUUM (ANALYZE) of each grown table, outside a transaction; the tables tidied. */
export async function tidyGrownTables(driver: Driver): Promise<string[]> {
  if (driver.dialect !== 'postgres') return [];
  return driver.connection(async (c) => {
    const grown = await tablesGrown(c, TIDY_MIN_ROWS, TIDY_MIN_SHARE);
    for (const t of grown) await c.execute(`VACUUM (ANALYZE) ${qualified(t)}`);
    return grown;
  });
}

/**
 * The tables a refresh of the aggregates joins, and the columns it joins and filters them on:
 * only their statistics matter to its plans. Analyzing these columns alone takes a sixth of a
 * whole ANALYZE (10,000 executions: 85 against 470 ms, most of it the sources' and the answers'
 * text); the run's tidy (tidyGrownTables) and autovacuum analyze every column afterwards.
 */
const REFRESH_READS: Readonly<Record<string, readonly string[]>> = {
  prompt_executions: ['prompt_task_id', 'task_id', 'date_time'],
  execution_ranks: ['prompt_task_id'],
  execution_sources: ['prompt_task_id'],
};

/** Pages a table grew since its statistics were taken before a refresh analyzes it first (1 MB). */
export const ANALYZE_MIN_PAGES = 128;

/**
 * Before the aggregates are refreshed on PostgreSQL: ANALYZE of the join and filter columns of the
 * tables the refresh reads that grew by at least ANALYZE_MIN_PAGES and TIDY_MIN_SHARE since their
 * statistics were taken. The refresh joins the execution tables; planned on the statistics of
 * tables a first read has just filled (they said empty), its joins became nested loops over every
 * row: one INSERT of a refresh ran for minutes on a first read of 30,000 executions, and 0.5 s
 * once analyzed. A night that adds little analyzes nothing.
 *
 * Growth is the table's file against the pages its statistics counted (pg_class.relpages, which
 * an ANALYZE of some columns updates): exact at once, where pg_stat's counters arrive when the
 * writer's session reports them (up to a second later, or when it closes) and only an ANALYZE of
 * every column resets n_mod_since_analyze, so the next refresh of the run would analyze again.
 * The tables analyzed.
 */
export async function analyzeStaleStatistics(driver: Driver): Promise<string[]> {
  if (driver.dialect !== 'postgres') return [];
  return driver.connection(async (c) => {
    const rows = await c.rows<{ relname: string }>(
      `SELECT relname FROM (
         SELECT k.relname, k.relpages, pg_relation_size(k.oid) / current_setting('block_size')::int AS pages
         FROM pg_class k JOIN pg_namespace n ON n.oid = k.relnamespace
         WHERE n.nspname = 'geo' AND k.relname = ANY($3::text[])) t
       WHERE pages - relpages >= $1 AND pages - relpages >= CAST($2 AS DOUBLE PRECISION) * GREATEST(relpages, 1)
       ORDER BY relname`,
      [ANALYZE_MIN_PAGES, TIDY_MIN_SHARE, Object.keys(REFRESH_READS)],
    );
    const stale = rows.map((r) => r.relname);
    if (stale.length > 0) {
      const list = stale.map(
        (t) => `${qualified(t)} (${REFRESH_READS[t]!.map((col) => `"${col}"`).join(', ')})`,
      );
      await c.execute(`ANALYZE ${list.join(', ')}`);
    }
    return stale;
  });
}
