/** Reads, PostgreSQL: counts, the newest deduction day, report queries. */
import { sql } from 'kysely';
import type pg from 'pg';
import type { Json } from '../../transform/rows.ts';
import { shanghaiDayOf } from '../../transform/time.ts';
import { DATA_TABLES, type DataTable } from '../warehouse.ts';
import { withTransaction } from './pool.ts';
import { db, run } from './query-builder.ts';

export async function counts(pool: pg.Pool): Promise<Record<DataTable, number>> {
  const q = sql<Record<DataTable, number>>`SELECT ${sql.join(
    DATA_TABLES.map((t) => sql`(SELECT count(*) FROM ${sql.table(`geo.${t}`)}) AS ${sql.ref(t)}`),
  )}`;
  const [row] = await run(pool, q.compile(db));
  return row!;
}

/** The Asia/Shanghai day of the newest deduction, whatever offset the instant is read back in. */
export async function latestDeductionDay(pool: pg.Pool): Promise<string | null> {
  const q = db.selectFrom('geo.deductions').select((eb) => eb.fn.max('created_at').as('latest'));
  const [row] = await run(pool, q.compile());
  return row?.latest ? shanghaiDayOf(row.latest) : null;
}

/** A report query in a READ ONLY transaction; `$1`-style parameters. */
export async function query(
  pool: pg.Pool,
  text: string,
  params: readonly Json[] = [],
): Promise<Record<string, unknown>[]> {
  return withTransaction(
    pool,
    async (client) => (await client.query(text, params as unknown[])).rows as Record<string, unknown>[],
    { begin: 'BEGIN TRANSACTION READ ONLY' },
  );
}
