/** The run log and the quarantine, PostgreSQL. */
import type pg from 'pg';
import type { RejectRow, SyncRunRow } from '../../transform/rows.ts';
import { SYNC_RUNS, nonKeyColumns } from '../tables.ts';
import { chunksFor } from './merge.ts';
import { withTransaction } from './pool.ts';
import { db, fromExcluded, run } from './query-builder.ts';
import { withJsonText } from './schema.ts';

const RUN_JSON = ['args', 'rows'] as const;

/** Inserts the run (or overwrites it: idempotent by run_id). */
export async function insertRun(pool: pg.Pool, r: SyncRunRow): Promise<void> {
  const q = db
    .insertInto('geo.sync_runs')
    .values(withJsonText(r, RUN_JSON))
    .onConflict((oc) =>
      oc.column('run_id').doUpdateSet(fromExcluded(nonKeyColumns(SYNC_RUNS).map((c) => c.name))),
    );
  await run(pool, q.compile());
}

export async function updateRun(pool: pg.Pool, r: SyncRunRow): Promise<void> {
  const { run_id: runId, ...rest } = withJsonText(r, RUN_JSON);
  const q = db.updateTable('geo.sync_runs').set(rest).where('run_id', '=', runId).compile();
  const result = await pool.query(q.sql, q.parameters as unknown[]);
  // A run never inserted (e.g. its insert failed) is recorded now rather than lost.
  if (result.rowCount === 0) await insertRun(pool, r);
}

export async function listRuns(pool: pg.Pool, limit: number): Promise<SyncRunRow[]> {
  const q = db
    .selectFrom('geo.sync_runs')
    .selectAll()
    .orderBy('started_at', 'desc')
    .orderBy('run_id', 'desc')
    .limit(Math.max(0, Math.floor(limit)));
  return (await run(pool, q.compile())) as SyncRunRow[];
}

export async function insertRejects(pool: pg.Pool, rows: readonly RejectRow[]): Promise<void> {
  if (rows.length === 0) return;
  await withTransaction(pool, async (client) => {
    for (const chunk of chunksFor(rows, 6)) {
      const q = db
        .insertInto('geo.sync_rejects')
        .values(chunk.map((r) => withJsonText(r, ['params', 'raw'] as const)));
      await run(client, q.compile());
    }
  });
}
