/**
 * A warehouse opened with `interruptOn` stops with the process: the statement in flight when the
 * signal aborts is interrupted (DuckDB's connection.interrupt()) or cancelled (PostgreSQL's
 * CancelRequest), it fails with the signal's reason (an interruption), and no statement starts
 * after it; the warehouse still closes, and the next one opened on the same target works. The
 * queries below would run for hours (DuckDB) or a minute (pg_sleep): only the stop ends them
 * within the test's timeout.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InterruptedError, isInterruption } from '../../src/abort.ts';
import { openWarehouse } from '../../src/load/index.ts';
import { warehouseTargets } from '../helpers/targets.ts';

/** A read that does not end by itself in any reasonable time. */
const ENDLESS = {
  duckdb: 'SELECT sum(a.range * b.range) AS s FROM range(1000000) a, range(1000000) b',
  postgres: 'SELECT pg_sleep(60) AS s',
} as const;

/** Resolves once PostgreSQL shows the endless query running (it is surely in flight then). */
async function pgRunning(url: string): Promise<void> {
  const c = new pg.Client(url);
  await c.connect();
  try {
    for (;;) {
      const r = await c.query(
        `SELECT 1 FROM pg_stat_activity WHERE state = 'active' AND query LIKE 'SELECT pg_sleep(60)%'`,
      );
      if (r.rows.length > 0) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    await c.end();
  }
}

for (const t of warehouseTargets('interrupt-statements')) {
  describe.skipIf(t.skip)(`a warehouse stopped by the process's signal (${t.dialect})`, () => {
    let target: string;
    beforeAll(async () => {
      target = await t.create();
      const w = await openWarehouse(target, { migrate: true });
      await w.close();
    });
    afterAll(() => t.drop());

    it('interrupts the query in flight, refuses the next, and closes', { timeout: 30_000 }, async () => {
      const stop = new AbortController();
      const w = await openWarehouse(target, { interruptOn: stop.signal });
      const running = w.query(ENDLESS[t.dialect]);
      if (t.dialect === 'postgres') await pgRunning(target);
      else await new Promise((resolve) => setTimeout(resolve, 300));
      stop.abort(new InterruptedError('SIGTERM'));
      const e = await running.then(
        () => null,
        (x: unknown) => x,
      );
      expect(e).toBeInstanceOf(InterruptedError);
      expect(isInterruption(e)).toBe(true);
      // No statement starts after the stop.
      await expect(w.listRuns(5)).rejects.toBeInstanceOf(InterruptedError);
      await w.close();
      // The warehouse itself is fine: the next process's open works.
      const next = await openWarehouse(target);
      try {
        expect(await next.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
      } finally {
        await next.close();
      }
    });

    it('without interruptOn, the stop of some other signal leaves it working', async () => {
      const stop = new AbortController();
      const w = await openWarehouse(target, { signal: stop.signal });
      try {
        stop.abort(new InterruptedError('SIGTERM'));
        expect(await w.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
      } finally {
        await w.close();
      }
    });
  });
}
