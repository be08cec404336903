/**
 * Closing units, DuckDB. The seen prompt_task_ids of every unit being closed are staged (outside
 * the transaction; staging tables are private to this connection), then, INSIDE the caller's
 * transaction, set-wise: each unit's executions the API no longer lists are deleted with their
 * children, and the checkpoints are upserted. writeExecutionBatch runs this in the same
 * transaction as the batch, so a checkpoint commits with its unit's last rows.
 */
import { EXECUTION_CHILD_TABLES, SYNC_CHECKPOINTS, type TableSpec } from '../tables.ts';
import { unitKeyOf } from '../values.ts';
import type { UnitCompletion } from '../warehouse.ts';
import type { Session } from './session.ts';
import { appendStaged, idList, recreateStagingSql, stagingTable } from './staging.ts';
import { insertValuesSql, valuesParams } from './statements.ts';

interface SeenRow {
  task_id: number;
  date: string;
  prompt_task_id: number;
}

/** Units being closed whose unlisted executions are deleted, and the executions the API listed for each. */
const UNITS: TableSpec<Pick<SeenRow, 'task_id' | 'date'>> = {
  table: 'units',
  key: ['task_id', 'date'],
  columns: [
    { name: 'task_id', kind: 'bigint' },
    { name: 'date', kind: 'date' },
  ],
};
const SEEN: TableSpec<SeenRow> = {
  table: 'seen',
  key: ['task_id', 'date', 'prompt_task_id'],
  columns: [
    { name: 'task_id', kind: 'bigint' },
    { name: 'date', kind: 'date' },
    { name: 'prompt_task_id', kind: 'bigint' },
  ],
};
const GONE = idList('gone');

export const UNIT_STAGING = [UNITS, SEEN, GONE] as const;

const CLEAR = UNIT_STAGING.map((t) => recreateStagingSql(t)).join(';\n');

const COLLECT_GONE = `INSERT INTO ${stagingTable(GONE)}
  SELECT e.prompt_task_id FROM geo.prompt_executions e
  JOIN ${stagingTable(UNITS)} u ON e.task_id = u.task_id AND e.date_time = u.date
  WHERE NOT EXISTS (
    SELECT 1 FROM ${stagingTable(SEEN)} s
    WHERE s.task_id = e.task_id AND s.date = e.date_time AND s.prompt_task_id = e.prompt_task_id)`;

const DELETE_GONE = [...EXECUTION_CHILD_TABLES, 'prompt_executions']
  .map(
    (t) => `DELETE FROM geo.${t} WHERE prompt_task_id IN (SELECT prompt_task_id FROM ${stagingTable(GONE)})`,
  )
  .join(';\n');

/** Stages the units; call under session.exclusive, before the transaction. */
export async function stageUnits(session: Session, units: readonly UnitCompletion[]): Promise<void> {
  await session.run(CLEAR);
  if (units.length === 0) return;
  // A unit that must not delete (its listing is not trusted whole) is simply not staged here:
  // COLLECT_GONE only looks at staged units. Its checkpoint is still written.
  const deleting = units.filter((u) => u.deleteUnlisted !== false);
  await appendStaged(
    session.connection,
    UNITS,
    deleting.map((u) => ({ task_id: u.task_id, date: u.date })),
  );
  await appendStaged(
    session.connection,
    SEEN,
    deleting.flatMap((u) =>
      [...new Set(u.seenPromptTaskIds)].map((id) => ({
        task_id: u.task_id,
        date: u.date,
        prompt_task_id: id,
      })),
    ),
  );
}

/** Closes the staged units; call inside the transaction. */
export async function closeStagedUnits(session: Session, units: readonly UnitCompletion[]): Promise<void> {
  if (units.length === 0) return;
  await session.run(COLLECT_GONE);
  await session.run(DELETE_GONE);
  const checkpoints = units.map((u) => u.checkpoint);
  await session.run(
    insertValuesSql(SYNC_CHECKPOINTS, checkpoints.length, { synced: false }),
    valuesParams(SYNC_CHECKPOINTS, checkpoints),
  );
}

export async function completeUnit(session: Session, unit: UnitCompletion): Promise<void> {
  await session.exclusive(async () => {
    await stageUnits(session, [unit]);
    await session.transaction(() => closeStagedUnits(session, [unit]));
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
