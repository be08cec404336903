/**
 * Data tests for the warehouse (`geo-sync check`, `schedule --check`): what a modelled layer
 * ships with (keys unique, relationships, completeness, freshness), in SQL that runs alike on
 * PostgreSQL and DuckDB: sql/checks/*.sql, and the per-table ones built from the table
 * description (table-checks.ts). Each check returns its failing rows; it passes when
 * there are none.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Warehouse } from '../load/warehouse.ts';
import { DIALECT_SQL } from '../load/dialect-sql.ts';
import { batchDays, REFRESH_BATCH_EXECUTIONS, rollupsMatchSqls } from '../load/core/rollups.ts';
import { childrenHaveExecutionSql, keysUniqueSql } from './table-checks.ts';

export interface CheckOptions {
  /** First day of the range, inclusive (YYYY-MM-DD, Shanghai). */
  from: string;
  /** Last day, inclusive. */
  to: string;
  /** Freshness: the last successful run finished at most this many hours ago. @default 26 */
  maxAgeHours?: number;
  now?: Date;
  /**
   * rollups_match: executions one query compares at most (whole days; a larger day alone).
   * @default 50,000 (as `rollups refresh` writes them)
   */
  rollupsBatchExecutions?: number;
}

export interface CheckResult {
  name: string;
  /** What it checks, one line. */
  description: string;
  passed: boolean;
  /** Failing rows (for freshness: 1 when stale). */
  failing: number;
  /** The first failing rows, as the SQL returns them. */
  sample: Record<string, unknown>[];
}

/** How many failing rows a result keeps as its sample. */
export const SAMPLE_ROWS = 5;

const sqlFile = (name: string) =>
  readFileSync(fileURLToPath(new URL(`../../sql/checks/${name}.sql`, import.meta.url)), 'utf8');

type Check = (w: Warehouse, o: Required<CheckOptions>) => Promise<Omit<CheckResult, 'name' | 'description'>>;

/** The name of the column the wrapper adds with the failing rows' count. */
const FAILING = 'check_failing_rows';

/**
 * A check whose SQL returns its failing rows, ending with `ORDER BY` column positions. It runs
 * wrapped: the rows counted with count(*) OVER (), and only the sample fetched.
 */
const rowsCheck =
  (
    query: string | ((w: Warehouse) => string),
    params: (o: Required<CheckOptions>) => string[] = () => [],
  ): Check =>
  async (w, o) => {
    const sql = typeof query === 'string' ? sqlFile(query) : query(w);
    const order = /\bORDER BY\s+(\d+(?:\s*,\s*\d+)*)\s*;?\s*$/i.exec(sql);
    if (!order) throw new Error(`a check's SQL must end with ORDER BY column positions: ${sql.slice(0, 80)}`);
    // The failing rows in the dialect's CTE: PostgreSQL plans them apart from the sample's LIMIT.
    // Under it, execution_child_counts of 50,000 executions chose nested loops that rescanned its
    // grouped children per execution (70 s a batch, 29 minutes for a year's check; 1 s apart).
    const rows = await w.query(
      `WITH failing AS ${DIALECT_SQL[w.dialect].cte} (\n${sql.slice(0, order.index)}\n)\n` +
        `SELECT failing.*, count(*) OVER () AS ${FAILING} FROM failing\n` +
        `ORDER BY ${order[1]} LIMIT ${SAMPLE_ROWS}`,
      params(o),
    );
    const failing = rows.length ? Number(rows[0]![FAILING]) : 0;
    const sample = rows.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => k !== FAILING)));
    return { passed: failing === 0, failing, sample };
  };

const range = (o: Required<CheckOptions>) => [o.from, o.to];

/** When the last successful run that synced its whole scope finished (sql/checks/freshness.sql); null: never. */
export async function lastSuccessfulRun(w: Warehouse): Promise<Date | null> {
  const [row] = await w.query(sqlFile('freshness'));
  return row?.last_success ? new Date(String(row.last_success)) : null;
}

const freshness: Check = async (w, o) => {
  const last = await lastSuccessfulRun(w);
  const hours = last ? (o.now.getTime() - last.getTime()) / 3_600_000 : null;
  const passed = hours !== null && hours <= o.maxAgeHours;
  return {
    passed,
    failing: passed ? 0 : 1,
    sample: passed
      ? []
      : [
          {
            last_success: last?.toISOString() ?? null,
            hours_ago: hours === null ? null : Math.round(hours * 10) / 10,
            max_age_hours: o.maxAgeHours,
          },
        ],
  };
};

/**
 * rollups_match: one query per aggregate table and batch of days (batchDays: whole days of at
 * most 50,000 executions, as `rollups refresh` writes them). Each query recomputes its days'
 * aggregates and compares them with the stored rows. In one query per table, a year of 2,400
 * executions a day ran DuckDB out of its default 128MB pool (with a 2GB limit the domains' query
 * held 1.6 GB); a batch of ~50,000 executions fits it. Every row carries its day, so the batches'
 * differences are exactly the range's; they are taken table by table, day by day, the order one
 * query over the range gives its sample.
 */
const rollupsMatch: Check = async (w, o) => {
  const batches = batchDays(await w.rollupDays({ from: o.from, to: o.to }), o.rollupsBatchExecutions);
  let failing = 0;
  const sample: Record<string, unknown>[] = [];
  for (const sql of rollupsMatchSqls(w)) {
    for (const b of batches) {
      const part = await rowsCheck(
        () => sql,
        () => [b.from, b.to],
      )(w, o);
      failing += part.failing;
      sample.push(...part.sample.slice(0, SAMPLE_ROWS - sample.length));
    }
  }
  return { passed: failing === 0, failing, sample };
};

/**
 * A check over the range in batches of whole days (batchDays, as rollups_match): its SQL names the
 * days as $1 and $2 and reads only their rows, so each batch fits DuckDB's default pool on a year.
 */
const byDays =
  (file: string): Check =>
  async (w, o) => {
    const batches = batchDays(await w.rollupDays({ from: o.from, to: o.to }), o.rollupsBatchExecutions);
    let failing = 0;
    const sample: Record<string, unknown>[] = [];
    for (const b of batches) {
      const part = await rowsCheck(file, () => [b.from, b.to])(w, o);
      failing += part.failing;
      sample.push(...part.sample.slice(0, SAMPLE_ROWS - sample.length));
    }
    return { passed: failing === 0, failing, sample };
  };

const CHECKS: { name: string; description: string; run: Check }[] = [
  {
    name: 'keys_unique',
    description: 'every table’s key is unique',
    run: rowsCheck((w) => keysUniqueSql(w.dialect)),
  },
  {
    name: 'children_have_execution',
    description: 'no rank, source, screenshot, product answer, card or fingerprint without its execution',
    run: rowsCheck(() => childrenHaveExecutionSql()),
  },
  {
    name: 'executions_have_platform_task',
    description: 'no execution of the range without its platform task',
    run: rowsCheck('executions_have_platform_task', range),
  },
  {
    name: 'units_finished',
    description: 'every unit (platform task, day) of the range is finished, and did not fail since',
    run: rowsCheck('units_finished', range),
  },
  {
    name: 'unit_execution_counts',
    description: 'each finished unit holds as many executions as its listing reported when read',
    run: rowsCheck('unit_execution_counts', range),
  },
  {
    name: 'execution_child_counts',
    description:
      'each execution of the range carries its stored children’s counts (ranks, sources, cards, screenshot)',
    run: byDays('execution_child_counts'),
  },
  {
    name: 'rollups_match',
    description: 'the per-day aggregates of the range equal a recomputation from the execution tables',
    run: rollupsMatch,
  },
  { name: 'freshness', description: 'the last successful run finished recently enough', run: freshness },
];

/** Runs every check; a check that cannot run (bad SQL, no connection) throws. */
export async function runChecks(warehouse: Warehouse, opts: CheckOptions): Promise<CheckResult[]> {
  const o: Required<CheckOptions> = {
    maxAgeHours: 26,
    now: new Date(),
    rollupsBatchExecutions: REFRESH_BATCH_EXECUTIONS,
    ...opts,
  };
  const results: CheckResult[] = [];
  for (const c of CHECKS) {
    results.push({ name: c.name, description: c.description, ...(await c.run(warehouse, o)) });
  }
  return results;
}

/** `key=value` pairs of a sample row, for one line of text. */
function describeRow(row: Record<string, unknown>): string {
  return Object.entries(row)
    .map(
      ([k, v]) =>
        `${k}=${v instanceof Date ? v.toISOString() : typeof v === 'string' ? v : JSON.stringify(v)}`,
    )
    .join(' ');
}

/** One line per check: `ok`/`FAIL`, its name, the failing rows' count and a sample. */
export function formatCheckResults(results: readonly CheckResult[]): string {
  const width = Math.max(...results.map((r) => r.name.length));
  return results
    .map((r) => {
      const head = `${r.passed ? 'ok  ' : 'FAIL'}  ${r.name.padEnd(width)}  `;
      if (r.passed) return `${head}${r.description}`;
      const sample = r.sample.map(describeRow).join('; ');
      return `${head}${r.failing} failing row(s): ${sample}${r.failing > r.sample.length ? '; ...' : ''}`;
    })
    .join('\n');
}
