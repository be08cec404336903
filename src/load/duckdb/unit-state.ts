/**
 * Unit state, DuckDB: failure records, what is recorded about some days' units, and forgetting
 * checkpoints (`geo-sync state show|reset`). Plain statements; every value a parameter.
 */
import type { CheckpointRow, UnitFailureRow } from '../../transform/rows.ts';
import { SYNC_UNIT_FAILURES } from '../tables.ts';
import { dedupeBy, unitKeyOf } from '../values.ts';
import type { ForgottenUnits, UnitRecords } from '../warehouse.ts';
import type { Session } from './session.ts';
import { insertValuesSql, valuesParams } from './statements.ts';

const IN_RANGE = 'date BETWEEN CAST($1 AS DATE) AND CAST($2 AS DATE)';

/** ` AND task_id IN ($3, ...)` for the given tasks (none: every task). */
function taskFilter(taskIds: readonly number[], first: number): string {
  return taskIds.length ? ` AND task_id IN (${taskIds.map((_, i) => `$${first + i}`).join(', ')})` : '';
}

export async function recordUnitFailures(s: Session, rows: readonly UnitFailureRow[]): Promise<void> {
  // One row per key in one upsert: DuckDB does not say which of two duplicates wins.
  const unique = dedupeBy(rows, (r) => unitKeyOf(r.task_id, r.date));
  if (unique.length === 0) return;
  await s.exclusive(() =>
    s.run(
      insertValuesSql(SYNC_UNIT_FAILURES, unique.length, { synced: false }),
      valuesParams(SYNC_UNIT_FAILURES, unique),
    ),
  );
}

export function unitRecords(s: Session, from: string, to: string): Promise<UnitRecords> {
  return s.exclusive(async () => ({
    checkpoints: await s.rows<CheckpointRow>(
      `SELECT task_id, date, run_id, finished_at, executions FROM geo.sync_checkpoints
       WHERE ${IN_RANGE} ORDER BY date, task_id`,
      [from, to],
    ),
    failures: await s.rows<UnitFailureRow>(
      `SELECT task_id, date, run_id, failed_at, error FROM geo.sync_unit_failures
       WHERE ${IN_RANGE} ORDER BY date, task_id`,
      [from, to],
    ),
  }));
}

export function forgetUnits(
  s: Session,
  from: string,
  to: string,
  taskIds: readonly number[] = [],
): Promise<ForgottenUnits> {
  const where = `${IN_RANGE}${taskFilter(taskIds, 3)}`;
  const params = [from, to, ...taskIds];
  return s.exclusive(() =>
    s.transaction(async () => {
      const checkpoints = await s.rows<{ task_id: number; date: string }>(
        `DELETE FROM geo.sync_checkpoints WHERE ${where} RETURNING task_id, date`,
        params,
      );
      const failures = await s.run(`DELETE FROM geo.sync_unit_failures WHERE ${where}`, params);
      checkpoints.sort((a, b) => a.date.localeCompare(b.date) || a.task_id - b.task_id);
      return { checkpoints, failures };
    }),
  );
}

export async function platformTaskIds(s: Session): Promise<number[]> {
  const rows = await s.exclusive(() =>
    s.rows<{ task_id: number }>('SELECT task_id FROM geo.platform_tasks ORDER BY task_id'),
  );
  return rows.map((r) => r.task_id);
}
