/**
 * The cancel request a stopping process sends (load/postgres/cancel.ts), against a server on a
 * real socket that takes its time to close, as PgBouncer does while it forwards the cancel: the
 * request is the protocol's 16 bytes, the client does not close first (within its 5 s), and what
 * a stopped command waits for before it exits (abort.ts stopWorkFinished), and the PostgreSQL
 * driver's close before it ends its pool, ends only once the server has closed. PgBouncer 1.18
 * exits when a cancel's client goes first (test/integration/pgbouncer.test.ts runs the real one).
 */
import { createServer, type Socket } from 'node:net';
import type pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { stopWorkFinished } from '../../src/abort.ts';
import { silentLogger } from '../../src/log.ts';
import { cancelQuery } from '../../src/load/postgres/cancel.ts';
import { PostgresDriver } from '../../src/load/postgres/driver.ts';
import { postgresReachable, withTestDatabase } from '../helpers/postgres.ts';

const pgUp = await postgresReachable();

interface Seen {
  request: Buffer;
  /** Whether the client closed its side before the server closed the connection. */
  clientClosedFirst: boolean;
  serverClosedAt: number;
}

/** A server that reads a cancel request and closes `holdMs` later, recording what it saw. */
async function slowCanceller(holdMs: number) {
  const seen: Seen[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((s) => {
    sockets.add(s);
    const entry: Seen = { request: Buffer.alloc(0), clientClosedFirst: false, serverClosedAt: 0 };
    seen.push(entry);
    let closing = false;
    s.on('data', (d: Buffer) => {
      entry.request = Buffer.concat([entry.request, d]);
      if (entry.request.length < 16 || closing) return;
      closing = true;
      setTimeout(() => {
        entry.serverClosedAt = performance.now();
        s.destroy();
      }, holdMs);
    });
    s.on('end', () => {
      if (!entry.serverClosedAt) entry.clientClosedFirst = true;
    });
    s.on('close', () => {
      if (!entry.serverClosedAt) entry.clientClosedFirst = true;
      sockets.delete(s);
    });
    s.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** What cancelQuery reads of a connected pg client: its backend's key and where it connected. */
const connected = (port: number, processID: number, secretKey: number) =>
  ({ processID, secretKey, host: '127.0.0.1', port }) as unknown as pg.ClientBase;

describe('cancel requests', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  it('sends the CancelRequest, never closes first, and is settled only once the server closed', async () => {
    const server = await slowCanceller(300);
    close = server.close;
    const sent = [cancelQuery(connected(server.port, 4242, -7)), cancelQuery(connected(server.port, 17, 99))];
    await stopWorkFinished();
    const settledAt = performance.now();
    expect(server.seen).toHaveLength(2);
    for (const s of server.seen) {
      expect(s.clientClosedFirst).toBe(false);
      expect(s.serverClosedAt).toBeGreaterThan(0);
      expect(settledAt).toBeGreaterThanOrEqual(s.serverClosedAt);
    }
    const requests = server.seen.map((s) => [
      s.request.length,
      s.request.readInt32BE(0),
      s.request.readInt32BE(4),
      s.request.readInt32BE(8),
      s.request.readInt32BE(12),
    ]);
    expect(requests).toEqual(
      expect.arrayContaining([
        [16, 16, 80877102, 4242, -7],
        [16, 16, 80877102, 17, 99],
      ]),
    );
    await Promise.all(sent);
    // Nothing in flight any more: settled at once.
    await stopWorkFinished();
  });

  describe.skipIf(!pgUp)('the PostgreSQL driver', () => {
    const url = withTestDatabase();

    it('closes its pool only once a cancel in flight has been closed by the server', async () => {
      const server = await slowCanceller(300);
      close = server.close;
      const driver = await PostgresDriver.open({ url: url(), description: 'test', logger: silentLogger });
      void cancelQuery(connected(server.port, 5, 6));
      await driver.close();
      const closedAt = performance.now();
      expect(server.seen).toHaveLength(1);
      expect(server.seen[0]!.clientClosedFirst).toBe(false);
      expect(server.seen[0]!.serverClosedAt).toBeGreaterThan(0);
      expect(closedAt).toBeGreaterThanOrEqual(server.seen[0]!.serverClosedAt);
    });
  });

  it('a client without a backend key sends nothing and leaves nothing to wait for', async () => {
    await cancelQuery({
      processID: null,
      secretKey: null,
      host: '127.0.0.1',
      port: 1,
    } as unknown as pg.ClientBase);
    await stopWorkFinished();
  });

  it('a server that cannot be reached settles it too (the stop goes on)', async () => {
    const server = await slowCanceller(0);
    const port = server.port;
    await server.close();
    await cancelQuery(connected(port, 1, 1));
    await stopWorkFinished();
  });
});
