/**
 * PostgreSQL: the no-overlap lock is a session lock on its own connection. When that connection
 * dies mid-run (here: the test terminates its backend), the run must stop with exit 1 instead of
 * going on unlocked, and the next run redoes the units that had no checkpoint yet.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.ts';
import { runCli, startCli } from '../helpers/cli.ts';
import { postgresReachable, withTestDatabase } from '../helpers/postgres.ts';

const pgUp = await postgresReachable();

describe.skipIf(!pgUp)('the PostgreSQL lock connection is lost during a run', () => {
  const url = withTestDatabase();
  let sim: RunningSimulator;

  beforeAll(async () => {
    // Slow answers, so the run is still going when its lock is taken away.
    sim = await startSimulator({ seed: 13, days: 7, executionsPerDay: 30, faults: { latencyMs: 20 } });
  });
  afterAll(async () => {
    await sim?.close();
  });

  const count = async (table: string) =>
    (await sql<{ n: number }>(`SELECT count(*)::int AS n FROM geo.${table}`))[0]!.n;

  async function sql<T extends pg.QueryResultRow>(text: string): Promise<T[]> {
    const c = new pg.Client(url());
    await c.connect();
    try {
      return (await c.query<T>(text)).rows;
    } finally {
      await c.end();
    }
  }

  it(
    'the run stops with exit 1, recorded as failed; the next run redoes the rest',
    { timeout: 60_000 },
    async () => {
      // Days before the look-back window: a finished unit of these is never redone.
      const dates = sim.world.dates().slice(0, 2);
      const env = {
        GEO_BASE_URL: sim.url,
        GEO_API_KEY: 'sim-key',
        GEO_WAREHOUSE: url(),
        GEO_CONCURRENCY: '4',
        GEO_REQUESTS_PER_SECOND: '5000',
        GEO_LOOKBACK_DAYS: '0',
        // Commits as it reads (no linger), so its first "unit done" comes while it still reads.
        GEO_WRITE_LINGER_MS: '0',
      };
      const args = ['backfill', '--from', dates[0]!, '--to', dates[dates.length - 1]!, '--no-progress'];
      const p = startCli(args, env);
      await p.waitForLog(/"msg":"unit done"/);
      const killed = await sql<{ ok: boolean }>(
        `SELECT pg_terminate_backend(backend_pid) AS ok FROM geo.sync_lock`,
      );
      expect(killed).toEqual([{ ok: true }]);
      const r = await p.done;
      expect(r.code, r.stderr.slice(-3000)).toBe(1);
      expect(r.stderr).toMatch(/the warehouse lock was lost/);

      const [run] = await sql<{ status: string; error: string; units_total: number }>(
        `SELECT status, error, units_total FROM geo.sync_runs ORDER BY started_at DESC LIMIT 1`,
      );
      expect(run).toMatchObject({ status: 'failed', error: expect.stringMatching(/lock was lost/) });
      const checkpointed = await count('sync_checkpoints');
      expect(checkpointed).toBeLessThan(run!.units_total);

      // The next run takes the lock and does exactly the units that had no checkpoint.
      const again = await runCli(args, env);
      expect(again.code, again.stderr.slice(-3000)).toBe(0);
      const [second] = await sql<{ status: string; units_total: number; units_done: number }>(
        `SELECT status, units_total, units_done FROM geo.sync_runs ORDER BY started_at DESC LIMIT 1`,
      );
      expect(second).toEqual({
        status: 'success',
        units_total: run!.units_total - checkpointed,
        units_done: run!.units_total - checkpointed,
      });
      expect(await count('sync_checkpoints')).toBe(run!.units_total);
    },
  );
});
