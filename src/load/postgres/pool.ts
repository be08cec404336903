/** The pg pool of one PostgreSQL warehouse, and transactions on it. */
import pg from 'pg';
import { untilAborted } from '../../abort.ts';
import { UnreachableError, unreachableReason } from '../../unreachable.ts';
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

/** How long a connection may take to open when the URL does not say (JDBC's default too). */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

/**
 * How long a new connection to `url` may take to open: libpq's `connect_timeout` parameter of the
 * URL (seconds; 0 waits as long as the operating system does), else DEFAULT_CONNECT_TIMEOUT_MS. A
 * server that accepts the connection and never answers (a host down behind a load balancer, a
 * firewall that drops packets) would otherwise hold a command for good.
 */
export function connectTimeoutMs(url: string): number {
  let given: string | null = null;
  try {
    given = new URL(url).searchParams.get('connect_timeout');
  } catch {
    // Not a URL this can read: pg reports it when it connects.
  }
  if (given === null || !/^\s*\d+\s*$/.test(given)) return DEFAULT_CONNECT_TIMEOUT_MS;
  return Number(given) * 1000;
}

/**
 * Why a connection to `url` failed when nothing could be reached there (refused, no such host,
 * no answer within the connect timeout); undefined for any other failure (a refused password).
 */
export function connectFailure(e: unknown, url: string): string | undefined {
  const reason = unreachableReason(e);
  if (reason) return reason;
  // pg's own connect timeout (the Client's "timeout expired"; the pool's wording wraps it).
  if (
    e instanceof Error &&
    /^(timeout expired|Connection terminated due to connection timeout)/.test(e.message)
  )
    return `no answer within ${connectTimeoutMs(url) / 1000} s`;
  return undefined;
}

/**
 * pg's Client with a connect timeout of its own. Not the pool's `connectionTimeoutMillis`: that
 * one also bounds the wait for a free pooled connection, which a long transaction of the same
 * process may rightly hold for minutes.
 */
function clientClass(timeoutMs: number): NonNullable<pg.PoolConfig['Client']> {
  return class extends pg.Client {
    constructor(config?: pg.ClientConfig) {
      super({ ...config, connectionTimeoutMillis: timeoutMs });
    }
  } as unknown as NonNullable<pg.PoolConfig['Client']>;
}

export function createPool(url: string, onError: (err: Error) => void): pg.Pool {
  return guardedPool(
    {
      connectionString: url,
      max: POOL_SIZE,
      types: warehouseTypes,
      application_name: 'geo-sync',
      Client: clientClass(connectTimeoutMs(url)),
    },
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
    connectionTimeoutMillis: connectTimeoutMs(url),
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

/**
 * Opens `client`, ending at once (with the signal's reason) when `signal` aborts; a failure to
 * reach the server names `setting` (UnreachableError), any other failure is rethrown as it is.
 */
export async function connectClient(
  client: pg.Client,
  url: string,
  setting: string,
  target: string,
  signal?: AbortSignal,
): Promise<void> {
  try {
    await untilAborted(client.connect(), signal);
  } catch (e) {
    if (signal?.aborted) {
      // Whatever the connect comes to, nothing waits for it: drop the socket.
      (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
      throw e;
    }
    const reason = connectFailure(e, url);
    if (reason) throw new UnreachableError(setting, target, reason, { cause: e });
    throw e;
  }
}
