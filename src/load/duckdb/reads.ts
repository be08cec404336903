/** Reads, DuckDB: counts, runs, the newest deduction day, report queries. */
import { StatementType } from '@duckdb/node-api';
import type { Json, SyncRunRow } from '../../transform/rows.ts';
import { shanghaiDayOf } from '../../transform/time.ts';
import { SYNC_RUNS, ident } from '../tables.ts';
import { DATA_TABLES, type DataTable } from '../warehouse.ts';
import type { Session } from './session.ts';
import { readRows, toParameter } from './values.ts';

const COUNTS = `SELECT ${DATA_TABLES.map((t) => `(SELECT count(*) FROM geo.${t}) AS ${ident(t)}`).join(', ')}`;

export async function counts(s: Session): Promise<Record<DataTable, number>> {
  const [row] = await s.exclusive(() => s.rows<Record<DataTable, number>>(COUNTS));
  return row!;
}

const LIST_RUNS = `SELECT ${SYNC_RUNS.columns.map((c) => ident(c.name)).join(', ')} FROM geo.sync_runs
  ORDER BY started_at DESC, run_id DESC LIMIT $1`;

export function listRuns(s: Session, limit: number): Promise<SyncRunRow[]> {
  return s.exclusive(() => s.rows<SyncRunRow>(LIST_RUNS, [Math.max(0, Math.floor(limit))]));
}

/** The Asia/Shanghai day of the newest deduction, whatever offset the instant is read back in. */
export async function latestDeductionDay(s: Session): Promise<string | null> {
  const [row] = await s.exclusive(() =>
    s.rows<{ latest: string | null }>('SELECT max(created_at) AS latest FROM geo.deductions'),
  );
  return row?.latest ? shanghaiDayOf(row.latest) : null;
}

const READ_ONLY = new Set<StatementType>([StatementType.SELECT, StatementType.EXPLAIN]);

/** One read-only statement (SELECT, EXPLAIN); `$1`-style parameters. */
export function query(
  s: Session,
  sql: string,
  params: readonly Json[] = [],
): Promise<Record<string, unknown>[]> {
  return s.exclusive(async () => {
    const statements = await s.connection.extractStatements(sql);
    if (statements.count !== 1)
      throw new Error(`query(): expected one SQL statement, got ${statements.count}`);
    const prepared = await statements.prepare(0);
    try {
      if (!READ_ONLY.has(prepared.statementType)) {
        throw new Error(
          `query() is read-only: ${StatementType[prepared.statementType]} statements are refused`,
        );
      }
      if (params.length > 0) prepared.bind(params.map(toParameter));
      const reader = await prepared.runAndReadAll();
      return readRows(reader);
    } finally {
      prepared.destroySync();
    }
  });
}
