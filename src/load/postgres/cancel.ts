/**
 * Stopping PostgreSQL work when the process stops: the query a connection has in flight is
 * cancelled with the protocol's CancelRequest (what psql sends on Ctrl-C), sent on a connection
 * of its own with the backend's key. PostgreSQL then fails that query ("canceling statement due
 * to user request") and its transaction rolls back; a connection pooler (PgBouncer) forwards the
 * request to the server connection running it. A request that finds nothing running does nothing.
 */
import { connect, type Socket } from 'node:net';
import type pg from 'pg';
import { finishBeforeExit } from '../../abort.ts';

/** The protocol's CancelRequest code (PostgreSQL's frontend/backend protocol, "CancelRequest"). */
const CANCEL_REQUEST_CODE = 80877102;
/**
 * How long a cancel request may stay open, from its start, before it is given up: the process is
 * stopping. Given up, it closes first, which PgBouncer 1.18 does not survive (below): the lesser
 * harm than a stop that hangs on a pooler that never answers.
 */
const CANCEL_TIMEOUT_MS = 5_000;

interface BackendKey {
  processID: number | null;
  secretKey: number | null;
}

/** Cancels what `client` runs now, if anything; never throws (the stop goes on regardless). */
export function cancelQuery(client: pg.ClientBase): Promise<void> {
  const { processID, secretKey } = client as unknown as BackendKey;
  const { host, port } = client as unknown as { host: string; port: number };
  if (processID === null || secretKey === null || !host) return Promise.resolve();
  const sent = new Promise<void>((resolve) => {
    const socket: Socket = host.startsWith('/') ? connect(`${host}/.s.PGSQL.${port}`) : connect(port, host);
    // Called only from the timer and the socket's events, which come after these lines.
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve();
    };
    const timer = setTimeout(done, CANCEL_TIMEOUT_MS);
    socket.on('error', done);
    socket.on('close', done);
    socket.on('connect', () => {
      const request = Buffer.alloc(16);
      request.writeInt32BE(16, 0);
      request.writeInt32BE(CANCEL_REQUEST_CODE, 4);
      request.writeInt32BE(processID, 8);
      request.writeInt32BE(secretKey, 12);
      // The server reads it and closes the connection: 'close' resolves. Not half-closed from
      // this side (socket.end): PgBouncer 1.18 took the FIN that came with the request for a
      // client gone ("client unexpected eof") and dropped the cancel, so the query ran on and the
      // stop waited for it. libpq's PQcancel also sends and then waits for the server to close.
      // Nor closed before the server closes it, even once the query has failed: PgBouncer 1.18
      // exits ("FATAL ... disconnect_client(): bad client state: 0") when a cancel's client goes
      // before the cancel it forwarded is done (pgbouncer/pgbouncer#801, fixed by pull request
      // #846), for every client. So the process waits for it before it exits (finishBeforeExit).
      socket.write(request);
    });
  });
  finishBeforeExit(sent);
  return sent;
}

/**
 * On `signal`'s abort, cancels the query in flight of each connection `pool` has lent out (the
 * ones the pool holds idle run nothing). Returns the unsubscribe.
 */
export function cancelOnAbort(pool: pg.Pool, signal: AbortSignal | undefined): () => void {
  if (!signal) return () => undefined;
  const lent = new Set<pg.PoolClient>();
  const onAcquire = (c: pg.PoolClient) => lent.add(c);
  const onRelease = (_err: Error | undefined, c: pg.PoolClient) => lent.delete(c);
  pool.on('acquire', onAcquire);
  pool.on('release', onRelease);
  const onAbort = () => {
    for (const c of lent) void cancelQuery(c);
  };
  signal.addEventListener('abort', onAbort, { once: true });
  return () => {
    signal.removeEventListener('abort', onAbort);
    pool.off('acquire', onAcquire);
    pool.off('release', onRelease);
  };
}

/** On `signal`'s abort, cancels what `client` runs then. Returns the unsubscribe. */
export function cancelClientOnAbort(client: pg.ClientBase, signal: AbortSignal | undefined): () => void {
  if (!signal) return () => undefined;
  const onAbort = () => void cancelQuery(client);
  signal.addEventListener('abort', onAbort, { once: true });
  return () => signal.removeEventListener('abort', onAbort);
}
