/**
 * The few SQL spellings the two warehouses do not share, for the statements written once for
 * both: the views (sql/views.sql, rendered by views.ts), the aggregates' recomputation
 * (core/rollups.ts), the checks (quality/checks.ts) and rows written as lists (core/statements.ts). Everything else in those statements is the SQL both accept.
 */
import type { Dialect } from './warehouse.ts';

export interface DialectSql {
  /** The double-precision float type. */
  readonly double: string;
  /**
   * How a statement's CTE is kept (`WITH x AS <cte> (...)`). PostgreSQL computes it apart, once:
   * planned on its own (not under the statement's LIMIT) and not again where it is named twice.
   * DuckDB inlines it: it planned those as fast, and held less memory than materialized.
   */
  readonly cte: string;
  /** A predicate: `column` is one of the ids of the list parameter `$n`. */
  inIds(column: string, n: number): string;
  /**
   * A predicate: the row's (`day`, `task`) is one of the units `units` selects (a SELECT of the
   * columns d, t, neither ever NULL).
   */
  inUnits(day: string, task: string, units: string): string;
  /**
   * A column of rows, the list parameter `$n` bound as `bound` (statements.ts insertListsSql), as
   * a list of the column's `type`.
   */
  columnList(n: number, bound: string, type: string): string;
  /** ISO week of a DATE expression, as `YYYY-Www`. */
  isoWeek(date: string): string;
  /** A FROM item: the text elements of a JSON column that holds an array (none otherwise), as `alias(url)`. */
  jsonArrayTexts(json: string, alias: string): string;
  /**
   * How a view names a geo table. DuckDB binds a view's body in the view's own catalog and
   * schema, so its views name tables unqualified and keep working however the file is opened
   * (a qualified `geo.<table>` is ambiguous when the file itself is named geo.duckdb).
   */
  viewTable(table: string): string;
  /**
   * A statement, inside a transaction, that waits for the transactions writing `table` and keeps
   * new writers out until this one ends; null where transactions never run at once (DuckDB).
   */
  lockAgainstWriters(table: string): string | null;
  /**
   * A statement, inside a transaction, that writes `table` as any writer does, and so waits while
   * lockAgainstWriters holds it; null where transactions never run at once.
   */
  lockAsWriter(table: string): string | null;
  /**
   * A statement taking, in the order given, transaction-level locks on `count` integer keys
   * ($1..$count) of this project's own namespace, the units' or the days' (a unit's key and a
   * day's never wait for each other); null where transactions never run at once.
   */
  lockKeys(count: number, space?: 'units' | 'days'): string | null;
  /**
   * Refreshes the planner's statistics of tables just filled in bulk; null where the planner
   * needs none (DuckDB keeps its statistics as it writes).
   */
  analyze(tables: readonly string[]): string | null;
  /**
   * Whether an INSERT ... SELECT of aggregate rows sorts them into the order the dashboards read
   * them (core/rollups.ts storedOrder). PostgreSQL stores rows in the order inserted, and reads a
   * filter's rows by page: stored as the grouping emitted them, one monitoring task's year of
   * domain rows lay two to a page over 37,000 pages. DuckDB reads by column and row group, the
   * order of the few thousand rows of one refresh decides nothing, and a sort would cost each refresh.
   */
  readonly sortsAggregateInserts: boolean;
}

/**
 * The first key of the units' advisory locks (lockKeys): any constant does, as PostgreSQL keeps
 * two-int keys apart from the bigint keys of the warehouse and migration locks. Never change it
 * while an older geo-sync may write the same warehouse: both must lock the same keys.
 */
const ROLLUP_LOCK_SPACE = 2828;
/** The days' advisory locks (the account's aggregates, rollups.ts): the same rule. */
const ACCOUNT_DAY_LOCK_SPACE = 2829;

export const DIALECT_SQL: Record<Dialect, DialectSql> = {
  postgres: {
    double: 'DOUBLE PRECISION',
    cte: 'MATERIALIZED',
    inIds: (column, n) => `${column} = ANY($${n}::bigint[])`,
    // The planner makes a semi-join of it (as of a row value IN).
    inUnits: (day, task, units) => `EXISTS (SELECT 1 FROM (${units}) u WHERE u.d = ${day} AND u.t = ${task})`,
    // Each item's text parsed as the column's type at once: an error names the value (`value
    // "3000000000" is out of range for type integer`, which a quarantined record's reason carries),
    // where a cast from BIGINT[] says only `integer out of range`.
    columnList: (n, _bound, type) => `CAST($${n} AS ${type}[])`,
    isoWeek: (d) => `to_char(${d}, 'IYYY-"W"IW')`,
    jsonArrayTexts: (j, alias) =>
      `jsonb_array_elements_text(CASE WHEN jsonb_typeof(${j}) = 'array' THEN ${j} ELSE '[]'::jsonb END) AS ${alias}(url)`,
    viewTable: (t) => `geo.${t}`,
    lockAgainstWriters: (t) => `LOCK TABLE ${t} IN SHARE ROW EXCLUSIVE MODE`,
    lockAsWriter: (t) => `LOCK TABLE ${t} IN ROW EXCLUSIVE MODE`,
    // Two-int advisory locks: a space apart from the bigint keys of the warehouse and migration
    // locks. The target list is evaluated left to right: the keys are taken in the order given.
    lockKeys: (count, space = 'units') =>
      `SELECT ${Array.from({ length: count }, (_, i) => `pg_advisory_xact_lock(${space === 'units' ? ROLLUP_LOCK_SPACE : ACCOUNT_DAY_LOCK_SPACE}, CAST($${i + 1} AS INTEGER))`).join(', ')}`,
    analyze: (tables) => `ANALYZE ${tables.join(', ')}`,
    sortsAggregateInserts: true,
  },
  duckdb: {
    double: 'DOUBLE',
    cte: 'NOT MATERIALIZED',
    // DuckDB uses no ART index for `IN (subquery)`: the semi-join scans. The range of the ids
    // first lets zone maps skip row groups (ids grow with time, as rows are appended): on 3.6M
    // source rows, 76 ms without it, 8 ms with it, for a batch's ids.
    inIds: (column, n) =>
      `(${column} BETWEEN list_min(CAST($${n} AS BIGINT[])) AND list_max(CAST($${n} AS BIGINT[]))
        AND ${column} IN (SELECT unnest(CAST($${n} AS BIGINT[]))))`,
    // A row value IN the units runs in about half the time of a correlated EXISTS (1.2-1.4 ms
    // against 2.0-2.6 ms a statement, 100 units over 20,000 rows); a refresh has ten statements
    // so filtered, a write transaction one. The same rows as EXISTS since neither side is NULL
    // (never negate it: DuckDB mishandles NULLs in a negated row IN).
    inUnits: (day, task, units) => `(${day}, ${task}) IN (${units})`,
    // Typed as it is bound, then as its column: a statement the session keeps prepared types its
    // parameter as bound, and is not bound again at every use.
    columnList: (n, bound, type) =>
      bound === type ? `CAST($${n} AS ${type}[])` : `CAST(CAST($${n} AS ${bound}[]) AS ${type}[])`,
    isoWeek: (d) => `strftime(${d}, '%G-W%V')`,
    jsonArrayTexts: (j, alias) =>
      `unnest(CASE WHEN json_type(${j}) = 'ARRAY' THEN json_extract_string(${j}, '$[*]') ELSE [] END) AS ${alias}(url)`,
    viewTable: (t) => t,
    lockAgainstWriters: () => null,
    lockAsWriter: () => null,
    lockKeys: () => null,
    analyze: () => null,
    sortsAggregateInserts: false,
  },
};

/**
 * A host or cited domain normalised for own-site matching, the same on both warehouses: lower
 * case, without surrounding blanks, scheme, `user@`, `:port`, path, a leading "www." or trailing
 * dots. `(?s)`: a value with a line break is normalised too (DuckDB's RE2 `.` stops at one).
 */
export function siteOf(text: string): string {
  return (
    `regexp_replace(regexp_replace(lower(${text}), ` +
    `'(?s)^\\s*([a-z][a-z0-9+.-]*://)?([^/?#]*@)?([^/?#:\\s]*).*$', '\\3'), '^www\\.|\\.+$', '', 'g')`
  );
}

/** Whether `site` (normalised) is, or is below, `host` (normalised and not empty). */
export function ownedBy(site: string, host: string): string {
  return `${host} <> '' AND (${site} = ${host} OR right(${site}, length(${host}) + 1) = '.' || ${host})`;
}

/** Monday of the ISO week of a DATE expression, as a DATE. */
export function weekStartOf(date: string): string {
  return `CAST(date_trunc('week', ${date}) AS DATE)`;
}
