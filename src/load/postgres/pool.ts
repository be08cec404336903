/** The pg pool of one PostgreSQL warehouse, and transactions on it. */
import pg from 'pg';
import { warehouseTypes } from './type-parsers.ts';

/** Connections for concurrent batches (the sync closes units two at a time by default). */
const POOL_SIZE = 4;

export function createPool(url: string): pg.Pool {
  return new pg.Pool({
    connectionString: url,
    max: POOL_SIZE,
    types: warehouseTypes,
    application_name: 'geo-sync',
  });
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
  /** The statement that opens the transaction. @default 'BEGIN' */
  readonly begin?: string;
  /** Runs on the connection before the transaction opens (e.g. creating its staging tables). */
  readonly prepare?: (client: pg.PoolClient) => Promise<void>;
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
    if (opts.prepare) await opts.prepare(client);
    await client.query(opts.begin ?? 'BEGIN');
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
