/**
 * Backfills never lose, duplicate or half-write data, whatever happens to the process,
 * the API or the database. Each scenario ends by comparing the warehouse, row for row, with an
 * uninterrupted run over the same simulated account.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.ts';
import { runCli, startCli } from '../helpers/cli.ts';
import { dumpData, rollupMismatches, rowCounts } from '../helpers/dump.ts';
import { syncOnce, withWarehouse } from '../helpers/sync.ts';
import { warehouseTargets } from '../helpers/targets.ts';

const SEED = 11;
const EXECUTIONS_PER_DAY = 80;

for (const dialect of ['duckdb', 'postgres'] as const) {
  const targets = warehouseTargets(`resilience-${dialect}`).filter((t) => t.dialect === dialect);
  const t = targets[0]!;

  describe.skipIf(t.skip)(`backfill resilience on ${dialect}`, () => {
    let sim: RunningSimulator;
    let dates: string[];
    let reference: Record<string, unknown[]>;
    const created: (() => Promise<void>)[] = [];

    /** A fresh warehouse of this dialect for one scenario. */
    async function fresh(name: string): Promise<string> {
      const target = warehouseTargets(`${name}-${dialect}`).find((x) => x.dialect === dialect)!;
      created.push(() => target.drop());
      return target.create();
    }

    /** Environment for a child geo-sync: look-back 0, so finished days before yesterday are skipped on resume. */
    const childEnv = (warehouse: string) => ({
      GEO_BASE_URL: sim.url,
      GEO_API_KEY: 'sim-key',
      GEO_WAREHOUSE: warehouse,
      GEO_LOOKBACK_DAYS: '0',
      GEO_CONCURRENCY: '8',
      GEO_REQUESTS_PER_SECOND: '10000',
      GEO_RETRY_BASE_DELAY_MS: '5',
      GEO_BATCH_SIZE: '20',
    });

    beforeAll(async () => {
      // 6 days of history; the backfill covers the 3 oldest, all before the look-back window.
      sim = await startSimulator({
        seed: SEED,
        days: 6,
        executionsPerDay: EXECUTIONS_PER_DAY,
        faults: { latencyMs: 1 },
      });
      dates = sim.world.dates().slice(0, 3);
      const ref = await fresh('reference');
      const summary = await syncOnce({
        baseUrl: sim.url,
        target: ref,
        dates,
        kind: 'backfill',
        config: { lookbackDays: 0 },
      });
      expect(summary.status).toBe('success');
      reference = await dumpData(ref);
      expect(rowCounts(reference).prompt_executions).toBe(
        dates.reduce((n, d) => n + sim.world.dayTotals(d).executions, 0),
      );
    });

    afterAll(async () => {
      await sim?.close();
      for (const drop of created) await drop();
    });

    it('killed with kill -9 at several points and resumed equals an uninterrupted run', async () => {
      const target = await fresh('killed');
      const args = ['backfill', '--from', dates[0]!, '--to', dates[2]!, '--no-progress'];
      const units = sim.world.allPlatformTasks().length * dates.length;
      // Kill after the first finished unit, in the middle, and just before the end.
      for (const after of [1, Math.floor(units / 2), units - 1]) {
        const p = startCli(args, childEnv(target));
        await p.waitForLog(/"msg":"unit done"/, after).catch(() => undefined);
        p.child.kill('SIGKILL');
        await p.done;
        // Whatever committed, the per-day aggregates committed with it (written in the same
        // transaction).
        expect(await rollupMismatches(target, dates[0]!, dates[2]!)).toEqual([]);
      }
      // And once at an arbitrary moment inside a unit (between batches or mid-transaction).
      const p = startCli(args, childEnv(target));
      await p.waitForLog(/"msg":"plan"/);
      await new Promise((r) => setTimeout(r, 150));
      p.child.kill('SIGKILL');
      await p.done;
      expect(await rollupMismatches(target, dates[0]!, dates[2]!)).toEqual([]);

      const resumed = await runCli(args, childEnv(target));
      expect(resumed.code, resumed.stderr.slice(-2000)).toBe(0);
      expect(resumed.stdout).toMatch(/units: \d+ done, 0 failed, [1-9]\d* skipped/);
      expect(await dumpData(target)).toEqual(reference);
    });

    it('a backfill under rate limits, 10% 5xx, 5% resets and 1% malformed bodies ends with the same rows', async () => {
      const faulty = await startSimulator({
        seed: SEED,
        days: 6,
        executionsPerDay: EXECUTIONS_PER_DAY,
        faults: {
          rateLimitPerSecond: 400,
          retryAfterSeconds: 1,
          errorRate: 0.1,
          resetRate: 0.05,
          malformedRate: 0.01,
        },
      });
      try {
        const target = await fresh('faults');
        const summary = await syncOnce({
          baseUrl: faulty.url,
          target,
          dates,
          kind: 'backfill',
          config: { lookbackDays: 0, maxAttempts: 20 },
        });
        expect(summary.status).toBe('success');
        expect(summary.api.retries).toBeGreaterThan(0);
        expect(
          faulty.stats.faults.serverErrors + faulty.stats.faults.resets + faulty.stats.faults.malformed,
        ).toBeGreaterThan(0);
        expect(await dumpData(target)).toEqual(reference);
      } finally {
        await faulty.close();
      }
    });

    it('two concurrent runs: one runs, the other says who holds the lock and exits 4', async () => {
      const slow = await startSimulator({
        seed: SEED,
        days: 6,
        executionsPerDay: EXECUTIONS_PER_DAY,
        faults: { latencyMs: 20 },
      });
      try {
        const target = await fresh('concurrent');
        const env = { ...childEnv(target), GEO_BASE_URL: slow.url };
        const first = startCli(['backfill', '--from', dates[0]!, '--to', dates[2]!, '--no-progress'], env);
        await first.waitForLog(/"msg":"plan"/);
        const second = await runCli(['sync', '--date', dates[0]!, '--no-progress'], env);
        expect(second.code).toBe(4);
        expect(second.stderr).toMatch(/(lock|warehouse open).*geo-sync backfill pid \d+/);
        first.child.kill('SIGTERM');
        const r = await first.done;
        expect(r.code).toBe(130);
      } finally {
        await slow.close();
      }
    });

    it.skipIf(dialect !== 'postgres')(
      'PostgreSQL connections dropped mid-run: units fail or retry cleanly, never a checkpoint without its rows',
      async () => {
        const target = await fresh('pgdrop');
        const db = new URL(target).pathname.slice(1);
        const p = startCli(
          ['backfill', '--from', dates[0]!, '--to', dates[2]!, '--no-progress'],
          childEnv(target),
        );
        await p.waitForLog(/"msg":"unit done"/, 2);
        // What a restart looks like to geo-sync: every server connection of its database dies.
        // (The shared server itself is not restarted: other test files use it concurrently.)
        await withWarehouse('postgres://postgres@127.0.0.1:5432/postgres', (w) =>
          w.query(
            'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
            [db],
          ),
        );
        await p.done;
        // Whatever the run did, every checkpoint vouches for rows that are there.
        await withWarehouse(target, async (w) => {
          const units = await w.query(
            `SELECT c.task_id, CAST(c.date AS VARCHAR) AS date, c.executions,
                    (SELECT COUNT(*) FROM geo.prompt_executions e WHERE e.task_id = c.task_id AND e.date_time = c.date) AS stored
             FROM geo.sync_checkpoints c`,
          );
          for (const u of units) expect(Number(u.stored)).toBe(Number(u.executions));
        });
        const resumed = await runCli(
          ['backfill', '--from', dates[0]!, '--to', dates[2]!, '--no-progress'],
          childEnv(target),
        );
        expect(resumed.code, resumed.stderr.slice(-2000)).toBe(0);
        expect(await dumpData(target)).toEqual(reference);
      },
    );
  });
}

describe('command line contract', () => {
  it('bad config: one clear line per problem, exit 2', async () => {
    const r = await runCli(['sync', '--no-progress'], {
      GEO_CONCURRENCY: 'many',
      GEO_WAREHOUSE: 'mysql://x',
      GEO_LOOKBACK_DAYS: '-1',
      GEO_BASE_URL: 'http://127.0.0.1:9',
      GEO_API_KEY: 'k',
    });
    expect(r.code).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^config: GEO_CONCURRENCY: expected an integer/);
    expect(r.stderr).toMatch(
      /config: GEO_WAREHOUSE \(warehouse\): expected duckdb:<file path> or a postgres:\/\/ URL/,
    );
    expect(r.stderr).toMatch(/config: GEO_LOOKBACK_DAYS \(lookbackDays\)/);
  });

  it.each([
    [['sync', '--date', '2026-02-30'], /--date.*expected a day as YYYY-MM-DD/],
    [['backfill', '--from', '2026-11-02'], /required option '--to/],
    [
      ['backfill', '--from', '2026-11-05', '--to', '2026-11-01'],
      /--from 2026-11-05 is after --to 2026-11-01/,
    ],
    [['sync', '--customer', 'abc'], /--customer.*expected an ID/],
    [
      [
        'tasks',
        'create',
        '--brand',
        'x',
        '--brand-desc',
        'a',
        '--prompts',
        'q',
        '--platforms',
        'deepseek,chatgpt',
      ],
      /--platforms: each platform must be one of/,
    ],
    [['sync', '--wait-for-lock', 'soon'], /--wait-for-lock.*expected a whole number/],
    [['schedule', '--lookback-days', 'three'], /--lookback-days.*expected a whole number/],
    [['nonsense'], /unknown command/],
  ])('bad usage %j exits 2 with a clear line', async (args, message) => {
    const r = await runCli(args, {
      GEO_BASE_URL: 'http://127.0.0.1:9',
      GEO_API_KEY: 'k',
      GEO_WAREHOUSE: 'duckdb:/tmp/geo-never-used.duckdb',
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });
});
