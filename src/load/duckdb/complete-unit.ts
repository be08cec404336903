/**
 * completeUnit and finishedUnits, DuckDB. ONE transaction: the unit's executions the API no
 * longer lists are collected, deleted with their children, and the checkpoint is upserted.
 */
import { EXECUTION_CHILD_TABLES, SYNC_CHECKPOINTS } from '../tables.ts';
import { unitKeyOf } from '../values.ts';
import type { UnitCompletion } from '../warehouse.ts';
import type { Session } from './session.ts';
import { appendStaged, idList, stagingTable } from './staging.ts';
import { insertValuesSql, valuesParams } from './statements.ts';

const SEEN = idList('seen');
const GONE = idList('gone');

export const UNIT_STAGING = [SEEN, GONE] as const;

const COLLECT_GONE = `INSERT INTO ${stagingTable(GONE)}
  SELECT prompt_task_id FROM geo.prompt_executions
  WHERE task_id = $1 AND date_time = CAST($2 AS DATE)
    AND prompt_task_id NOT IN (SELECT prompt_task_id FROM ${stagingTable(SEEN)})`;

const DELETE_GONE = [...EXECUTION_CHILD_TABLES, 'prompt_executions']
  .map((t) => `DELETE FROM geo.${t} WHERE prompt_task_id IN (SELECT prompt_task_id FROM ${stagingTable(GONE)})`)
  .join(';\n');

const UPSERT_CHECKPOINT = insertValuesSql(SYNC_CHECKPOINTS, 1, { synced: false });

export async function completeUnit(session: Session, unit: UnitCompletion): Promise<void> {
  await session.exclusive(async () => {
    await session.run(`DELETE FROM ${stagingTable(SEEN)}; DELETE FROM ${stagingTable(GONE)}`);
    await appendStaged(
      session.connection,
      SEEN,
      [...new Set(unit.seenPromptTaskIds)].map((id) => ({ prompt_task_id: id })),
    );
    await session.transaction(async () => {
      await session.run(COLLECT_GONE, [unit.task_id, unit.date]);
      await session.run(DELETE_GONE);
      await session.run(UPSERT_CHECKPOINT, valuesParams(SYNC_CHECKPOINTS, [unit.checkpoint]));
    });
  });
}

export async function finishedUnits(session: Session, dates: readonly string[]): Promise<Set<string>> {
  const unique = [...new Set(dates)];
  if (unique.length === 0) return new Set();
  const placeholders = unique.map((_, i) => `CAST($${i + 1} AS DATE)`).join(', ');
  const rows = await session.exclusive(() =>
    session.rows<{ task_id: number; date: string }>(
      `SELECT task_id, date FROM geo.sync_checkpoints WHERE date IN (${placeholders})`,
      unique,
    ),
  );
  return new Set(rows.map((r) => unitKeyOf(r.task_id, r.date)));
}
