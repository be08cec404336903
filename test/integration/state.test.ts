/**
 * `geo-sync state show|reset` on both warehouses: the real CLI over a warehouse filled from the
 * simulator. show reports finished / failed / never-run units per day; reset forgets exactly the
 * chosen checkpoints (and their executions' change-detection fingerprints), and the next run
 * re-reads exactly those units, every child of their executions included (and nothing else).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApi, runLocked } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import type { ApiPort } from '../../src/extract/port.ts';
import { openWarehouse } from '../../src/load/index.ts';
import { silentLogger } from '../../src/log.ts';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.ts';
import type { RunSummary } from '../../src/sync/run.ts';
import { dayStates, unitStatuses } from '../../src/sync/state.ts';
import { daysBetween } from '../../src/transform/time.ts';
import { runCli } from '../helpers/cli.ts';
import { syncOnce, withWarehouse } from '../helpers/sync.ts';
import { warehouseTargets } from '../helpers/targets.ts';

const RESULTS = 'GET /api/v2/geo/task/results';

for (const target of warehouseTargets('state')) {
  describe.skipIf(target.skip)(`state show and reset on ${target.dialect}`, () => {
    let sim: RunningSimulator;
    let url: string;
    let env: Record<string, string>;
    let days: string[];
    let tasks: number[];

    beforeAll(async () => {
      url = await target.create();
      sim = await startSimulator({ seed: 5, days: 4, executionsPerDay: 24 });
      // The three oldest days: all before the look-back window (0 days), so finished units are skipped.
      days = sim.world.dates().slice(0, 3);
      tasks = sim.world
        .allPlatformTasks()
        .map((t) => t.task_id)
        .sort((a, b) => a - b);
      env = { GEO_WAREHOUSE: url, GEO_LOG_LEVEL: 'warn' };
    });
    afterAll(async () => {
      await sim?.close();
      await target.drop();
    });

    const backfill = () =>
      syncOnce({ baseUrl: sim.url, target: url, dates: days, kind: 'backfill', config: { lookbackDays: 0 } });

    /** A forced backfill of one day whose task/results fail for one unit: it fails, the others finish. */
    async function backfillFailing(failing: { task_id: number; date: string }): Promise<RunSummary> {
      const config = loadConfig({
        env: {},
        overrides: {
          baseUrl: sim.url,
          apiKey: 'sim-key',
          warehouse: url,
          lookbackDays: 0,
          requestsPerSecond: 10_000,
        },
      });
      const api = createApi(config, silentLogger);
      const port: ApiPort = {
        ...api.port,
        resultPages: (task_id, date) =>
          task_id === failing.task_id && date === failing.date
            ? {
                [Symbol.asyncIterator]: () => ({
                  next: () => Promise.reject(new Error('injected: task/results unavailable')),
                }),
              }
            : api.port.resultPages(task_id, date),
      };
      const warehouse = await openWarehouse(url, { migrate: true });
      try {
        return await runLocked({ ...api, port }, warehouse, config, silentLogger, {
          kind: 'backfill',
          dates: [failing.date],
          customers: [],
          force: true,
          args: {},
          waitForLockMs: 0,
        });
      } finally {
        await warehouse.close();
        await api.close();
      }
    }

    /** What `state show --json` prints, computed in-process (each CLI start costs seconds). */
    const states = (from: string, to: string) =>
      withWarehouse(url, async (w) => {
        await w.migrate();
        const d = daysBetween(from, to);
        return dayStates(d, unitStatuses(d, await w.platformTaskIds(), await w.unitRecords(from, to)));
      });

    const showJson = async (from: string, to: string) => {
      const r = await runCli(['state', 'show', '--from', from, '--to', to, '--json'], env);
      expect(r.code, r.stderr).toBe(0);
      return r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { date: string; finished: number; failed: number; neverRun: number });
    };

    it('show: before any run every unit is never run; after a backfill its days are finished', async () => {
      // No platform task known yet: nothing planned, nothing to report.
      expect(await states(days[0]!, days[0]!)).toEqual([
        { date: days[0], finished: 0, failed: 0, neverRun: 0 },
      ]);
      const s = await backfill();
      expect(s.status).toBe('success');
      expect(s.counters.unitsDone).toBe(days.length * tasks.length);
      const after = sim.world.dates()[3]!;
      expect(await showJson(days[0]!, after)).toEqual([
        ...days.map((date) => ({ date, finished: tasks.length, failed: 0, neverRun: 0 })),
        { date: after, finished: 0, failed: 0, neverRun: tasks.length },
      ]);
      const text = await runCli(['state', 'show', '--from', days[0]!, '--to', after], env);
      expect(text.stdout).toContain(
        `units of ${tasks.length} known platform task(s), ${days[0]} .. ${after}: ${days.length * tasks.length} finished, 0 failed, ${tasks.length} never run`,
      );
      expect(text.stdout).toMatch(new RegExp(`^${after} +0 +0 +${tasks.length}$`, 'm'));
    });

    it('reset forgets exactly the chosen units, and the next run re-reads only those', async () => {
      const [t1, t2] = tasks;
      const day = days[1]!;
      const expectedRows =
        [...sim.world.executions(t1!, day)].length + [...sim.world.executions(t2!, day)].length;
      const r = await runCli(['state', 'reset', '--from', day, '--to', day, '--task', `${t1},${t2}`], env);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain(
        `forgot 2 checkpoint(s) and 0 failure record(s) in ${day} .. ${day} for task_id ${t1}, ${t2}, ` +
          `and the change-detection fingerprints of ${expectedRows} execution(s)`,
      );
      expect(r.stdout).toContain(`  task_id=${t1} date=${day}\n  task_id=${t2} date=${day}\n`);
      expect(await states(day, day)).toEqual([
        { date: day, finished: tasks.length - 2, failed: 0, neverRun: 2 },
      ]);
      // The rows stay until re-synced.
      const rowsOf = (w: Awaited<ReturnType<typeof openWarehouse>>) =>
        w.query(
          'SELECT count(*) AS n FROM geo.prompt_executions WHERE task_id IN ($1, $2) AND date_time = CAST($3 AS DATE)',
          [t1!, t2!, day],
        );
      expect(await withWarehouse(url, rowsOf)).toEqual([{ n: expectedRows }]);

      // The fix upstream a reset is for: a child changed behind an unchanged listed item, which
      // change detection cannot see. The reset forgot the units' fingerprints, so their
      // executions are read whole.
      const changed = [...sim.world.executions(t1!, day), ...sim.world.executions(t2!, day)].find(
        (e) => sim.world.sources(e.prompt_task_id).length > 0,
      )!;
      const removed = sim.world.sources(changed.prompt_task_id)[0]!.source_id;
      const sourceStored = () =>
        withWarehouse(url, (w) =>
          w.query('SELECT count(*) AS n FROM geo.execution_sources WHERE source_id = $1', [removed]),
        );
      expect(await sourceStored()).toEqual([{ n: 1 }]);
      sim.world.mutations.removeSource(removed);
      try {
        const before = sim.stats.byEndpoint[RESULTS] ?? 0;
        const s = await backfill();
        expect(s.status).toBe('success');
        expect(s.counters.unitsDone).toBe(2);
        expect(s.counters.unitsSkipped).toBe(days.length * tasks.length - 2);
        // One task/results page per unit (each holds fewer than 100 executions).
        expect((sim.stats.byEndpoint[RESULTS] ?? 0) - before).toBe(2);
        // Every execution of the reset units is read again, none left as "unchanged" ...
        expect(s.counters.executionsRead).toBe(expectedRows);
        expect(s.counters.executionsUnchanged).toBe(0);
        // ... so the child changed upstream is what the warehouse holds now.
        expect(await sourceStored()).toEqual([{ n: 0 }]);
      } finally {
        sim.world.mutations.reset();
      }
      expect(await showJson(day, day)).toEqual([
        { date: day, finished: tasks.length, failed: 0, neverRun: 0 },
      ]);
    });

    it('a failed unit shows as failed, with its error; reset clears it; a reset of nothing says so', async () => {
      const failing = { task_id: tasks.at(-1)!, date: days[2]! };
      const s = await backfillFailing(failing);
      expect(s.status).toBe('partial');
      expect(s.counters.unitsFailed).toBe(1);
      expect(await states(days[0]!, days[2]!)).toEqual([
        { date: days[0], finished: tasks.length, failed: 0, neverRun: 0 },
        { date: days[1], finished: tasks.length, failed: 0, neverRun: 0 },
        { date: days[2], finished: tasks.length - 1, failed: 1, neverRun: 0 },
      ]);
      const text = await runCli(['state', 'show', '--from', days[2]!, '--to', days[2]!], env);
      expect(text.stdout).toMatch(
        new RegExp(
          `^failed task_id=${failing.task_id} date=${failing.date} \\(run \\S+\\): injected: task/results unavailable$`,
          'm',
        ),
      );

      const r = await runCli(
        ['state', 'reset', '--from', failing.date, '--to', failing.date, '--task', String(failing.task_id)],
        env,
      );
      expect(r.code, r.stderr).toBe(0);
      // Its checkpoint from the first backfill is forgotten too, with the failure record.
      expect(r.stdout).toContain(`forgot 1 checkpoint(s) and 1 failure record(s)`);
      expect(await states(failing.date, failing.date)).toEqual([
        { date: failing.date, finished: tasks.length - 1, failed: 0, neverRun: 1 },
      ]);

      const none = await runCli(
        ['state', 'reset', '--from', failing.date, '--to', failing.date, '--task', '999999'],
        env,
      );
      expect(none.code, none.stderr).toBe(0);
      expect(none.stdout).toContain(
        `nothing to forget: no checkpoint or failure recorded in ${failing.date} .. ${failing.date} for task_id 999999`,
      );
    });
  });
}

// Usage is checked before any warehouse is opened: once is enough.
describe('state: bad usage', () => {
  const env = { GEO_WAREHOUSE: 'duckdb:/nonexistent/never-opened.duckdb' };
  it('reset needs both ends; days are checked', async () => {
    const r = await runCli(['state', 'reset', '--from', '2026-11-01'], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/required option '--to <YYYY-MM-DD>' not specified/);
    const bad = await runCli(['state', 'show', '--from', '2026-13-01'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/expected a day as YYYY-MM-DD/);
  });

  it('an empty ID list is bad usage, never "every task": --task "", --task ",", --customer ""', async () => {
    for (const args of [
      ['state', 'reset', '--from', '2026-11-01', '--to', '2026-11-02', '--task', ''],
      ['state', 'reset', '--from', '2026-11-01', '--to', '2026-11-02', '--task', ','],
      ['state', 'reset', '--from', '2026-11-01', '--to', '2026-11-02', '--task', '5,,6'],
      ['sync', '--date', '2026-11-01', '--customer', ''],
      ['report', '--out', '/tmp/never.html', '--customer', ' , '],
    ]) {
      const r = await runCli(args, env);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(/expected (one or more IDs|comma-separated IDs with none empty)/);
    }
    const sep = await runCli(['sync', '--date', '2026-11-01'], { ...env, GEO_CUSTOMERS: ',' });
    expect(sep.code).toBe(2);
    expect(sep.stderr).toMatch(/GEO_CUSTOMERS: expected comma-separated page project IDs .* only separators/);
  });
});
