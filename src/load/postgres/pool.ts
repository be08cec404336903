/** The pg pool of one PostgreSQL warehouse, and transactions on it. */
import pg from 'pg';
import { warehouseTypes } from './type-parsers.ts';

/** Connections for concurrent batches (the sync closes units two at a time by default). */
const POOL_SIZE = 4;

/**
 * A transaction of ours left idle this long is ended by the server: a process stopped in the
 * middle of one (SIGSTOP, a VM paused, a GC storm) would otherwise keep its row locks, and a
 * fenced job's row FOR SHARE, for as long as it stays stopped, blocking the worker that took its
 * job over and pg-boss's expiry. Ours send their statements back to back, so a minute is never
 * reached by a live one. Set per transaction (SET LOCAL, in the statement that begins it), not as
 * a startup parameter, which connection poolers such as PgBouncer refuse.
 */
export const IDLE_IN_TRANSACTION = `SET LOCAL idle_in_transaction_session_timeout = '60s'`;

/**
 * A pool whose connections may be ended by the server while checked out (the idle timeout above,
 * a restart, a pg_terminate_backend): pg-pool listens for errors of idle connections only, and a
 * checked-out client's 'error' event would otherwise crash the process when it resumes. The
 * caller learns of it from its next query, which fails, and takes its usual failure path.
 */
export function guardedPool(config: pg.PoolConfig, onError: (err: Error) => void): pg.Pool {
  const pool = new pg.Pool(config);
  pool.on('error', onError);
  pool.on('connect', (client) => client.on('error', onError));
  return pool;
}

export function createPool(url: string, onError: (err: Error) => void): pg.Pool {
  return guardedPool(
    { connectionString: url, max: POOL_SIZE, types: warehouseTypes, application_name: 'geo-sync' },
    onError,
  );
}

/**
 * A single connection of the warehouse's (for the lock), with the same value conventions.
 * `keepAlive`: TCP keepalive probes after 10 s idle, so a peer that vanished is noticed by the OS.
 */
export function createClient(
  url: string,
  applicationName: string,
  opts: { keepAlive?: boolean } = {},
): pg.Client {
  return new pg.Client({
    connectionString: url,
    types: warehouseTypes,
    application_name: applicationName,
    ...(opts.keepAlive ? { keepAlive: true, keepAliveInitialDelayMillis: 10_000 } : {}),
  });
}

export interface TransactionOptions {
  /**
   * The statement that opens the transaction. @default 'BEGIN'. Nothing runs on the connection
   * before it: behind a transaction pooler that could be another server connection.
   */
  readonly begin?: string;
}

/**
 * Runs `fn` in one transaction on one pooled connection: COMMIT when it resolves, ROLLBACK when
 * it throws. A connection whose ROLLBACK fails is discarded rather than returned to the pool.
 */
export async function withTransaction<T>(
  pool: pg.Pool,
  fn: (client: pg.PoolClient) => Promise<T>,
  opts: TransactionOptions = {},
): Promise<T> {
  const client = await pool.connect();
  let discard: Error | undefined;
  try {
    await client.query(`${opts.begin ?? 'BEGIN'}; ${IDLE_IN_TRANSACTION}`);
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (e) {
    await client.query('ROLLBACK').catch((rollbackError: unknown) => {
      discard = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
    });
    throw e;
  } finally {
    client.release(discard);
  }
}
