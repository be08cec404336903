/**
 * What `export` writes: one folder per data table; the tables whose rows belong to a day are
 * hive-partitioned by that day (`<table>/day=YYYY-MM-DD/`), so re-exporting a day replaces
 * exactly its folder.
 */
import { join } from 'node:path';
import { DATA_TABLES, type DataTable } from '../load/warehouse.ts';

export type ExportFormat = 'parquet' | 'csv';
export const EXPORT_FORMATS: readonly ExportFormat[] = ['parquet', 'csv'];

/** How a table's rows get their day; `null`: the table is exported whole, unpartitioned. */
export type DayRule =
  /** prompt_executions: its own `date_time`. */
  | { kind: 'own-date' }
  /** A child of prompt_executions: its execution's `date_time`. */
  | { kind: 'execution' }
  /** deductions: the Asia/Shanghai day of `created_at` (the API's days are Shanghai days). */
  | { kind: 'shanghai-day'; column: string };

export const DAY_RULES: Record<DataTable, DayRule | null> = {
  monitoring_tasks: null,
  platform_tasks: null,
  prompt_executions: { kind: 'own-date' },
  execution_ranks: { kind: 'execution' },
  execution_sources: { kind: 'execution' },
  execution_screenshots: { kind: 'execution' },
  execution_products: { kind: 'execution' },
  product_cards: { kind: 'execution' },
  site_diagnoses: null,
  balance_snapshots: null,
  deductions: { kind: 'shanghai-day', column: 'created_at' },
};

/** The partition column added to day-partitioned tables (and the hive folder key). */
export const DAY_COLUMN = 'day';

export interface DayRange {
  /** First day, inclusive (YYYY-MM-DD). */
  readonly from?: string | undefined;
  /** Last day, inclusive (YYYY-MM-DD). */
  readonly to?: string | undefined;
}

/** `a,b` -> the tables, in warehouse order; unknown names throw naming the valid ones. */
export function parseTables(list: string | undefined): DataTable[] {
  if (list === undefined) return [...DATA_TABLES];
  const names = list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = names.filter((n) => !(DATA_TABLES as readonly string[]).includes(n));
  if (names.length === 0 || unknown.length > 0) {
    throw new Error(
      `--tables: ${names.length === 0 ? 'no table given' : `unknown table(s) ${unknown.join(', ')}`}; choose from ${DATA_TABLES.join(', ')}`,
    );
  }
  return DATA_TABLES.filter((t) => names.includes(t));
}

/**
 * The SELECT of one table for export, its columns in table order plus `day` for partitioned
 * tables, restricted to the range. `q` qualifies a table name (`src.geo.t`, `geo.t`); `shanghaiDay`
 * turns an instant column into its Asia/Shanghai DATE in the dialect at hand. Returns the SQL
 * and its `$n` parameters (the range's days).
 */
export function exportSelect(
  table: DataTable,
  range: DayRange,
  dialect: {
    q: (table: string) => string;
    shanghaiDay: (column: string) => string;
    /** Extra select list for the table's own columns (default `t.*`). */
    columns?: string;
  },
): { sql: string; params: string[] } {
  const rule = DAY_RULES[table];
  const columns = dialect.columns ?? 't.*';
  if (rule === null) return { sql: `SELECT ${columns} FROM ${dialect.q(table)} t`, params: [] };
  let from = `${dialect.q(table)} t`;
  let day: string;
  if (rule.kind === 'own-date') day = 't.date_time';
  else if (rule.kind === 'execution') {
    from += ` JOIN ${dialect.q('prompt_executions')} e ON e.prompt_task_id = t.prompt_task_id`;
    day = 'e.date_time';
  } else day = dialect.shanghaiDay(`t.${rule.column}`);
  const { where, params } = inRange(day, range);
  return { sql: `SELECT ${columns}, ${day} AS ${DAY_COLUMN} FROM ${from}${where}`, params };
}

/**
 * The days a day-partitioned table may have rows on in the range, ascending: its executions'
 * days (prompt_executions and its children), or deductions' own Asia/Shanghai days. One column,
 * `day`, as text (YYYY-MM-DD). A day of executions without rows of a child table writes nothing.
 */
export function exportDaysSql(
  table: DataTable,
  range: DayRange,
  dialect: { q: (table: string) => string; shanghaiDay: (column: string) => string },
): { sql: string; params: string[] } {
  const rule = DAY_RULES[table];
  if (rule === null) throw new Error(`${table} is not partitioned by day`);
  const day = rule.kind === 'shanghai-day' ? dialect.shanghaiDay(`t.${rule.column}`) : 't.date_time';
  const from = dialect.q(rule.kind === 'shanghai-day' ? table : 'prompt_executions');
  const { where, params } = inRange(day, range);
  return {
    sql: `SELECT DISTINCT CAST(${day} AS VARCHAR) AS ${DAY_COLUMN} FROM ${from} t${where} ORDER BY 1`,
    params,
  };
}

/** ` WHERE` `day` in the range (empty when unbounded), with its `$n` parameters. */
function inRange(day: string, range: DayRange): { where: string; params: string[] } {
  const params: string[] = [];
  const where: string[] = [];
  if (range.from !== undefined) {
    params.push(range.from);
    where.push(`${day} >= CAST($${params.length} AS DATE)`);
  }
  if (range.to !== undefined) {
    params.push(range.to);
    where.push(`${day} <= CAST($${params.length} AS DATE)`);
  }
  return { where: where.length ? ` WHERE ${where.join(' AND ')}` : '', params };
}

/** A day's folder of a partitioned table's folder `dir`: `dir/day=YYYY-MM-DD` (hive partitioning). */
export function dayFolder(dir: string, day: string): string {
  return join(dir, `${DAY_COLUMN}=${day}`);
}
