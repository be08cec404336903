/**
 * completeUnit, PostgreSQL: ONE transaction deletes the unit's executions the API no longer
 * lists, with their children, then upserts the checkpoint, so a checkpoint never exists without
 * the rows it vouches for (they were committed by earlier batches) nor with rows it disowns.
 */
import type pg from 'pg';
import type { UnitCompletion } from '../warehouse.ts';
import { EXECUTION_CHILD_TABLES, SYNC_CHECKPOINTS, nonKeyColumns } from '../tables.ts';
import { withTransaction } from './pool.ts';
import { db, fromExcluded, run } from './query-builder.ts';

export async function completeUnit(pool: pg.Pool, unit: UnitCompletion): Promise<void> {
  await withTransaction(pool, (client) => closeUnit(client, unit));
}

/** Closes one unit inside the caller's transaction (writeExecutionBatch uses it with the rows). */
export async function closeUnit(client: pg.ClientBase, unit: UnitCompletion): Promise<void> {
  if (unit.deleteUnlisted !== false) await deleteUnlisted(client, unit);
  await run(
    client,
    db
      .insertInto('geo.sync_checkpoints')
      .values(unit.checkpoint)
      .onConflict((oc) =>
        oc
          .columns(['task_id', 'date'])
          .doUpdateSet(fromExcluded(nonKeyColumns(SYNC_CHECKPOINTS).map((c) => c.name))),
      )
      .compile(),
  );
}

async function deleteUnlisted(client: pg.ClientBase, unit: UnitCompletion): Promise<void> {
  const gone = await client.query<{ prompt_task_id: number }>(
    `DELETE FROM geo.prompt_executions
     WHERE task_id = $1 AND date_time = $2::date AND NOT (prompt_task_id = ANY($3::bigint[]))
     RETURNING prompt_task_id`,
    [unit.task_id, unit.date, unit.seenPromptTaskIds],
  );
  if (gone.rows.length > 0) {
    const ids = gone.rows.map((r) => r.prompt_task_id);
    for (const table of EXECUTION_CHILD_TABLES) {
      await client.query(`DELETE FROM geo.${table} WHERE prompt_task_id = ANY($1::bigint[])`, [ids]);
    }
  }
}

export async function finishedUnits(q: pg.Pool, dates: readonly string[]): Promise<Set<string>> {
  if (dates.length === 0) return new Set();
  const rows = await run(
    q,
    db
      .selectFrom('geo.sync_checkpoints')
      .select(['task_id', 'date'])
      .where('date', '=', (eb) => eb.fn.any(eb.val([...dates])))
      .compile(),
  );
  return new Set(rows.map((r) => `${r.task_id}|${r.date}`));
}
