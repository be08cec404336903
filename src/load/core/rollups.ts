/**
 * The per-day aggregates, for every dialect: how they are refreshed from the execution tables,
 * for some units (platform task, day) or some days, and the comparison `check rollups_match`
 * runs. The views (sql/views.sql) read these tables instead of grouping every raw row at each
 * query.
 *
 * How they stay right without a write reading anything back: a write transaction (an execution batch, the
 * deletion of executions no longer listed) records the units whose rows it changed in
 * geo.rollup_stale_units (stale-units.ts markStale: one INSERT, nothing read back), like TimescaleDB's
 * invalidation log. The sync refreshes the stale units set-based in transactions of their own
 * (stale-units.ts refreshStaleUnits: during a run every so many executions or seconds, and always at its end;
 * a worker at the end of each job): each unit's aggregate rows are recomputed whole from its rows
 * and replaced, and the markers found are deleted. A unit is recomputed whole, never
 * patched with a difference: the best position (a minimum) cannot be taken back when an
 * execution is replaced, and a unit is small (its day's executions of one platform task).
 *
 * What a reader sees: at rest (after a run; after a kill -9, after the next run or `rollups
 * refresh`) no marker is left and the aggregates equal the rows. During a run, a unit written
 * since its last refresh shows its aggregates as of that refresh, and is listed in
 * rollup_stale_units; rollups_match skips exactly those.
 *
 * One computation, in SQL (SELECTS), for every path: the sync's refresh of its stale units, `rollups
 * refresh` and the upgrade fill by days, and `check rollups_match`, which recomputes and compares:
 * any write that changed rows without marking their unit shows there. rollup_executions_daily is
 * computed from the counts each execution row carries (written with its children); the check
 * execution_child_counts holds those to the child tables. Only additive quantities
 * are stored (counts and sums), plus two that merge by taking the least (best positions) and
 * `owned`, which depends on the monitoring task's brand_urls and is set again when they change
 * (ownership.ts decideOwnership). Names are joined at query time.
 *
 * The account's tables (rollup_*_account_daily) sum the per-platform-task ones by day: whatever
 * recomputes a unit recomputes its day's account rows from them, in the same transaction
 * (ACCOUNT_SELECTS); rollups_match holds them, as the others, to the execution tables.
 */
import { DIALECT_SQL, ownedBy, siteOf, weekStartOf } from '../dialect-sql.ts';
import {
  ACCOUNT_ROLLUP_TABLES,
  ROLLUP_BRANDS_ACCOUNT_DAILY,
  ROLLUP_BRANDS_DAILY,
  ROLLUP_DOMAINS_ACCOUNT_DAILY,
  ROLLUP_DOMAINS_DAILY,
  ROLLUP_EXECUTIONS_DAILY,
  ROLLUP_QUESTION_BRANDS_DAILY,
  ROLLUP_TABLES,
  ident,
} from '../tables.ts';
import { unitKeyOf } from '../values.ts';
import type { Connection, Driver, Param } from './driver.ts';
import { columnList } from './statements.ts';

/** A unit whose aggregate rows are recomputed. */
export interface RollupUnit {
  readonly task_id: number;
  readonly date: string;
}

/**
 * What a recomputation covers: some units, or every unit of some days. With units, `ids` (the
 * units' executions, read first) lets each child table be read by those ids instead of joined
 * whole: on DuckDB the ids' range skips the row groups outside it (a refresh of a few units of a
 * warehouse of 300,000 executions scanned every child table: 1.1 s whatever the units).
 */
export type RollupScope =
  | { readonly units: readonly RollupUnit[]; readonly ids?: readonly number[] }
  | { readonly from: string; readonly to: string };

/**
 * Parameters of one statement, numbered as they are added; a value added again is the same
 * parameter (a statement that filters two of its parts by the same scope names it once).
 */
export class Params {
  readonly values: Param[] = [];
  private readonly seen = new Map<unknown, string>();
  add(value: Param): string {
    const known = this.seen.get(value);
    if (known) return known;
    this.values.push(value);
    const placeholder = `$${this.values.length}`;
    this.seen.set(value, placeholder);
    return placeholder;
  }
}

/** What the statements need of a driver: its dialect. */
export type Dialected = Pick<Driver, 'dialect'>;

/**
 * The scope as a predicate on a table's day and platform-task columns. Units are one list of
 * days and one of platform tasks, zipped: the statement's text is the same for any number of
 * units (two texts: units of one day, or of several, since Params gives equal values one
 * placeholder), so a driver that keeps prepared statements (DuckDB's session) plans it once.
 */
export function scopeWhere(
  driver: Dialected,
  scope: RollupScope,
  p: Params,
  day: string,
  task: string,
): string {
  if ('from' in scope)
    return `${day} BETWEEN CAST(${p.add(scope.from)} AS DATE) AND CAST(${p.add(scope.to)} AS DATE)`;
  const days = p.add(scope.units.map((u) => u.date));
  const tasks = p.add(scope.units.map((u) => u.task_id));
  // The units' days' range first: zone maps (DuckDB) and the day indexes (PostgreSQL) take it.
  const sorted = scope.units.map((u) => u.date).sort();
  const range = sorted.length
    ? `${day} BETWEEN CAST(${p.add(sorted[0]!)} AS DATE) AND CAST(${p.add(sorted.at(-1)!)} AS DATE) AND `
    : '';
  const units = `SELECT CAST(unnest(CAST(${days} AS VARCHAR[])) AS DATE) AS d, unnest(CAST(${tasks} AS BIGINT[])) AS t`;
  return `${range}${DIALECT_SQL[driver.dialect].inUnits(day, task, units)}`;
}

/**
 * A predicate on a child table's `column` (its prompt_task_id): among the scope's executions.
 * With the units' execution ids (DuckDB), those ids: their range skips row groups. Otherwise the
 * scope's executions, as a semi-join (PostgreSQL probes the child's index on prompt_task_id for
 * a few units, or hashes a scan for many days).
 */
function childWhere(driver: Dialected, scope: RollupScope, p: Params, column: string): string {
  if ('units' in scope && scope.ids) {
    const placeholder = p.add(scope.ids as number[]);
    return DIALECT_SQL[driver.dialect].inIds(column, Number(placeholder.slice(1)));
  }
  return `${column} IN (SELECT e.prompt_task_id FROM geo.prompt_executions e
      WHERE ${scopeWhere(driver, scope, p, 'e.date_time', 'e.task_id')})`;
}

/** Each execution's rank items per brand, from the ranks alone (grouped by two columns, not by every execution column). */
function ranksByExecutionSql(driver: Dialected, scope: RollupScope, p: Params): string {
  return `SELECT r.prompt_task_id, r.brand,
        count(*) AS rank_items, count(r.position) AS valid_rank_items, sum(r.position) AS position_sum,
        min(r.position) AS best, sum(r.visibility) AS visibility_sum, count(r.visibility) AS visibility_items,
        sum(r.score) AS score_sum, count(r.score) AS score_items
      FROM geo.execution_ranks r
      WHERE ${childWhere(driver, scope, p, 'r.prompt_task_id')}
      GROUP BY r.prompt_task_id, r.brand`;
}

/**
 * One execution's rank items per brand, with the execution's columns: the grain under the brand
 * aggregate. The ranks are grouped by execution and brand alone, then joined to their
 * executions: grouping the joined rows by every execution column as well sorted them by those
 * texts (PostgreSQL: half of a refresh's time on 10,000 executions).
 */
function executionBrandsSql(driver: Dialected, scope: RollupScope, p: Params): string {
  return `SELECT e.date_time, e.task_id, e.project_id, e.customer_id, e.engine, e.model,
      r.brand, r.rank_items, r.valid_rank_items, r.position_sum, r.best,
      r.visibility_sum, r.visibility_items, r.score_sum, r.score_items
    FROM (${ranksByExecutionSql(driver, scope, p)}) r
    JOIN geo.prompt_executions e ON e.prompt_task_id = r.prompt_task_id`;
}

const big = (expr: string) => `CAST(${expr} AS BIGINT)`;

/**
 * Each aggregate table's rows recomputed from the execution tables over `scope`, in the table's
 * column order. `owned` is decided once per (monitoring task, domain) group, against the hosts of
 * the task's brand_urls, as the views used to per row.
 */
type Select = (d: Dialected, s: RollupScope, p: Params) => string;
const SELECTS: Readonly<Record<string, Select>> = {
  // From the counts each execution carries (its children's, set by the writer with them; the
  // check execution_child_counts holds them to the child tables): no child table is read.
  [ROLLUP_EXECUTIONS_DAILY.table]: (
    d,
    s,
    p,
  ) => `SELECT e.date_time, ${weekStartOf('e.date_time')}, e.task_id, e.project_id,
      e.customer_id, e.engine, e.model,
      count(*), count(*) FILTER (WHERE e.result_status = 'available'),
      count(*) FILTER (WHERE e.result_status = 'missing'),
      count(*) FILTER (WHERE e.has_screenshot),
      ${big('COALESCE(sum(e.valid_ranks), 0)')}, ${big('COALESCE(sum(e.sources), 0)')}
    FROM geo.prompt_executions e
    WHERE ${scopeWhere(d, s, p, 'e.date_time', 'e.task_id')}
    GROUP BY e.date_time, e.task_id, e.project_id, e.customer_id, e.engine, e.model`,

  [ROLLUP_BRANDS_DAILY.table]: (
    d,
    s,
    p,
  ) => `SELECT b.date_time, ${weekStartOf('b.date_time')}, b.task_id, b.project_id,
      b.customer_id, b.engine, b.model, b.brand,
      ${big('sum(b.rank_items)')}, ${big('sum(b.valid_rank_items)')}, ${big('COALESCE(sum(b.position_sum), 0)')},
      count(b.best), ${big('COALESCE(sum(b.best), 0)')}, min(b.best),
      count(*) FILTER (WHERE b.best = 1), count(*) FILTER (WHERE b.best <= 3),
      ${big('COALESCE(sum(b.visibility_sum), 0)')}, ${big('sum(b.visibility_items)')},
      ${big('COALESCE(sum(b.score_sum), 0)')}, ${big('sum(b.score_items)')}
    FROM (${executionBrandsSql(d, s, p)}) b
    GROUP BY b.date_time, b.task_id, b.project_id, b.customer_id, b.engine, b.model, b.brand`,

  // `owned` per (monitoring task, domain), each domain normalised once per such pair (not per
  // unit and day: a year of 10,000 executions a day has 16M domain rows and 20,000 domains).
  // Sources are counted per execution and domain first: each such row is one execution citing the
  // domain, so no count(DISTINCT) (which sorts) is needed above it.
  [ROLLUP_DOMAINS_DAILY.table]: (d, s, p) => `WITH g AS (
      SELECT e.date_time, e.task_id, e.project_id, e.customer_id, x.domain,
        ${big('sum(x.citations)')} AS citations, count(*) AS executions_citing
      FROM (
        SELECT s.prompt_task_id, s.domain, count(*) AS citations FROM geo.execution_sources s
        WHERE ${childWhere(d, s, p, 's.prompt_task_id')}
        GROUP BY s.prompt_task_id, s.domain
      ) x JOIN geo.prompt_executions e ON e.prompt_task_id = x.prompt_task_id
      GROUP BY e.date_time, e.task_id, e.project_id, e.customer_id, x.domain
    ),
    h AS (${brandHostsSql(d)}),
    o AS (
      SELECT x.project_id, x.domain, bool_or(${ownedBy('x.site', 'h.host')}) AS owned
      FROM (
        SELECT pairs.project_id, pairs.domain, ${siteOf('pairs.domain')} AS site
        FROM (SELECT DISTINCT project_id, domain FROM g WHERE project_id IN (SELECT project_id FROM h)) pairs
      ) x
      JOIN h ON h.project_id = x.project_id
      GROUP BY x.project_id, x.domain
    )
    SELECT g.date_time, ${weekStartOf('g.date_time')}, g.task_id, g.project_id, g.customer_id, g.domain,
      g.citations, g.executions_citing, COALESCE(o.owned, false)
    FROM g LEFT JOIN o ON o.project_id = g.project_id AND o.domain = g.domain`,

  // A question's runs (its executions that day, ranked or not) by a window over the scope's
  // executions, joined to the ranks by execution id: a join on (day, task, prompt_name) was
  // estimated at one row and planned as a nested loop (PostgreSQL: minutes on 10,000 executions).
  [ROLLUP_QUESTION_BRANDS_DAILY.table]: (
    d,
    s,
    p,
  ) => `SELECT e.date_time, ${weekStartOf('e.date_time')}, e.task_id,
      e.project_id, e.customer_id, e.prompt_name, r.brand,
      e.runs, count(r.best), ${big('COALESCE(sum(r.best), 0)')}, min(r.best)
    FROM (${ranksByExecutionSql(d, s, p)}) r
    JOIN (
      SELECT e.prompt_task_id, e.date_time, e.task_id, e.project_id, e.customer_id, e.prompt_name,
        count(*) OVER (PARTITION BY e.date_time, e.task_id, e.prompt_name) AS runs
      FROM geo.prompt_executions e
      WHERE ${scopeWhere(d, s, p, 'e.date_time', 'e.task_id')}
    ) e ON e.prompt_task_id = r.prompt_task_id
    GROUP BY e.date_time, e.task_id, e.project_id, e.customer_id, e.prompt_name, r.brand, e.runs`,
};

/** The recomputation of one aggregate table. */
function selectOf(table: string): Select {
  const select = SELECTS[table];
  if (!select) throw new Error(`no recomputation for geo.${table}`);
  return select;
}

/**
 * Each monitoring task's brand_urls hosts, normalised (the view monitoring_task_hosts lists them
 * too); only of the monitoring tasks in the id list `$n` when `n` is given.
 */
export function brandHostsSql(d: Pick<Driver, 'dialect'>, n?: number): string {
  // A JSON null in the array (a hand edit: the API gives strings) is no host, on either side.
  const only = n === undefined ? '' : ` AND ${DIALECT_SQL[d.dialect].inIds('m.project_id', n)}`;
  return `SELECT DISTINCT m.project_id, ${siteOf('u.url')} AS host
    FROM geo.monitoring_tasks m CROSS JOIN ${DIALECT_SQL[d.dialect].jsonArrayTexts('m.brand_urls', 'u')}
    WHERE u.url IS NOT NULL${only}`;
}

/** A statement and its parameters. */
export interface Statement {
  sql: string;
  params: Param[];
}

/** Delete, then insert, of every aggregate table over the scope: the recomputation. */
export function recomputeStatements(driver: Dialected, scope: RollupScope): Statement[] {
  const out: Statement[] = [];
  for (const spec of ROLLUP_TABLES) {
    const del = new Params();
    out.push({
      sql: `DELETE FROM geo.${spec.table} AS r WHERE ${scopeWhere(driver, scope, del, 'r.date', 'r.task_id')}`,
      params: del.values,
    });
    const ins = new Params();
    out.push({
      sql: `INSERT INTO geo.${spec.table} (${columnList(spec)}) ${selectOf(spec.table)(driver, scope, ins)}${storedOrder(driver, spec)}`,
      params: ins.values,
    });
  }
  return out;
}

/**
 * The ORDER BY that stores a recomputation's rows by monitoring task, platform task and day
 * (column positions of the table's own order, which every SELECTS entry follows), where the
 * dialect sorts them (DialectSql.sortsAggregateInserts): what a dashboard filters a year by.
 * Measured on PostgreSQL, a year of 2,400 executions a day: weekly own-site citations of one
 * monitoring task read 68,000 rows from 37,000 pages stored unsorted, p95 364-397 ms; 119 ms sorted.
 */
function storedOrder(driver: Dialected, spec: (typeof ROLLUP_TABLES)[number]): string {
  if (!DIALECT_SQL[driver.dialect].sortsAggregateInserts) return '';
  const positions = ['project_id', 'task_id', 'date'].map((name) => {
    const i = spec.columns.findIndex((c) => c.name === name);
    if (i < 0) throw new Error(`no column ${name} to store rows by`);
    return i + 1;
  });
  return `\n    ORDER BY ${positions.join(', ')}`;
}

/**
 * Recomputes the aggregates of `scope` inside the caller's transaction: its units' (or days')
 * rows, then the account's rows of their days, from those. Nothing to do for no unit (a
 * transaction that only closed unchanged units).
 */
export async function recomputeRollups(driver: Driver, c: Connection, scope: RollupScope): Promise<void> {
  if ('units' in scope && scope.units.length === 0) return;
  for (const s of recomputeStatements(driver, scope)) await c.execute(s.sql, s.params);
  const days: DayScope = 'units' in scope ? { days: [...new Set(scope.units.map((u) => u.date))] } : scope;
  await lockAccountDays(driver, c, days);
  for (const s of accountStatements(days)) await c.execute(s.sql, s.params);
}

// ---- The whole account's days --------------------------------------------------------------

/** Days whose account rows are recomputed: a list (the units' days), or a range. */
export type DayScope = { readonly days: readonly string[] } | { readonly from: string; readonly to: string };

/** The day scope as a predicate on `column` (a list's range first, for zone maps and the day index). */
function dayWhere(scope: DayScope, p: Params, column: string): string {
  if ('from' in scope)
    return `${column} BETWEEN CAST(${p.add(scope.from)} AS DATE) AND CAST(${p.add(scope.to)} AS DATE)`;
  const sorted = [...scope.days].sort();
  return `${column} BETWEEN CAST(${p.add(sorted[0]!)} AS DATE) AND CAST(${p.add(sorted.at(-1)!)} AS DATE)
    AND ${column} IN (SELECT CAST(unnest(CAST(${p.add(sorted)} AS VARCHAR[])) AS DATE))`;
}

/**
 * The account's rows of the days, from the per-platform-task aggregates: `from(table)` names them,
 * the stored tables (a refresh: never the execution tables, which the units' rows are kept from)
 * or their recomputation (rollups_match: the account's rows held to the execution tables, not to
 * the units' rows, so a hand edit of one table is named once). The brands' rows sum what
 * brand_visibility_daily gives per platform task and day (its `executions`: that day's of the
 * platform task), so a tile of the whole account reads the same numbers from either.
 */
type AccountSelect = (s: DayScope, p: Params, from: (table: string, alias: string) => string) => string;

const stored = (table: string, alias: string) => `geo.${table} AS ${alias}`;

const ACCOUNT_SELECTS: Readonly<Record<string, AccountSelect>> = {
  [ROLLUP_DOMAINS_ACCOUNT_DAILY.table]: (s, p, from) => `SELECT c.date, c.week_start, c.domain,
      ${big('sum(c.citations)')}, ${big('sum(c.executions_citing)')}
    FROM ${from(ROLLUP_DOMAINS_DAILY.table, 'c')} WHERE ${dayWhere(s, p, 'c.date')}
    GROUP BY c.date, c.week_start, c.domain`,

  [ROLLUP_BRANDS_ACCOUNT_DAILY.table]: (s, p, from) => `SELECT g.date, g.week_start, g.brand,
      ${big('sum(d.executions)')}, ${big('sum(g.executions_ranked)')}, ${big('sum(g.best_position_sum)')},
      min(g.best_position), ${big('sum(g.top1_executions)')}, ${big('sum(g.top3_executions)')},
      ${big('sum(g.visibility_sum)')}, ${big('sum(g.visibility_items)')},
      ${big('sum(g.score_sum)')}, ${big('sum(g.score_items)')}
    FROM (
      SELECT b.date, b.week_start, b.customer_id, b.project_id, b.task_id, b.brand,
        sum(b.executions_ranked) AS executions_ranked, sum(b.best_position_sum) AS best_position_sum,
        min(b.best_position) AS best_position, sum(b.top1_executions) AS top1_executions,
        sum(b.top3_executions) AS top3_executions, sum(b.visibility_sum) AS visibility_sum,
        sum(b.visibility_items) AS visibility_items, sum(b.score_sum) AS score_sum,
        sum(b.score_items) AS score_items
      FROM ${from(ROLLUP_BRANDS_DAILY.table, 'b')} WHERE ${dayWhere(s, p, 'b.date')}
      GROUP BY b.date, b.week_start, b.customer_id, b.project_id, b.task_id, b.brand
    ) g
    LEFT JOIN (
      SELECT t.date, t.project_id, t.task_id, sum(t.executions) AS executions
      FROM ${from(ROLLUP_EXECUTIONS_DAILY.table, 't')} WHERE ${dayWhere(s, p, 't.date')}
      GROUP BY t.date, t.project_id, t.task_id
    ) d ON d.date = g.date AND d.project_id = g.project_id AND d.task_id = g.task_id
    GROUP BY g.date, g.week_start, g.brand`,
};

/** Delete, then insert, of the account's rows of the days. */
export function accountStatements(days: DayScope): Statement[] {
  if ('days' in days && days.days.length === 0) return [];
  const out: Statement[] = [];
  for (const spec of ACCOUNT_ROLLUP_TABLES) {
    const del = new Params();
    out.push({
      sql: `DELETE FROM geo.${spec.table} WHERE ${dayWhere(days, del, 'date')}`,
      params: del.values,
    });
    const ins = new Params();
    const select = ACCOUNT_SELECTS[spec.table]!;
    out.push({
      sql: `INSERT INTO geo.${spec.table} (${columnList(spec)}) ${select(days, ins, stored)}`,
      params: ins.values,
    });
  }
  return out;
}

/**
 * PostgreSQL runs refreshes of units of one day at once (distributed workers): each recomputes
 * the day's account rows from what it sees, so two at once would each insert theirs. A lock per
 * day, taken in one order after the units' rows are written, makes the second wait and then
 * read the first's. A refresh of a range of days (`rollups refresh`, the fill) locks the account
 * tables against writers instead: it waits for the units' refreshes under way, and they for it.
 */
async function lockAccountDays(driver: Driver, c: Connection, days: DayScope): Promise<void> {
  const sql = DIALECT_SQL[driver.dialect];
  if ('from' in days) {
    for (const t of ACCOUNT_ROLLUP_TABLES) {
      const lock = sql.lockAgainstWriters(`geo.${t.table}`);
      if (lock) await c.execute(lock);
    }
    return;
  }
  const keys = [...new Set(days.days.map(fnv1a))].sort((a, b) => a - b);
  const lock = keys.length > 0 ? sql.lockKeys(keys.length, 'days') : null;
  if (lock) await c.execute(lock, keys);
}

/** A unit's lock key: FNV-1a of `task_id|date` (a collision only serializes two units). */
export function unitLockKey(u: RollupUnit): number {
  return fnv1a(`${u.task_id}|${u.date}`);
}

/** FNV-1a of `text`, as a 32-bit signed integer: an advisory lock's key. */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (const ch of text) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193);
  return h | 0;
}

/** Distinct units, in a stable order. */
export function distinctUnits(units: Iterable<RollupUnit>): RollupUnit[] {
  const byKey = new Map<string, RollupUnit>();
  for (const u of units) byKey.set(unitKeyOf(u.task_id, u.date), { task_id: u.task_id, date: u.date });
  return [...byKey.values()].sort((a, b) => a.date.localeCompare(b.date) || a.task_id - b.task_id);
}

/**
 * `check rollups_match` over the days `$1`..`$2`: the rows stored and the rows recomputed that
 * differ, outside the units marked stale (their refresh is pending: not wrong, behind), one row
 * per side (`stored` only, `recomputed` only) with the table, day, platform task and the rest of
 * the row as text; a row stored twice shows once as `stored` only (EXCEPT ALL).
 * Portable SQL, ending with ORDER BY column positions.
 */
export function rollupsMatchSql(driver: Dialected, table: string): string {
  // Two stand-ins that every part's day scope names as $1 and $2 (Params names a value once).
  const p = new Params();
  const days = { from: '\u0000from', to: '\u0000to' };
  const [from, to] = [p.add(days.from), p.add(days.to)];
  const spec = [...ROLLUP_TABLES, ...ACCOUNT_ROLLUP_TABLES].find((t) => t.table === table);
  if (!spec) throw new Error(`rollups_match: no aggregate table geo.${table}`);
  // The account's rows are recomputed from the execution tables as the units' are, then summed;
  // they are behind for a day with any unit marked stale.
  const account = ACCOUNT_ROLLUP_TABLES.some((t) => t.table === table);
  const rest = spec.columns.map((c) => c.name).filter((c) => !['date', 'week_start', 'task_id'].includes(c));
  const detail = rest
    .map((c) => `'${c}=' || COALESCE(CAST(x.${ident(c)} AS VARCHAR), 'NULL')`)
    .join(` || ' ' || `);
  const stored = `SELECT ${columnList(spec)} FROM geo.${spec.table} WHERE date BETWEEN CAST(${from} AS DATE) AND CAST(${to} AS DATE)`;
  // The account's rows from the units' as recomputed from the execution tables.
  const fromExecutions = (t: string, alias: string) => {
    const unit = ROLLUP_TABLES.find((u) => u.table === t)!;
    return `(${selectOf(t)(driver, days, p)}) AS ${alias} (${columnList(unit)})`;
  };
  const recomputed = account
    ? ACCOUNT_SELECTS[spec.table]!(days, p, fromExecutions)
    : selectOf(spec.table)(driver, days, p);
  const [task, behind] = account
    ? ['CAST(NULL AS BIGINT)', 's.date = x.date']
    : ['x.task_id', 's.date = x.date AND s.task_id = x.task_id'];
  // Each side computed once (the dialect's CTE), then compared both ways: written out in each part,
  // PostgreSQL ran the recomputation twice (a batch of a year's rollups_match: 20 s, 9 s once).
  // DuckDB took as long either way and held 90 MB more materialized.
  const parts = (
    [
      ['stored', 'stored_rows', 'recomputed_rows'],
      ['recomputed', 'recomputed_rows', 'stored_rows'],
    ] as const
  ).map(
    ([side, a, b]) =>
      `SELECT '${spec.table}' AS table_name, '${side}' AS only_in, x.date, ${task} AS task_id, ${detail} AS row_values
       FROM (SELECT * FROM ${a} EXCEPT ALL SELECT * FROM ${b}) x (${columnList(spec)})
       WHERE NOT EXISTS (SELECT 1 FROM geo.rollup_stale_units s WHERE ${behind})`,
  );
  if (p.values.length !== 2) throw new Error(`rollups_match: a part of geo.${table} names another parameter`);
  const cte = DIALECT_SQL[driver.dialect].cte;
  return `WITH stored_rows AS ${cte} (${stored}),
    recomputed_rows AS ${cte} (${recomputed})
    ${parts.join('\nUNION ALL\n')}\nORDER BY 1, 3, 4, 2, 5`;
}

/** Every aggregate table's rollups_match statement: one query each (one for all four ran DuckDB out of its 128MB). */
export function rollupsMatchSqls(driver: Dialected): string[] {
  return [...ROLLUP_TABLES, ...ACCOUNT_ROLLUP_TABLES].map((t) => rollupsMatchSql(driver, t.table));
}

/**
 * The days (of `$1`..`$2` when `inRange`) that hold executions or aggregate rows, with their
 * executions: an aggregate row of a day without executions (a backup restored, a hand edit) is
 * one to delete.
 */
export function rollupDaysSql(inRange: boolean): string {
  const where = (column: string) =>
    inRange ? ` WHERE ${column} BETWEEN CAST($1 AS DATE) AND CAST($2 AS DATE)` : '';
  const days = [
    `SELECT date_time AS date, count(*) AS executions FROM geo.prompt_executions${where('date_time')} GROUP BY date_time`,
    ...[...ROLLUP_TABLES, ...ACCOUNT_ROLLUP_TABLES].map(
      (t) => `SELECT DISTINCT date, 0 AS executions FROM geo.${t.table}${where('date')}`,
    ),
  ];
  return `SELECT date, CAST(sum(executions) AS BIGINT) AS executions FROM (${days.join(' UNION ALL ')}) d
    GROUP BY date ORDER BY date`;
}

/**
 * Executions one refresh transaction covers at most (whole days; a day above it is one
 * transaction of its own): bounded, so PostgreSQL holds its locks and DuckDB its uncommitted rows
 * for one batch of days, not for the whole history.
 */
export const REFRESH_BATCH_EXECUTIONS = 50_000;

export interface DayBatch {
  from: string;
  to: string;
  days: number;
  executions: number;
}

/**
 * Items in order, grouped so that each group's executions stay within `max` (an item above it
 * alone): the days of a refresh or a check, the stale units of a sync's refresh.
 */
export function inBatches<T>(items: readonly T[], executionsOf: (t: T) => number, max: number): T[][] {
  const out: T[][] = [];
  let current: T[] | null = null;
  let executions = 0;
  for (const item of items) {
    const n = executionsOf(item);
    if (!current || executions + n > max) {
      out.push((current = []));
      executions = 0;
    }
    current.push(item);
    executions += n;
  }
  return out;
}

/** Consecutive days in batches of at most `max` executions (a larger day alone). */
export function batchDays(
  days: readonly { date: string; executions: number }[],
  max = REFRESH_BATCH_EXECUTIONS,
): DayBatch[] {
  return inBatches(days, (d) => d.executions, max).map((batch) => ({
    from: batch[0]!.date,
    to: batch.at(-1)!.date,
    days: batch.length,
    executions: batch.reduce((n, d) => n + d.executions, 0),
  }));
}

/**
 * After a fill or a refresh: the planner's statistics of the aggregate tables (on PostgreSQL,
 * autovacuum comes later; meanwhile a plan for the day's filter guessed 350k rows where there were
 * 60k and scanned the whole table). Outside a transaction.
 */
export async function analyzeRollups(driver: Pick<Driver, 'dialect'>, c: Connection): Promise<void> {
  const sql = DIALECT_SQL[driver.dialect].analyze(
    [...ROLLUP_TABLES, ...ACCOUNT_ROLLUP_TABLES].map((t) => `geo.${t.table}`),
  );
  if (sql) await c.execute(sql);
}

/** The ledger row (geo.schema_migrations) of migration 008's fill, while it is not done. */
export const ROLLUPS_FILL = 'rollups_fill';
/** The ledger row of migration 012's fill (the account's rows, from the units'), while it is not done. */
export const ACCOUNT_ROLLUPS_FILL = 'account_rollups_fill';

/**
 * Migration 008's fill, one batch of days (one transaction, the caller's) at a time: the
 * aggregates of every stored day, for a warehouse upgraded from a version without them. 008
 * leaves the ledger row `rollups_fill` = `fill from <day>`; each batch recomputes the days from
 * there (at most REFRESH_BATCH_EXECUTIONS executions) and moves the row on, or deletes it after
 * the last. Batches, not one transaction: a year of executions aggregated at once ran DuckDB out
 * of its 128MB; and a fill interrupted (kill -9) goes on where it stopped at the next migrate.
 * Returns the days this step filled, or null when nothing is left to fill.
 */
export function fillRollupsStep(driver: Driver, c: Connection): Promise<FillStep | null> {
  return fillStep(c, ROLLUPS_FILL, (days) => recomputeRollups(driver, c, days));
}

/**
 * Migration 012's fill, the same way: the account's rows of every stored day, from the units'
 * aggregates (a warehouse upgraded from a version without them).
 */
export function fillAccountRollupsStep(driver: Driver, c: Connection): Promise<FillStep | null> {
  return fillStep(c, ACCOUNT_ROLLUPS_FILL, async (days) => {
    await lockAccountDays(driver, c, days);
    for (const s of accountStatements(days)) await c.execute(s.sql, s.params);
  });
}

export interface FillStep {
  from: string;
  to: string;
  days: number;
}

async function fillStep(
  c: Connection,
  ledger: string,
  recompute: (days: { from: string; to: string }) => Promise<void>,
): Promise<FillStep | null> {
  const [marker] = await c.rows<{ name: string }>(
    'SELECT name FROM geo.schema_migrations WHERE version = $1',
    [ledger],
  );
  if (!marker) return null;
  const from = /^fill from (\d{4}-\d{2}-\d{2})$/.exec(marker.name)?.[1] ?? '0001-01-01';
  const days = await c.rows<{ date: string; executions: number }>(rollupDaysSql(true), [from, '9999-12-31']);
  const [batch, next] = batchDays(days.map((d) => ({ date: d.date, executions: Number(d.executions) })));
  if (batch) await recompute({ from: batch.from, to: batch.to });
  if (next) {
    await c.execute('UPDATE geo.schema_migrations SET name = $2 WHERE version = $1', [
      ledger,
      `fill from ${next.from}`,
    ]);
  } else {
    await c.execute('DELETE FROM geo.schema_migrations WHERE version = $1', [ledger]);
  }
  return batch ? { from: batch.from, to: batch.to, days: batch.days } : { from, to: from, days: 0 };
}
