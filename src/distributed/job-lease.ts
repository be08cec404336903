/**
 * Owning a job, proven rather than assumed. pg-boss 10.4 marks a fetched job `active` with its
 * `started_on`, expires it when `started_on + expire_in` passes (then another worker may fetch it:
 * a new `started_on`), and its complete/fail check only the state, not who runs the job. So a
 * worker that stalled past the timeout (a long GC, SIGSTOP, a slow unit) would finish a job that
 * is now another worker's: its rows, deletions and checkpoint would land over the live run's.
 *
 * An attempt is therefore named by (job id, started_on) and every write it makes is fenced by it:
 * - fence(): the warehouse's write transactions check, before COMMIT, that the job is still
 *   `active` with this attempt's start, locking its row FOR SHARE (pg-boss's expiry and the other
 *   worker's complete wait for that commit, so ownership cannot change in between);
 * - renew(): while the attempt works, its lease is extended (pg-boss has no API for it): the
 *   expiry is moved `timeout` past now. A renewal that finds nothing: the attempt was expired;
 * - settle(): complete, fail and hand-back run in one transaction with the same check FOR UPDATE,
 *   so a stale attempt cannot complete, fail or reset the live attempt's job.
 */
import type PgBoss from 'pg-boss';
import type pg from 'pg';
import type { Fence } from '../load/warehouse.ts';
import { IDLE_IN_TRANSACTION } from '../load/postgres/pool.ts';
import { QUEUE_NAME, QUEUE_SCHEMA } from './queue.ts';

/** The attempt of a job this worker runs. */
export interface Attempt {
  id: string;
  /** pg-boss's `started_on` as fetched (JavaScript keeps milliseconds of its microseconds). */
  startedOn: Date;
}

/** $1 queue, $2 job id, $3 started_on: the job's row while the attempt still owns it. */
const OWNED = `name = $1 AND id = CAST($2 AS uuid) AND state = 'active'
  AND started_on BETWEEN CAST($3 AS timestamptz) - interval '1 millisecond'
                     AND CAST($3 AS timestamptz) + interval '1 millisecond'`;

const params = (a: Attempt) => [QUEUE_NAME, a.id, a.startedOn.toISOString()];

/** The warehouse fence of an attempt (Warehouse.withFence). */
export function attemptFence(a: Attempt, onLost: (e: Error) => void): Fence {
  return {
    what: `job ${a.id}`,
    sql: `SELECT 1 AS owned FROM ${QUEUE_SCHEMA}.job WHERE ${OWNED} FOR SHARE`,
    params: params(a),
    onLost,
  };
}

/** Extends the attempt's lease to `timeoutSeconds` from now; false when it no longer owns the job. */
export async function renewLease(
  db: Pick<pg.Pool, 'query'>,
  a: Attempt,
  timeoutSeconds: number,
): Promise<boolean> {
  const r = await db.query(
    `UPDATE ${QUEUE_SCHEMA}.job SET expire_in = (now() - started_on) + CAST($4 AS double precision) * interval '1 second'
     WHERE ${OWNED}`,
    [...params(a), timeoutSeconds],
  );
  return (r.rowCount ?? 0) > 0;
}

/** pg-boss's `db` option: its statements run on our transaction's connection. */
export interface BossDb {
  executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

/**
 * Runs `fn` (a pg-boss complete/fail, or our hand-back) in one transaction that first locks the
 * job's row FOR UPDATE while the attempt owns it; returns false, changing nothing, when it does not.
 */
export async function settle(
  pool: pg.Pool,
  a: Attempt,
  fn: (db: BossDb, client: pg.PoolClient) => Promise<unknown>,
): Promise<boolean> {
  const client = await pool.connect();
  try {
    await client.query(`BEGIN; ${IDLE_IN_TRANSACTION}`);
    const owned = await client.query(
      `SELECT 1 FROM ${QUEUE_SCHEMA}.job WHERE ${OWNED} FOR UPDATE`,
      params(a),
    );
    if ((owned.rowCount ?? 0) === 0) {
      await client.query('ROLLBACK');
      return false;
    }
    await fn({ executeSql: (text, values) => client.query(text, values) }, client);
    await client.query('COMMIT');
    return true;
  } catch (e) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw e;
  } finally {
    client.release();
  }
}

export const completeAttempt = (pool: pg.Pool, boss: PgBoss, a: Attempt, output: object) =>
  settle(pool, a, (db) => boss.complete(QUEUE_NAME, a.id, output, { db }));

/**
 * The renewals stretched the job's expire_in to the attempt's whole run: it goes back to one
 * timeout, or a retry (pg-boss keeps the row's expire_in) whose worker dies before its first
 * renewal would wait that long to be expired and run again.
 */
const resetLease = (client: pg.PoolClient, a: Attempt, timeoutSeconds: number) =>
  client.query(
    `UPDATE ${QUEUE_SCHEMA}.job SET expire_in = CAST($3 AS double precision) * interval '1 second'
     WHERE name = $1 AND id = CAST($2 AS uuid)`,
    [QUEUE_NAME, a.id, timeoutSeconds],
  );

export const failAttempt = (
  pool: pg.Pool,
  boss: PgBoss,
  a: Attempt,
  output: object,
  timeoutSeconds: number,
) =>
  settle(pool, a, async (db, client) => {
    await resetLease(client, a, timeoutSeconds);
    await boss.fail(QUEUE_NAME, a.id, output, { db });
  });

/**
 * Back to the queue at once, for another worker, not counted as an attempt (pg-boss counts one
 * when a job that has started is fetched again): an interrupted attempt that wrote no checkpoint.
 */
export const handBackAttempt = (pool: pg.Pool, a: Attempt, timeoutSeconds: number) =>
  settle(pool, a, async (_db, client) => {
    await resetLease(client, a, timeoutSeconds);
    await client.query(
      `UPDATE ${QUEUE_SCHEMA}.job SET state = 'created', started_on = NULL, start_after = now()
       WHERE name = $1 AND id = CAST($2 AS uuid)`,
      [QUEUE_NAME, a.id],
    );
  });
