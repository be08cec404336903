/**
 * Is a connection a PostgreSQL session of its own, or a client of a pooler in transaction (or
 * statement) mode, which runs each transaction on whichever server connection is free?
 *
 * Nothing a client can ask tells a pooler's mode (PgBouncer's SHOW pool_mode is for its admin
 * console only), so it is observed: the backend pid of the connection and of a second one opened
 * on the same URL, in the order connection, second, second, connection. A session keeps its
 * backend for life and never shares it, so every answer of one is the same and the two differ.
 * A transaction pooler hands the second connection the server the first just released (PgBouncer's
 * default, LIFO), or moves one of them to another server (round robin: two statements in a row
 * on the second catch two servers that alternate). Either shows, one connection's pid changing or
 * the two sharing one. A busy pooler may hide it now and then; the lock stays safe regardless (its
 * transaction pins a server connection), this only decides whether it is refused.
 */
import type { Logger } from 'pino';
import type pg from 'pg';
import { createClient } from './pool.ts';

/** How long the check may wait for the second connection (a session pooler that is full). */
const CHECK_TIMEOUT_MS = 10_000;

/**
 * Undefined when `client` behaves as a session of its own (or the check could not tell, which is
 * logged); otherwise what was seen, in a few words for the message that refuses it.
 */
export async function checkSession(
  client: pg.Client,
  url: string,
  logger: Logger,
): Promise<string | undefined> {
  const other = createClient(url, 'geo-sync lock check');
  // An error of the second connection (the server ends it) must not crash the process.
  other.on('error', () => undefined);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), CHECK_TIMEOUT_MS);
  });
  const pidOf = async (c: pg.Client) =>
    Number((await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid);
  const observe = async () => {
    await other.connect();
    const own = [await pidOf(client)];
    const second = [await pidOf(other), await pidOf(other)];
    own.push(await pidOf(client));
    return { own, second };
  };
  try {
    const seen = await Promise.race([observe(), timeout]).catch((e: unknown) => e as Error);
    if (seen === 'timeout' || seen instanceof Error) {
      logger.warn(
        { err: seen === 'timeout' ? undefined : seen },
        `could not tell whether the lock connection goes through a transaction pooler (${seen === 'timeout' ? 'a second connection got no answer in 10 s' : 'a second connection failed'})`,
      );
      return undefined;
    }
    const { own, second } = seen;
    if (own.some((p) => second.includes(p))) return 'two of its connections ran on one server session';
    if (new Set(own).size > 1 || new Set(second).size > 1)
      return "one connection's statements ran on different server sessions";
    return undefined;
  } finally {
    clearTimeout(timer);
    await Promise.race([other.end(), new Promise((r) => setTimeout(r, 1000).unref())]).catch(() => undefined);
    (other as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
  }
}
