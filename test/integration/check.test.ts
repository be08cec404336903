/**
 * `geo-sync check` on both warehouses, through the real CLI: it passes on a warehouse
 * synced from the simulator, and fails, naming the rows, once rows are broken by hand: a child
 * orphaned, a checkpoint forgotten, a platform task gone, the last success too old.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openWarehouse } from '../../src/load/index.ts';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.ts';
import { runCli } from '../helpers/cli.ts';
import { duckdbTarget, warehouseTargets } from '../helpers/targets.ts';

let sim: RunningSimulator;
let dates: string[];

beforeAll(async () => {
  sim = await startSimulator({ seed: 22, days: 4, executionsPerDay: 30 });
  dates = sim.world.dates().slice(0, 2);
});
afterAll(async () => {
  await sim?.close();
});

for (const target of warehouseTargets('check')) {
  describe.skipIf(target.skip)(`check (${target.dialect})`, () => {
    let warehouse: string;
    const env = () => ({
      GEO_BASE_URL: sim.url,
      GEO_API_KEY: 'sim-key',
      GEO_WAREHOUSE: warehouse,
      GEO_REQUESTS_PER_SECOND: '5000',
      GEO_ENRICH_DIAGNOSIS: 'false',
    });
    const range = () => ['--from', dates[0]!, '--to', dates[1]!];
    /** One statement on the warehouse, in this process (the CLI is not running meanwhile). */
    const exec = async (sql: string, params: (string | number)[] = []) => {
      const w = await openWarehouse(warehouse);
      try {
        return await w.query(sql, params);
      } finally {
        await w.close();
      }
    };
    // Warehouse.query is read-only for reports; the damage is done through the dialect's own client.
    const damage = async (sql: string, params: (string | number)[] = []) => {
      if (target.dialect === 'postgres') {
        const pg = (await import('pg')).default;
        const c = new pg.Client(warehouse);
        await c.connect();
        try {
          await c.query(sql, params);
        } finally {
          await c.end();
        }
      } else {
        const { DuckDBInstance } = await import('@duckdb/node-api');
        // Attached under another name: a file called geo.duckdb opened directly makes `geo.` ambiguous.
        const db = await DuckDBInstance.create(':memory:');
        const c = await db.connect();
        try {
          await c.run(`ATTACH '${warehouse.replace(/^duckdb:/, '').replace(/'/g, "''")}' AS wh`);
          await c.run('USE wh');
          await c.run(sql, params);
          // Released here, not whenever the instance is freed: the next CLI opens the file at once.
          await c.run('USE memory');
          await c.run('DETACH wh');
        } finally {
          c.closeSync();
          db.closeSync();
        }
      }
    };

    beforeAll(async () => {
      warehouse = await target.create();
      const r = await runCli(['backfill', ...range(), '--no-progress'], env());
      expect(r.code, r.stderr.slice(-2000)).toBe(0);
    });
    afterAll(() => target.drop());

    it('passes on a synced warehouse: one ok line per check, exit 0', async () => {
      const r = await runCli(['check', ...range()], env());
      expect(r.code, r.stdout + r.stderr.slice(-2000)).toBe(0);
      const lines = r.stdout.trim().split('\n').slice(1);
      expect(lines.map((l) => l.split(/\s+/).slice(0, 2).join(' '))).toEqual([
        'ok keys_unique',
        'ok children_have_execution',
        'ok executions_have_platform_task',
        'ok units_finished',
        'ok unit_execution_counts',
        'ok execution_child_counts',
        'ok rollups_match',
        'ok freshness',
      ]);
      const json = await runCli(['check', ...range(), '--json'], env());
      expect(json.code).toBe(0);
      expect(
        json.stdout
          .trim()
          .split('\n')
          .map((l) => (JSON.parse(l) as { passed: boolean }).passed),
      ).toEqual([true, true, true, true, true, true, true, true]);
    });

    it('rollups_match names an aggregate edited by hand; rollups refresh repairs it', async () => {
      const [row] = (await exec(
        `SELECT task_id, CAST(date AS VARCHAR) AS date FROM geo.rollup_executions_daily ORDER BY date, task_id LIMIT 1`,
      )) as { task_id: number; date: string }[];
      await damage(
        `UPDATE geo.rollup_executions_daily SET executions = executions + 7
         WHERE task_id = ${row!.task_id} AND date = DATE '${row!.date}'`,
      );
      const r = await runCli(['check', ...range()], env());
      expect(r.code, r.stdout + r.stderr.slice(-2000)).toBe(3);
      expect(r.stdout).toMatch(
        new RegExp(
          `FAIL\\s+rollups_match\\s+2 failing row\\(s\\): table_name=rollup_executions_daily only_in=recomputed date=${row!.date} task_id=${row!.task_id} .*; table_name=rollup_executions_daily only_in=stored date=${row!.date} task_id=${row!.task_id}`,
        ),
      );
      expect(r.stdout.match(/^FAIL/gm)).toHaveLength(1);

      const usage = await runCli(['rollups', 'refresh', '--from', dates[0]!], env());
      expect(usage.code).toBe(2);
      expect(usage.stderr).toMatch(/--from and --to go together/);
      const refresh = await runCli(['rollups', 'refresh', ...range(), '--no-progress'], env());
      expect(refresh.code, refresh.stderr.slice(-2000)).toBe(0);
      expect(refresh.stdout).toMatch(
        new RegExp(
          `refreshed the per-day aggregates of 2 day\\(s\\) \\(\\d+ executions\\) in ${dates[0]} .. ${dates[1]}, 1 transaction\\(s\\)`,
        ),
      );
      const again = await runCli(['check', ...range()], env());
      expect(again.code, again.stdout).toBe(0);
    });

    it.runIf(target.dialect === 'postgres')(
      'a run on an up-to-date warehouse does not wait for a dashboard reading a view (no view re-created)',
      async () => {
        const pg = (await import('pg')).default;
        const dashboard = new pg.Client(warehouse);
        await dashboard.connect();
        try {
          // A BI query in progress: it holds its views until its transaction ends, and a
          // CREATE OR REPLACE VIEW would wait for it.
          await dashboard.query('BEGIN');
          await dashboard.query('SELECT count(*) FROM geo.brand_visibility_daily');
          const r = await runCli(['sync', '--date', dates[0]!, '--force', '--no-progress'], env());
          expect(r.code, r.stderr.slice(-2000)).toBe(0);
        } finally {
          await dashboard.query('ROLLBACK').catch(() => undefined);
          await dashboard.end();
        }
      },
      60_000,
    );

    it.runIf(target.dialect === 'postgres')(
      'runs under a read-only role on an up-to-date warehouse, and says to migrate when it is not',
      async () => {
        const role = `geo_ro_${Math.random().toString(36).slice(2, 10)}`;
        const admin = async (sql: string) => {
          const pg = (await import('pg')).default;
          const c = new pg.Client(warehouse);
          await c.connect();
          try {
            await c.query(sql);
          } finally {
            await c.end();
          }
        };
        await admin(`CREATE ROLE ${role} LOGIN`);
        try {
          await admin(
            `GRANT USAGE ON SCHEMA geo TO ${role}; GRANT SELECT ON ALL TABLES IN SCHEMA geo TO ${role}`,
          );
          const url = new URL(warehouse);
          url.username = role;
          const reader = () => ({ ...env(), GEO_WAREHOUSE: url.toString() });
          for (const args of [['check', ...range()], ['runs'], ['state', 'show', ...range()]]) {
            const r = await runCli(args, reader());
            expect(r.code, `${args.join(' ')}: ${r.stdout}${r.stderr.slice(-2000)}`).toBe(0);
          }
          // An upgrade that changed the views: the reader may not re-create them, and says so.
          await damage(`UPDATE geo.schema_migrations SET name = 'older' WHERE version = 'views'`);
          const stale = await runCli(['check', ...range()], reader());
          expect(stale.code).toBe(1);
          expect(stale.stderr).toMatch(
            /needs views and could not apply it \(.*permission denied.*\): run geo-sync migrate with a role that may change the schema/,
          );
          // The owner's next command brings them up to date, and the reader goes on.
          expect((await runCli(['check', ...range()], env())).code).toBe(0);
          expect((await runCli(['check', ...range()], reader())).code).toBe(0);
        } finally {
          await admin(`DROP OWNED BY ${role}`);
          await admin(`DROP ROLE ${role}`);
        }
      },
    );

    it('asks a task that left the scope for its known days only, and counts only whole-scope runs as fresh', async () => {
      const checks = async () => {
        const r = await runCli(['check', ...range(), '--json'], env());
        // 0 or 3 (a check failed): anything else is the command failing, and says why.
        expect([0, 3], `exit ${r.code}: ${r.stderr.slice(-2000)}`).toContain(r.code);
        return Object.fromEntries(
          r.stdout
            .trim()
            .split('\n')
            .map((l) => JSON.parse(l) as { name: string; passed: boolean; sample: Record<string, unknown>[] })
            .map((c) => [c.name, c]),
        );
      };
      // A platform task the last runs did not write (it left the scope) and that finished the
      // range's first day only: its later days are no unfinished work.
      const gone = 990_001;
      // Undone whatever happens, so that a failure here does not fail the next test too.
      try {
        await damage(
          `INSERT INTO geo.platform_tasks (task_id, project_id, task_name, model_key, model_name, engine, status, status_name, synced_at)
           VALUES (${gone}, 1, 'ended', 'm', 'M', 'e', 3, 'ended', TIMESTAMP '2000-01-01 00:00:00')`,
        );
        await damage(
          `INSERT INTO geo.sync_checkpoints (task_id, date, run_id, finished_at, executions)
           VALUES (${gone}, DATE '${dates[0]}', 'by-hand', now(), 0)`,
        );
        expect((await checks()).units_finished!.passed).toBe(true);
        // Written by the latest run, it is still synced: its second day is missing.
        await damage(`UPDATE geo.platform_tasks SET synced_at = now() WHERE task_id = ${gone}`);
        const still = await checks();
        expect(still.units_finished!.passed).toBe(false);
        expect(still.units_finished!.sample).toEqual([
          expect.objectContaining({ task_id: gone, date: dates[1], state: 'no checkpoint' }),
        ]);
      } finally {
        await damage(`DELETE FROM geo.sync_checkpoints WHERE task_id = ${gone}`);
        await damage(`DELETE FROM geo.platform_tasks WHERE task_id = ${gone}`);
      }

      // Freshness: a recent diagnose, job attempt or enqueue says nothing of the synced data.
      await damage(
        `UPDATE geo.sync_runs SET started_at = started_at - INTERVAL '3 days', finished_at = finished_at - INTERVAL '3 days'`,
      );
      const recent = (id: string, kind: string, args: string) =>
        damage(
          `INSERT INTO geo.sync_runs (run_id, kind, args, started_at, finished_at, status, requests, retries, rate_limited, rejects, units_total, units_done, units_failed)
           VALUES ('${id}', '${kind}', '${args}', now(), now(), 'success', 0, 0, 0, 0, 0, 0, 0)`,
        );
      await recent('by-hand-diagnose', 'diagnose', '{}');
      await recent('by-hand-job', 'backfill', '{"job":"j1"}');
      await recent('by-hand-enqueue', 'backfill', '{"phase":"enqueue"}');
      expect((await checks()).freshness!.passed).toBe(false);
      await recent('by-hand-sync', 'sync', '{}');
      expect((await checks()).freshness!.passed).toBe(true);
      await damage(`DELETE FROM geo.sync_runs WHERE run_id LIKE 'by-hand-%'`);
      await damage(
        `UPDATE geo.sync_runs SET started_at = started_at + INTERVAL '3 days', finished_at = finished_at + INTERVAL '3 days'`,
      );
    });

    it('fails, naming the rows, when a child is orphaned, a checkpoint forgotten, a platform task gone, the last success old', async () => {
      const [victim] = (await exec(
        `SELECT e.prompt_task_id, e.task_id, CAST(e.date_time AS VARCHAR) AS date FROM geo.prompt_executions e
         WHERE EXISTS (SELECT 1 FROM geo.execution_sources s WHERE s.prompt_task_id = e.prompt_task_id)
         ORDER BY e.prompt_task_id LIMIT 1`,
      )) as { prompt_task_id: number; task_id: number; date: string }[];
      const id = victim!.prompt_task_id;
      await damage(`DELETE FROM geo.prompt_executions WHERE prompt_task_id = ${id}`);
      const r = await runCli(['check', ...range()], env());
      expect(r.code, r.stdout + r.stderr.slice(-2000)).toBe(3);
      expect(r.stdout).toMatch(
        new RegExp(`FAIL\\s+children_have_execution\\s+\\d+ failing row\\(s\\): .*prompt_task_id=${id}`),
      );
      // Its change-detection fingerprint too (were the execution listed again, a stale one could
      // let its children go unread).
      expect(r.stdout).toContain(`table_name=execution_fingerprints prompt_task_id=${id} orphan_rows=1`);
      // The unit now holds one execution fewer than its listing reported.
      expect(r.stdout).toMatch(
        new RegExp(
          `FAIL\\s+unit_execution_counts\\s+1 failing row\\(s\\): task_id=${victim!.task_id} date=${victim!.date}`,
        ),
      );
      expect(r.stdout).toMatch(/ok\s+units_finished/);
      // Deleted by hand: its unit's aggregates no longer match its rows (rollups refresh repairs).
      expect(r.stdout).toMatch(
        new RegExp(`FAIL\\s+rollups_match\\s+\\d+ failing row\\(s\\): .*task_id=${victim!.task_id}`),
      );

      // A unit with an execution stored: the check requires a task's days from the first one the
      // warehouse knows, so a unit with none, on its task's first day, is not required once its
      // checkpoint is gone (the simulator's world, and so which unit comes first, moves with the date).
      const [unit] = (await exec(
        `SELECT c.task_id, CAST(c.date AS VARCHAR) AS date FROM geo.sync_checkpoints c
         WHERE c.task_id <> $1
           AND EXISTS (SELECT 1 FROM geo.prompt_executions e WHERE e.task_id = c.task_id AND e.date_time = c.date)
         ORDER BY c.task_id, c.date LIMIT 1`,
        [victim!.task_id],
      )) as { task_id: number; date: string }[];
      await damage(
        `DELETE FROM geo.sync_checkpoints WHERE task_id = ${unit!.task_id} AND date = DATE '${unit!.date}'`,
      );
      const [task] = (await exec(
        `SELECT task_id FROM geo.prompt_executions WHERE task_id NOT IN ($1, $2) ORDER BY task_id LIMIT 1`,
        [victim!.task_id, unit!.task_id],
      )) as { task_id: number }[];
      await damage(`DELETE FROM geo.platform_tasks WHERE task_id = ${task!.task_id}`);
      await damage(`UPDATE geo.sync_runs SET finished_at = finished_at - INTERVAL '3 days'`);
      // An execution made to claim a source more than it has stored.
      const [counted] = (await exec(
        `SELECT prompt_task_id, sources FROM geo.prompt_executions WHERE prompt_task_id <> $1
         ORDER BY prompt_task_id LIMIT 1`,
        [id],
      )) as { prompt_task_id: number; sources: number | string }[];
      const n = Number(counted!.sources);
      await damage(
        `UPDATE geo.prompt_executions SET sources = sources + 1 WHERE prompt_task_id = ${counted!.prompt_task_id}`,
      );
      const again = await runCli(['check', ...range(), '--json'], env());
      expect(again.code, again.stderr.slice(-2000)).toBe(3);
      const byName = Object.fromEntries(
        again.stdout
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { name: string; passed: boolean; sample: Record<string, unknown>[] })
          .map((c) => [c.name, c]),
      );
      expect(byName.units_finished!.passed).toBe(false);
      expect(byName.units_finished!.sample).toContainEqual(
        expect.objectContaining({ task_id: unit!.task_id, date: unit!.date, state: 'no checkpoint' }),
      );
      expect(byName.executions_have_platform_task!.sample).toContainEqual(
        expect.objectContaining({ task_id: task!.task_id }),
      );
      expect(byName.execution_child_counts!.sample).toEqual([
        expect.objectContaining({
          prompt_task_id: counted!.prompt_task_id,
          sources: n + 1,
          sources_stored: n,
        }),
      ]);
      expect(byName.freshness!.passed).toBe(false);
      expect(byName.keys_unique!.passed).toBe(true);
    });
  });
}

describe('check on the demo warehouse', () => {
  const wh = duckdbTarget('check-demo');
  afterAll(() => wh.drop());

  it('passes every check right after `geo-sync demo`', async () => {
    const warehouse = await wh.create();
    const demo = await runCli(
      ['demo', '--warehouse', warehouse, '--days', '2', '--executions-per-day', '40'],
      {},
    );
    expect(demo.code, demo.stderr.slice(-2000)).toBe(0);
    // The default range: the week through yesterday, which holds the demo's days.
    const r = await runCli(['check'], { GEO_WAREHOUSE: warehouse });
    expect(r.code, r.stdout + r.stderr.slice(-2000)).toBe(0);
    expect(r.stdout).not.toContain('FAIL');
  }, 120_000);
});
