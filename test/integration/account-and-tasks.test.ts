/**
 * A sync fills site diagnoses, finance and the legacy-enriched columns (both
 * warehouses); `whoami`, `diagnose` and `tasks` work against the simulator through the real CLI.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.ts';
import { runCli } from '../helpers/cli.ts';
import { syncOnce, withWarehouse } from '../helpers/sync.ts';
import { duckdbTarget, warehouseTargets } from '../helpers/targets.ts';

const num = (v: unknown) => Number(v);

for (const target of warehouseTargets('account')) {
  describe.skipIf(target.skip)(`account data and enrichment into ${target.dialect}`, () => {
    let sim: RunningSimulator;
    let url: string;
    let day: string;

    beforeAll(async () => {
      url = await target.create();
      sim = await startSimulator({ seed: 5, days: 3, executionsPerDay: 60 });
      day = sim.world.dates().at(-1)!;
      const summary = await syncOnce({ baseUrl: sim.url, target: url, dates: [day] });
      expect(summary.status).toBe('success');
    });
    afterAll(async () => {
      await sim?.close();
      await target.drop();
    });

    const q = (sql: string, params: (string | number)[] = []) =>
      withWarehouse(url, (w) => w.query(sql, params));

    it('keeps the latest diagnosis of each project; not_started stores nothing', async () => {
      const expected = sim.world
        .customerIds()
        .map((c) => sim.world.diagnoses(c).at(-1))
        .filter((d) => d && d.status !== 'not_started');
      const rows = await q(
        'SELECT diagnosis_id, customer_id, status, result_ready, composite_score, CAST(result_json AS VARCHAR) AS result_json FROM geo.site_diagnoses ORDER BY diagnosis_id',
      );
      expect(rows).toHaveLength(expected.length);
      for (const d of expected) {
        const row = rows.find((r) => r.diagnosis_id === String(d!.diagnosis_id))!;
        expect(row.status).toBe(d!.status);
        if (d!.result) expect(num(row.composite_score)).toBeCloseTo(Number(d!.result.composite_score));
        else expect(row.composite_score).toBeNull();
      }
    });

    it('takes a balance snapshot and every deduction, exact to the cent; a second sync adds none', async () => {
      const [snap] = await q('SELECT user_id, CAST(amount AS VARCHAR) AS amount FROM geo.balance_snapshots');
      expect(num(snap!.user_id)).toBe(sim.world.balance().user_id);
      expect(Number(snap!.amount)).toBe(Number(sim.world.balance().amount));
      const all = sim.world.deductions();
      const rows = await q(
        'SELECT id, prompt_task_id, CAST(diff_amount AS VARCHAR) AS diff FROM geo.deductions ORDER BY id',
      );
      expect(rows).toHaveLength(all.length);
      const byId = new Map(all.map((d) => [d.id, d]));
      for (const r of rows) {
        const d = byId.get(num(r.id))!;
        // The deduction's `project_id` is an execution ID: stored as prompt_task_id.
        expect(num(r.prompt_task_id)).toBe(d.project_id);
        expect(Number(r.diff)).toBe(Number(d.diff_amount));
      }
      const before = sim.stats.byEndpoint['GET /api/v2/finance/deduction/details'] ?? 0;
      await syncOnce({ baseUrl: sim.url, target: url, dates: [day] });
      const pages = (sim.stats.byEndpoint['GET /api/v2/finance/deduction/details'] ?? 0) - before;
      // Incremental: only the days since the newest stored (with overlap), not the whole history.
      expect(pages).toBeLessThan(Math.ceil(all.length / 100) + 1);
      expect(await q('SELECT id FROM geo.deductions')).toHaveLength(all.length);
      expect(await q('SELECT taken_at FROM geo.balance_snapshots')).toHaveLength(2);
    });

    it('fills the legacy-enriched columns', async () => {
      const [mt] = await q(
        'SELECT COUNT(*) AS n, COUNT(week_restart) AS cfg, COUNT(brand_urls) AS urls FROM geo.monitoring_tasks',
      );
      expect(num(mt!.n)).toBeGreaterThan(0);
      expect(num(mt!.cfg)).toBe(num(mt!.n));
      expect(num(mt!.urls)).toBe(num(mt!.n));
      const [pt] = await q('SELECT COUNT(*) AS n, COUNT(prompts) AS p FROM geo.platform_tasks');
      expect(num(pt!.p)).toBe(num(pt!.n));
      const [ex] = await q(
        'SELECT COUNT(*) AS n, COUNT(created_at) AS c, COUNT(updated_at) AS u FROM geo.prompt_executions',
      );
      expect(num(ex!.c)).toBe(num(ex!.n));
      expect(num(ex!.u)).toBe(num(ex!.n));
      const [src] = await q(
        'SELECT COUNT(*) AS n, COUNT(site_name) AS s, COUNT(task_ai_id) AS t FROM geo.execution_sources',
      );
      expect(num(src!.n)).toBeGreaterThan(0);
      expect(num(src!.s)).toBe(num(src!.n));
      expect(num(src!.t)).toBe(num(src!.n));
    });

    it('each enrichment can be switched off, and then costs no request', async () => {
      const off = await startSimulator({ seed: 5, days: 3, executionsPerDay: 60 });
      const t2 = warehouseTargets('account-off').find((t) => t.dialect === target.dialect)!;
      const url2 = await t2.create();
      try {
        const summary = await syncOnce({
          baseUrl: off.url,
          target: url2,
          dates: [day],
          config: {
            enrich: {
              taskConfig: false,
              legacySources: false,
              executionTimes: false,
              diagnosis: false,
              finance: false,
              crossCheck: false,
            },
          },
        });
        expect(summary.status).toBe('success');
        for (const ep of [
          'GET /api/v2/geo/project/detail',
          'GET /api/v2/geo/task/searches',
          'GET /api/v2/geo/task/detail',
          'GET /api/v2/projects/{project_id}/site-diagnosis',
          'GET /api/v2/finance/balance',
          'GET /api/v2/finance/deduction/details',
          'GET /api/v2/geo/task/prompts',
        ]) {
          expect(off.stats.byEndpoint[ep] ?? 0, ep).toBe(0);
        }
        const [ex] = await withWarehouse(url2, (w) =>
          w.query('SELECT COUNT(*) AS n, COUNT(created_at) AS c FROM geo.prompt_executions'),
        );
        expect(num(ex!.n)).toBeGreaterThan(0);
        expect(num(ex!.c)).toBe(0);
      } finally {
        await off.close();
        await t2.drop();
      }
    });
  });
}

describe('account and task commands over the real CLI', () => {
  let sim: RunningSimulator;
  let env: Record<string, string>;
  const wh = duckdbTarget('commands');

  beforeAll(async () => {
    sim = await startSimulator({
      seed: 9,
      days: 2,
      executionsPerDay: 20,
      diagnosisStepMs: 300,
      diagnosisFailureRate: 0,
    });
    env = { GEO_BASE_URL: sim.url, GEO_API_KEY: 'sim-key', GEO_WAREHOUSE: await wh.create() };
  });
  afterAll(async () => {
    await sim?.close();
    await wh.drop();
  });

  it('whoami prints the account and the balance', async () => {
    const r = await runCli(['whoami'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(sim.world.user.email);
    expect(r.stdout).toMatch(/balance: +-?\d/);
  });

  it('whoami by e-mail and password: logs in, and logs out (revokes the token) at the end', async () => {
    const r = await runCli(['whoami'], {
      ...env,
      GEO_API_KEY: '',
      GEO_EMAIL: 'demo@geo-sync.local',
      GEO_PASSWORD: 'demo-password',
    });
    expect(r.code, r.stderr).toBe(0);
    expect(sim.stats.byEndpoint['POST /api/v2/auth/login']).toBeGreaterThan(0);
    expect(sim.stats.byEndpoint['POST /api/v2/auth/logout']).toBeGreaterThan(0);
    expect(r.stdout + r.stderr).not.toContain('demo-password');
  });

  it('diagnose --wait: POSTs, polls with progress until the result is ready, stores it', async () => {
    const customer =
      sim.world
        .customerIds()
        .find((c) => (sim.world.diagnoses(c).at(-1)?.status ?? 'not_started') === 'not_started') ??
      sim.world.customerIds()[0]!;
    const r = await runCli(
      ['diagnose', '--customer', String(customer), '--force-refresh', '--wait', '--poll-seconds', '1'],
      env,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/new diagnosis created|existing diagnosis reused/);
    expect(r.stdout).toMatch(/result ready/);
    const latest = sim.world.diagnoses(customer).at(-1)!;
    const rows = await withWarehouse(env.GEO_WAREHOUSE!, (w) =>
      w.query('SELECT status, result_ready FROM geo.site_diagnoses WHERE diagnosis_id = $1', [
        String(latest.diagnosis_id),
      ]),
    );
    expect(rows).toEqual([{ status: 'completed', result_ready: true }]);
  });

  it('diagnose on a project the key may not read says so clearly', async () => {
    const r = await runCli(['diagnose', '--customer', String(sim.world.unreadableCustomerId)], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/404: no such page project, or this key may not access it/);
  });

  it('tasks create, list, show, edit; checked before sending; the server 400 shown as is', async () => {
    const create = [
      'tasks',
      'create',
      '--brand',
      '测试监测任务',
      '--brand-desc',
      '石头,科沃斯',
      '--prompts',
      '扫地机器人哪个好,扫拖一体推荐',
      '--platforms',
      'deepseek,kimi_back',
      '--week-restart',
      '1',
      '--only-rank',
      '0',
    ];
    const created = await runCli(create, env);
    expect(created.code, created.stderr).toBe(0);
    const m = /number_id (\d+); platform tasks \(task_id\): (\d+), (\d+)/.exec(created.stdout);
    expect(m).not.toBeNull();
    const numberId = m![1]!;

    const list = await runCli(['tasks', 'list'], env);
    expect(list.stdout).toContain(`${numberId}\t`);
    const show = await runCli(['tasks', 'show', '--number-id', numberId], env);
    expect(JSON.parse(show.stdout)).toMatchObject({
      number_id: Number(numberId),
      week_restart: 1,
      only_rank: 0,
    });

    const edit = await runCli(
      [
        'tasks',
        'edit',
        '--number-id',
        numberId,
        '--brand-desc',
        '石头',
        '--prompts',
        '扫地机器人哪个好',
        '--platforms',
        'doubao',
        '--rank-match',
        '1',
      ],
      env,
    );
    expect(edit.code, edit.stderr).toBe(0);
    const shown = JSON.parse((await runCli(['tasks', 'show', '--number-id', numberId], env)).stdout);
    expect(shown).toMatchObject({ rank_match: 1, brand_desc_list: expect.stringContaining('石头') });

    const before = sim.stats.byEndpoint['POST /api/v2/geo/project/create'] ?? 0;
    const bad = await runCli(
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
        'deepseek',
        '--week-restart',
        '7',
      ],
      env,
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--week-restart/);
    expect(sim.stats.byEndpoint['POST /api/v2/geo/project/create'] ?? 0).toBe(before);

    const dup = await runCli(create, env);
    expect(dup.code).toBe(2);
    expect(dup.stderr).toContain('refused by the server: 监测任务名称已存在: 测试监测任务');

    const missing = await runCli(['tasks', 'show', '--number-id', '999999999'], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/not found/);
  });
});
