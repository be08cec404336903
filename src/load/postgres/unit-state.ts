/**
 * Unit state, PostgreSQL: failure records, what is recorded about some days' units, and
 * forgetting checkpoints (`geo-sync state show|reset`). Plain statements; every value a parameter.
 */
import type pg from 'pg';
import type { CheckpointRow, UnitFailureRow } from '../../transform/rows.ts';
import { SYNC_UNIT_FAILURES, nonKeyColumns } from '../tables.ts';
import { dedupeBy, unitKeyOf } from '../values.ts';
import type { ForgottenUnits, UnitRecords } from '../warehouse.ts';
import { withTransaction } from './pool.ts';
import { db, fromExcluded, run } from './query-builder.ts';

/** $1..$2: the days; $3: the platform tasks, or NULL for every task. */
const WHERE_UNITS =
  'date BETWEEN $1::date AND $2::date AND ($3::bigint[] IS NULL OR task_id = ANY($3::bigint[]))';

export async function recordUnitFailures(pool: pg.Pool, rows: readonly UnitFailureRow[]): Promise<void> {
  const unique = dedupeBy(rows, (r) => unitKeyOf(r.task_id, r.date));
  if (unique.length === 0) return;
  const q = db
    .insertInto('geo.sync_unit_failures')
    .values(unique)
    .onConflict((oc) =>
      oc
        .columns(['task_id', 'date'])
        .doUpdateSet(fromExcluded(nonKeyColumns(SYNC_UNIT_FAILURES).map((c) => c.name))),
    );
  await run(pool, q.compile());
}

export async function unitRecords(pool: pg.Pool, from: string, to: string): Promise<UnitRecords> {
  const checkpoints = await pool.query<CheckpointRow>(
    `SELECT task_id, date, run_id, finished_at, executions FROM geo.sync_checkpoints
     WHERE date BETWEEN $1::date AND $2::date ORDER BY date, task_id`,
    [from, to],
  );
  const failures = await pool.query<UnitFailureRow>(
    `SELECT task_id, date, run_id, failed_at, error FROM geo.sync_unit_failures
     WHERE date BETWEEN $1::date AND $2::date ORDER BY date, task_id`,
    [from, to],
  );
  return { checkpoints: checkpoints.rows, failures: failures.rows };
}

export function forgetUnits(
  pool: pg.Pool,
  from: string,
  to: string,
  taskIds: readonly number[] = [],
): Promise<ForgottenUnits> {
  const params = [from, to, taskIds.length ? [...taskIds] : null];
  return withTransaction(pool, async (client) => {
    const checkpoints = await client.query<{ task_id: number; date: string }>(
      `DELETE FROM geo.sync_checkpoints WHERE ${WHERE_UNITS} RETURNING task_id, date`,
      params,
    );
    const failures = await client.query(`DELETE FROM geo.sync_unit_failures WHERE ${WHERE_UNITS}`, params);
    const units = checkpoints.rows.sort((a, b) => a.date.localeCompare(b.date) || a.task_id - b.task_id);
    return { checkpoints: units, failures: failures.rowCount ?? 0 };
  });
}

export async function platformTaskIds(pool: pg.Pool): Promise<number[]> {
  const r = await pool.query<{ task_id: number }>('SELECT task_id FROM geo.platform_tasks ORDER BY task_id');
  return r.rows.map((x) => x.task_id);
}
