/** `schedule`, `runs` and `sync --dry-run` through the real CLI, against the simulator. */
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { addDays, shanghaiDay } from '../../src/time.ts';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.ts';
import { openWarehouse } from '../../src/load/index.ts';
import { runCli, startCli } from '../helpers/cli.ts';
import { withWarehouse } from '../helpers/sync.ts';
import { duckdbTarget } from '../helpers/targets.ts';
import { ensureWithoutScreenshot } from '../helpers/world.ts';

describe('schedule, runs, dry-run', () => {
  let sim: RunningSimulator;
  let env: Record<string, string>;
  const wh = duckdbTarget('commands-schedule');

  beforeAll(async () => {
    sim = await startSimulator({ seed: 4, days: 5, executionsPerDay: 20 });
    // The dry-run's estimate below is checked with an execution listed without a screenshot.
    ensureWithoutScreenshot(sim.world, [sim.world.dates().at(-1)!]);
    env = {
      GEO_BASE_URL: sim.url,
      GEO_API_KEY: 'sim-key',
      GEO_WAREHOUSE: await wh.create(),
      GEO_REQUESTS_PER_SECOND: '5000',
      GEO_CONCURRENCY: '16',
    };
  });
  afterAll(async () => {
    await sim?.close();
    await wh.drop();
  });

  it('sync --dry-run prints the plan and writes nothing', async () => {
    const before = sim.stats.byEndpoint['GET /api/v2/geo/task/results'] ?? 0;
    const r = await runCli(['sync', '--dry-run', '--date', sim.world.dates()[0]!], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/plan for sync .*: \d+ units to run, 0 already finished/);
    expect(r.stdout).toMatch(/estimated requests: ~\d+/);
    expect(r.stdout).toContain('dry run: nothing was written');
    // No warehouse yet (and none created by the dry run): estimated as empty, and said.
    expect(r.stdout).toMatch(
      /warehouse: duckdb:.* does not exist yet \(a run creates it\); estimated as if it held nothing/,
    );
    expect(sim.stats.byEndpoint['GET /api/v2/geo/task/results'] ?? 0).toBe(before);
  });

  it('schedule runs the look-back window (with --run-now), then stops cleanly on SIGTERM', async () => {
    // A schedule that never fires during the test: only --run-now runs.
    const p = startCli(['schedule', '--cron', '0 0 1 1 *', '--lookback-days', '1', '--run-now'], env);
    await p.waitForLog(/"msg":"run \d+T\d+Z-[0-9a-f]+: SUCCESS/);
    p.child.kill('SIGTERM');
    const r = await p.done;
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    expect(r.stderr).toMatch(/"timezone":"Asia\/Shanghai"/);
    const dates = sim.world.dates().slice(-2);
    const rows = await withWarehouse(env.GEO_WAREHOUSE!, (w) =>
      w.query('SELECT DISTINCT CAST(date AS VARCHAR) AS date FROM geo.sync_checkpoints ORDER BY 1'),
    );
    expect(rows.map((x) => x.date)).toEqual(dates);
  });

  it('schedule holds the warehouse only while a run goes: between runs another process reads the DuckDB file', async () => {
    const p = startCli(['schedule', '--cron', '0 0 1 1 *', '--lookback-days', '0', '--run-now'], env);
    try {
      await p.waitForLog(/"msg":"run \d+T\d+Z-[0-9a-f]+: SUCCESS/);
      // This test process is the BI tool: it opens the file while schedule waits for its next
      // tick (the wait covers only the moment the run takes to close the file).
      const w = await openWarehouse(env.GEO_WAREHOUSE!, { lockWaitMs: 3000 });
      try {
        const rows = await w.query('SELECT count(*) AS n FROM geo.prompt_executions');
        expect(Number(rows[0]!.n)).toBeGreaterThan(0);
      } finally {
        await w.close();
      }
    } finally {
      p.child.kill('SIGTERM');
    }
    const r = await p.done;
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
  });

  // `--cron '61 4 * * *'` was once reported as GEO_SCHEDULE, which nobody set.
  it('schedule refuses an invalid cron expression with one line naming where it was given', async () => {
    const r = await runCli(['schedule', '--cron', '61 * * * *'], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('error: --cron (schedule): "61 * * * *" is not a valid cron expression\n');
    const viaEnv = await runCli(['schedule'], { ...env, GEO_SCHEDULE: '61 * * * *' });
    expect(viaEnv.code).toBe(2);
    expect(viaEnv.stderr).toBe(
      'error: GEO_SCHEDULE (schedule): "61 * * * *" is not a valid cron expression\n',
    );
    const file = join(mkdtempSync(join(tmpdir(), 'geo-cron-')), 'geo.json');
    writeFileSync(file, JSON.stringify({ schedule: '61 * * * *', concurrency: 1000 }));
    const viaFile = await runCli(['schedule', '--config', file], env);
    expect(viaFile.code).toBe(2);
    // GEO_CONCURRENCY is set here too: the environment's value wins, and is valid.
    expect(viaFile.stderr).toBe(
      `error: --config ${file}: schedule: "61 * * * *" is not a valid cron expression\n`,
    );
    const { GEO_CONCURRENCY: _set, ...withoutConcurrency } = env;
    const fileOnly = await runCli(['schedule', '--config', file], withoutConcurrency);
    expect(fileOnly.stderr).toBe(
      `config: --config ${file}: concurrency: Too big: expected number to be <=256\n`,
    );
  });

  // A scheduler stopped by its service manager between runs exits 0, whatever
  // its last run came to (that is in geo.sync_runs); it exited 1 after a failed run.
  it('schedule stopped by SIGTERM between runs exits 0, even after a failed run', async () => {
    const own = duckdbTarget('commands-schedule-refused');
    const p = startCli(['schedule', '--cron', '0 0 1 1 *', '--lookback-days', '0', '--run-now'], {
      ...env,
      GEO_WAREHOUSE: await own.create(),
      GEO_API_KEY: 'a-key-the-server-refuses',
    });
    onTestFinished(() => own.drop());
    await p.waitForLog(/"msg":"warehouse closed until the next run"/);
    p.child.kill('SIGTERM');
    const r = await p.done;
    expect(r.stderr).toMatch(/"status":"failed"/);
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
  });

  // `--dry-run` once created the DuckDB file and its folders.
  it('sync --dry-run on a DuckDB file that does not exist creates nothing', async () => {
    const root = mkdtempSync(join(tmpdir(), 'geo-dry-'));
    const file = join(root, 'not', 'yet', 'geo.duckdb');
    const r = await runCli(['sync', '--dry-run', '--date', sim.world.dates()[0]!], {
      ...env,
      GEO_WAREHOUSE: `duckdb:${file}`,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      `warehouse: duckdb:${file} does not exist yet (a run creates it); estimated as if it held nothing`,
    );
    expect(r.stdout).toMatch(/plan for sync .*: \d+ units to run, 0 already finished/);
    expect(readdirSync(root)).toEqual([]);
  });

  // `sync --date 2099-01-01` once exited 0 and checkpointed every unit of that day.
  it('a day after today (Asia/Shanghai) is bad usage for sync and backfill: exit 2, nothing written', async () => {
    const tomorrow = addDays(shanghaiDay(new Date()), 1);
    const runsBefore = await withWarehouse(env.GEO_WAREHOUSE!, (w) => w.listRuns(1000));
    const sync = await runCli(['sync', '--date', '2099-01-01'], env);
    expect(sync.code).toBe(2);
    expect(sync.stderr).toMatch(
      /^error: --date 2099-01-01 is after today \(\d{4}-\d\d-\d\d in Asia\/Shanghai\): a day to come has nothing to sync yet; give a day up to today\n$/,
    );
    const backfill = await runCli(['backfill', '--from', sim.world.dates()[0]!, '--to', tomorrow], env);
    expect(backfill.code).toBe(2);
    expect(backfill.stderr).toMatch(new RegExp(`^error: --to ${tomorrow} is after today`));
    expect(await withWarehouse(env.GEO_WAREHOUSE!, (w) => w.listRuns(1000))).toHaveLength(runsBefore.length);
  });

  it('runs lists the run log', async () => {
    const r = await runCli(['runs', '--limit', '5'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split('\n')[0]).toMatch(/^run_id +kind +status +started_at/);
    expect(r.stdout).toMatch(/schedule +success/);
    const json = await runCli(['runs', '--json'], env);
    const first = JSON.parse(json.stdout.split('\n')[0]!);
    expect(first).toMatchObject({ kind: 'schedule', status: 'success', units_failed: 0 });
    expect(first.requests).toBeGreaterThan(0);
    // An earlier test synced the same days: change detection leaves the executions as stored
    // (change detection), so the schedule run wrote none and counts them unchanged.
    expect(first.rows.monitoring_tasks).toBeGreaterThan(0);
    expect(first.executions_read + first.executions_unchanged).toBeGreaterThan(0);
  });

  it('sync --dry-run estimates from what is stored: a range under change detection, met by the run', async () => {
    // The schedule runs above read yesterday completely.
    const day = sim.world.dates().at(-1)!;
    const [stored] = await withWarehouse(env.GEO_WAREHOUSE!, (w) =>
      w.query(
        `SELECT (SELECT count(*) FROM geo.prompt_executions WHERE date_time = CAST($1 AS DATE)) AS executions,
                (SELECT count(*) FROM geo.prompt_executions
                  WHERE date_time = CAST($1 AS DATE) AND (screenshot_url IS NULL OR screenshot_url = '')) AS no_shot,
                (SELECT count(*) FROM geo.prompt_executions e JOIN geo.execution_products p USING (prompt_task_id)
                  WHERE e.date_time = CAST($1 AS DATE) AND p.result_status = 'unsupported') AS unsupported,
                (SELECT count(DISTINCT e.task_id) FROM geo.prompt_executions e JOIN geo.execution_products p USING (prompt_task_id)
                  WHERE e.date_time = CAST($1 AS DATE) AND p.result_status = 'unsupported') AS unsupported_tasks,
                (SELECT count(*) FROM geo.sync_checkpoints WHERE date = CAST($1 AS DATE)) AS units`,
        [day],
      ),
    );
    const n = (k: string) => Number(stored![k]);
    const [executions, noShot, unsupported, unsupportedTasks, units] = [
      n('executions'),
      n('no_shot'),
      n('unsupported'),
      n('unsupported_tasks'),
      n('units'),
    ];
    expect(executions).toBeGreaterThan(0);
    expect(noShot).toBeGreaterThan(0);
    expect(unsupported).toBeGreaterThanOrEqual(unsupportedTasks);
    expect(unsupportedTasks).toBeGreaterThan(0);
    // Per unit (platform task), with or without executions: one task/results page (< 100
    // executions); task/prompts only where a stored execution is no longer listed. Per execution
    // read: sources, legacy sources, execution times; a screenshot where its item names one;
    // products, but one request per platform task whose products are unsupported (its first
    // answer says so for all).
    const low = units;
    const high = low + executions * 3 + (executions - noShot) + (executions - unsupported + unsupportedTasks);

    // Views of another version (as after an upgrade) change no table: the estimate still reads
    // what is stored.
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    await c.run(`ATTACH '${env.GEO_WAREHOUSE!.replace(/^duckdb:/, '')}' AS wh`);
    await c.run(`UPDATE wh.geo.schema_migrations SET name = 'older' WHERE version = 'views'`);
    c.closeSync();
    db.closeSync();
    const dry = await runCli(['sync', '--dry-run', '--force', '--date', day], env);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(
      `estimated requests: ~${low} if nothing changed upstream, up to ~${high} if every stored execution changed`,
    );
    expect(dry.stdout).not.toContain('never stored');
    expect(dry.stdout).not.toContain('not migrated');
    const reread = await runCli(['sync', '--dry-run', '--force', '--reread', '--date', day], env);
    expect(reread.stdout).toMatch(new RegExp(`estimated requests: ~${high} \\(.*change detection off`));

    // The forced run of the unchanged day makes exactly the low figure's unit requests, no child.
    const before = { ...sim.stats.byEndpoint };
    const run = await runCli(['sync', '--force', '--date', day], env);
    expect(run.code, run.stderr).toBe(0);
    const delta = (e: string) => (sim.stats.byEndpoint[e] ?? 0) - (before[e] ?? 0);
    expect(delta('GET /api/v2/geo/task/results')).toBe(low);
    expect(delta('GET /api/v2/geo/task/prompts')).toBe(0);

    // --reread reads what the high figure counts: a products request per execution but one per
    // platform task whose products are unsupported, a screenshot request where the item names
    // one, no task/prompts (source lists of more than a page cost more: not estimated).
    const atReread = { ...sim.stats.byEndpoint };
    const rereadRun = await runCli(['sync', '--force', '--reread', '--date', day], env);
    expect(rereadRun.code, rereadRun.stderr).toBe(0);
    const since = (e: string) =>
      (sim.stats.byEndpoint[`GET /api/v2/geo/${e}`] ?? 0) - (atReread[`GET /api/v2/geo/${e}`] ?? 0);
    expect(since('prompt/products')).toBe(executions - unsupported + unsupportedTasks);
    expect(since('prompt/screenshot')).toBe(executions - noShot);
    expect(since('task/prompts')).toBe(0);
    expect(since('task/detail')).toBe(executions);
    expect(since('task/results')).toBe(low);
    console.log(
      JSON.stringify(Object.fromEntries(Object.keys(sim.stats.byEndpoint).map((e) => [e, delta(e)]))),
    );
  });
});
