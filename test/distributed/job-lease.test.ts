/**
 * A job's lease on real PostgreSQL and pg-boss: renewals stretch expire_in over the attempt's run,
 * and a failed or handed-back attempt leaves the job with one timeout again, so that the next
 * attempt's worker, killed before its first renewal, is expired after one timeout and not after
 * however long the previous attempt ran; and an attempt whose job another attempt now runs can
 * change nothing of it (a stale fail or hand-back used to reset the live job).
 */
import type PgBoss from 'pg-boss';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  completeAttempt,
  failAttempt,
  handBackAttempt,
  renewLease,
  type Attempt,
} from '../../src/distributed/job-lease.ts';
import { QUEUE_NAME, startBoss } from '../../src/distributed/queue.ts';
import { silentLogger } from '../../src/log.ts';
import { runCli } from '../helpers/cli.ts';
import { sql, TestDatabases } from '../helpers/distributed.ts';
import { postgresReachable } from '../helpers/postgres.ts';

const pgUp = await postgresReachable();
const TIMEOUT = 30;

describe.skipIf(!pgUp)('job lease (PostgreSQL, pg-boss)', () => {
  const dbs = new TestDatabases();
  let url: string;
  let boss: PgBoss;
  let pool: pg.Pool;

  beforeAll(async () => {
    url = await dbs.fresh();
    const m = await runCli(['migrate'], { GEO_WAREHOUSE: url, GEO_API_KEY: 'unused' });
    expect(m.code, m.stderr).toBe(0);
    boss = await startBoss(url, silentLogger, { jobTimeoutSeconds: TIMEOUT });
    pool = new pg.Pool({ connectionString: url, max: 2 });
  });
  afterAll(async () => {
    await pool?.end();
    await boss?.stop({ graceful: false, close: true });
    await dbs.dropAll();
  });

  /** Sends a job, fetches it and pretends its attempt has run for an hour, renewed all along. */
  const longAttempt = async (): Promise<Attempt> => {
    const id = await boss.send(
      QUEUE_NAME,
      { test: true },
      { retryLimit: 3, retryDelay: 0, expireInSeconds: TIMEOUT },
    );
    const [job] = await boss.fetch(QUEUE_NAME, { batchSize: 1, includeMetadata: true });
    expect(job?.id).toBe(id);
    await sql(url, `UPDATE geo_queue.job SET started_on = started_on - interval '1 hour' WHERE id = $1`, [
      id,
    ]);
    const [row] = await sql<{ started_on: Date }>(url, 'SELECT started_on FROM geo_queue.job WHERE id = $1', [
      id,
    ]);
    const attempt = { id: id!, startedOn: row!.started_on };
    expect(await renewLease(pool, attempt, TIMEOUT)).toBe(true);
    expect(await expireSeconds(id!)).toBeGreaterThan(3600);
    return attempt;
  };
  const expireSeconds = async (id: string) => {
    const [r] = await sql<{ s: number }>(
      url,
      'SELECT extract(epoch FROM expire_in)::float8 AS s FROM geo_queue.job WHERE id = $1',
      [id],
    );
    return Number(r!.s);
  };
  const state = async (id: string) =>
    (await sql<{ state: string }>(url, 'SELECT state FROM geo_queue.job WHERE id = $1', [id]))[0]!.state;

  it('a failed attempt leaves its retry one timeout, not the hour it ran', async () => {
    const a = await longAttempt();
    expect(await failAttempt(pool, boss, a, { message: 'boom' }, TIMEOUT)).toBe(true);
    expect(await state(a.id)).toBe('retry');
    expect(await expireSeconds(a.id)).toBe(TIMEOUT);
  });

  it('a stale attempt cannot fail, complete, hand back or renew the job another attempt now runs', async () => {
    const id = await boss.send(QUEUE_NAME, { test: 'stale' }, { retryLimit: 3, expireInSeconds: TIMEOUT });
    const [job] = await boss.fetch(QUEUE_NAME, { batchSize: 1, includeMetadata: true });
    expect(job?.id).toBe(id);
    const stale: Attempt = { id: id!, startedOn: new Date(job!.startedOn) };
    // Expired and fetched again by another worker: a new started_on, still active.
    const [row] = await sql<{ started_on: Date; retry_count: number }>(
      url,
      `UPDATE geo_queue.job SET started_on = started_on + interval '5 seconds', retry_count = retry_count + 1
       WHERE id = $1 RETURNING started_on, retry_count`,
      [id],
    );
    const live: Attempt = { id: id!, startedOn: row!.started_on };
    expect(await failAttempt(pool, boss, stale, { message: 'stale' }, TIMEOUT)).toBe(false);
    expect(await completeAttempt(pool, boss, stale, { stale: true })).toBe(false);
    expect(await handBackAttempt(pool, stale, TIMEOUT)).toBe(false);
    expect(await renewLease(pool, stale, TIMEOUT)).toBe(false);
    const [after] = await sql<{ state: string; started_on: Date; retry_count: number; output: unknown }>(
      url,
      'SELECT state, started_on, retry_count, output FROM geo_queue.job WHERE id = $1',
      [id],
    );
    expect(after).toEqual({
      state: 'active',
      started_on: row!.started_on,
      retry_count: row!.retry_count,
      output: null,
    });
    // The live attempt settles it.
    expect(await completeAttempt(pool, boss, live, { live: true })).toBe(true);
    expect(await state(id!)).toBe('completed');
  });

  it('a handed-back attempt likewise', async () => {
    const a = await longAttempt();
    expect(await handBackAttempt(pool, a, TIMEOUT)).toBe(true);
    expect(await state(a.id)).toBe('created');
    expect(await expireSeconds(a.id)).toBe(TIMEOUT);
  });
});
