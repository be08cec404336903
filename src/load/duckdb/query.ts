/** Report queries, DuckDB: one read-only statement (SELECT, EXPLAIN); `$1`-style parameters. */
import { StatementType } from './node-api.ts';
import type { Json } from '../../transform/rows.ts';
import type { Session } from './session.ts';
import { readRows, toParameter } from './values.ts';

const READ_ONLY = new Set<StatementType>([StatementType.SELECT, StatementType.EXPLAIN]);

export function readOnlyQuery(
  s: Session,
  sql: string,
  params: readonly Json[] = [],
): Promise<Record<string, unknown>[]> {
  return s.exclusive(() => s.stoppable(() => runReadOnly(s, sql, params)));
}

async function runReadOnly(
  s: Session,
  sql: string,
  params: readonly Json[],
): Promise<Record<string, unknown>[]> {
  const statements = await s.connection.extractStatements(sql);
  if (statements.count !== 1) throw new Error(`query(): expected one SQL statement, got ${statements.count}`);
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
}
