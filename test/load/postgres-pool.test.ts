/**
 * The PostgreSQL pools (warehouse and job queue): a connection the server ends while it is
 * checked out (the idle-in-transaction timeout of a stopped process, a restart,
 * pg_terminate_backend) makes that connection's next query fail, and is reported, instead of
 * crashing the process with an unhandled 'error' event; every transaction carries the idle
 * timeout as SET LOCAL (a startup parameter would be refused by PgBouncer).
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createPool, withTransaction } from '../../src/load/postgres/pool.ts';
import { postgresReachable, withTestDatabase } from '../helpers/postgres.ts';

const pgUp = await postgresReachable();

describe.skipIf(!pgUp)('PostgreSQL pool', () => {
  const url = withTestDatabase();

  it('a checked-out connection ended by the server fails its next query and is reported, not thrown', async () => {
    const errors: Error[] = [];
    const pool = createPool(url(), (e) => errors.push(e));
    const admin = new pg.Client(url());
    await admin.connect();
    try {
      const client = await pool.connect();
      const [{ pid }] = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows as [
        { pid: number },
      ];
      await client.query('BEGIN');
      // Ended while idle in its transaction, as the server's timeout ends a stopped process's.
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
      for (let i = 0; i < 50 && errors.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(errors.length).toBeGreaterThan(0);
      await expect(client.query('SELECT 1')).rejects.toThrow();
      client.release(true);
      // The pool goes on with a new connection.
      expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      await admin.end();
      await pool.end();
    }
  });

  it('every transaction has the server end it after a minute idle; outside one, nothing is set', async () => {
    const pool = createPool(url(), () => undefined);
    try {
      const inside = await withTransaction(pool, async (c) =>
        String(
          (await c.query('SHOW idle_in_transaction_session_timeout')).rows[0]
            ?.idle_in_transaction_session_timeout,
        ),
      );
      expect(inside).toBe('1min');
      const outside = (await pool.query('SHOW idle_in_transaction_session_timeout')).rows[0];
      expect(outside).toEqual({ idle_in_transaction_session_timeout: '0' });
    } finally {
      await pool.end();
    }
  });
});
