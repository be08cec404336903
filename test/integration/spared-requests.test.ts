/**
 * Requests that can bring nothing are not made, over real sockets into both warehouses: a run
 * asks prompt/products once per platform task whose products are unsupported (the task's other
 * executions are stored from that answer), and no prompt/screenshot for an execution listed
 * without one; what it stores is what a full read stores (`verify` reads every child of every
 * execution and compares). The task/prompts cross-check's requests are counted in
 * nightly.test.ts and shifting-pages.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApi } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { silentLogger } from '../../src/log.ts';
import {
  startSimulator,
  type RunningSimulator,
  type WirePromptResultItem,
} from '../../src/simulator/index.ts';
import { formatSummary } from '../../src/sync/summary.ts';
import { verifyExecutions, verifyPassed } from '../../src/sync/verify.ts';
import { SIMULATOR_PACE, syncOnce, withWarehouse } from '../helpers/sync.ts';
import { warehouseTargets } from '../helpers/targets.ts';
import { ensureWithoutScreenshot, firstWith } from '../helpers/world.ts';

const PRODUCTS = 'GET /api/v2/geo/prompt/products';
const SCREENSHOT = 'GET /api/v2/geo/prompt/screenshot';

for (const target of warehouseTargets('spared-requests')) {
  describe.skipIf(target.skip)(`requests that can bring nothing, into ${target.dialect}`, () => {
    let sim: RunningSimulator;
    let url: string;
    let dates: string[];

    beforeAll(async () => {
      url = await target.create();
      sim = await startSimulator({ seed: 30, days: 1, executionsPerDay: 80 });
      dates = sim.world.dates();
      ensureWorld();
    });
    afterAll(async () => {
      await sim?.close();
      await target.drop();
    });

    // Yesterday, re-read by each run as the nightly run does.
    const run = () =>
      syncOnce({
        baseUrl: sim.url,
        target: url,
        dates,
        kind: 'schedule',
        config: {
          lookbackDays: 0,
          enrich: {
            diagnosis: false,
            finance: false,
            taskConfig: false,
            legacySources: false,
            executionTimes: false,
          },
        },
      });
    const q = (sql: string, params: (string | number)[] = []) =>
      withWarehouse(url, (w) => w.query(sql, params));
    const countOf = async (table: string, id: number) =>
      Number((await q(`SELECT COUNT(*) AS n FROM geo.${table} WHERE prompt_task_id = $1`, [id]))[0]!.n);
    /** Units of the window in list order. */
    const units = () =>
      dates.flatMap((d) =>
        sim.world
          .allPlatformTasks()
          .map((t) => [...sim.world.executions(t.task_id, d)])
          .filter((list) => list.length > 0),
      );
    const unsupported = (e: WirePromptResultItem) => !sim.world.products(e.prompt_task_id).supported;
    /** Executions listed without a screenshot outside the unit of an unsupported task the tests use. */
    const ensureWorld = () => {
      const shared = units().find((list) => list.length > 1 && unsupported(list[0]!)) ?? [];
      ensureWithoutScreenshot(sim.world, dates, 3, new Set(shared.map((e) => e.prompt_task_id)));
    };
    /** What a run reading `read` asks: products per execution but once per unsupported task. */
    const expected = (read: WirePromptResultItem[]) => ({
      products:
        read.filter((e) => !unsupported(e)).length +
        new Set(read.filter(unsupported).map((e) => e.task_id)).size,
      screenshots: read.filter((e) => e.screenshot_url !== null && e.screenshot_url !== '').length,
    });
    /** verify over every stored execution: it reads every child, asking everything. */
    const verifyAll = async () => {
      const config = loadConfig({
        env: {},
        overrides: { baseUrl: sim.url, apiKey: 'sim-key', warehouse: url, ...SIMULATOR_PACE },
      });
      const api = createApi(config, silentLogger);
      try {
        return await withWarehouse(url, (w) =>
          verifyExecutions(api.port, w, { sample: 10_000, legacySources: false, executionTimes: false }),
        );
      } finally {
        await api.close();
      }
    };

    it('a first read asks products once per unsupported platform task and no screenshot listed as none, and stores what a full read stores', async () => {
      const all = units().flat();
      // The world has what the test needs: several executions of an unsupported platform task
      // in one unit, and executions listed without a screenshot.
      const shared = units().find((list) => list.length > 1 && unsupported(list[0]!))!;
      expect(shared).toBeDefined();
      expect(all.filter((e) => e.screenshot_url === null).length).toBeGreaterThan(0);
      // z, not its unit's first: deleted upstream while still listed (every read 404). Its
      // products are not asked (the task's first answer says unsupported), and a read would have
      // stored none of its children: neither does the run.
      const z = shared[1]!;
      for (const c of ['detail', 'result', 'sources', 'screenshot', 'products'] as const)
        sim.world.mutations.hideChild(z.prompt_task_id, c);
      try {
        sim.stats.reset();
        const s = await run();
        expect(s.status).toBe('success');
        expect(s.counters.goneExecutions).toBe(1);
        const want = expected(all);
        expect(sim.stats.byEndpoint[PRODUCTS]).toBe(want.products);
        expect(sim.stats.byEndpoint[SCREENSHOT]).toBe(want.screenshots);
        expect(s.counters.notAsked.products).toBe(all.length - want.products);
        expect(s.counters.notAsked.screenshots).toBe(all.length - want.screenshots);
        expect(formatSummary(s)).toContain(
          `not asked (could bring nothing): ${s.counters.unitsDone} task/prompts (every stored execution listed), ${all.length - want.products} prompt/products (platform unsupported), ${all.length - want.screenshots} prompt/screenshot (listed without one)`,
        );
        expect(await countOf('prompt_executions', z.prompt_task_id)).toBe(1);
        for (const table of ['execution_products', 'execution_sources', 'execution_screenshots'])
          expect(await countOf(table, z.prompt_task_id), table).toBe(0);
        // The unsupported executions' rows, each as its own answer would store it.
        const [rows] = await q(
          `SELECT COUNT(*) AS n FROM geo.execution_products
           WHERE supported = FALSE AND result_status = 'unsupported' AND total = 0`,
        );
        expect(Number(rows!.n)).toBe(all.filter(unsupported).length - 1);
      } finally {
        sim.world.mutations.reset();
        // (The reset drops every mutation: the world again as the run read it.)
        ensureWorld();
      }
      const v = await verifyAll();
      expect(v.differences).toEqual([]);
      expect(v.unread).toEqual([]);
      expect(v.failed).toEqual([]);
      expect(v.sampled).toBe(all.length - 1);
      expect(verifyPassed(v)).toBe(true);
    });

    it('a later run asks again, once per task; a screenshot taken late is read', async () => {
      const all = units().flat();
      // Two executions of an unsupported task changed, and one listed without a screenshot gets one.
      const shared = firstWith(
        units(),
        (list) => list.length > 1 && unsupported(list[0]!),
        'unit of two or more executions of an unsupported platform task',
      );
      // Outside `shared` by ID: each listing is new objects, so identity never matched, and on a day
      // whose shared[1] is itself listed without a screenshot it was taken as noShot too.
      const sharedIds = new Set(shared.map((e) => e.prompt_task_id));
      const noShot = firstWith(
        all,
        (e) => e.screenshot_url === null && !sharedIds.has(e.prompt_task_id),
        'execution listed without a screenshot outside that unit',
      );
      const m = sim.world.mutations;
      m.setAnswer(shared[0]!.prompt_task_id, 'saved again');
      m.setAnswer(shared[1]!.prompt_task_id, 'saved again');
      expect(m.takeScreenshot(noShot.prompt_task_id)).toBe(true);
      try {
        sim.stats.reset();
        const s = await run();
        expect(s.status).toBe('success');
        // Those three: z (shared[1], whose children the last run could not read) among them.
        expect(s.counters.executionsRead).toBe(3);
        const ids = [shared[0]!, shared[1]!, noShot].map((e) => e.prompt_task_id);
        const read = units()
          .flat()
          .filter((e) => ids.includes(e.prompt_task_id));
        const z = shared[1]!;
        // The task of `shared` answered unsupported last run: this run asks it again, once.
        const want = expected(read);
        expect(sim.stats.byEndpoint[PRODUCTS]).toBe(want.products);
        expect(sim.stats.byEndpoint[SCREENSHOT]).toBe(want.screenshots);
        expect(want.screenshots).toBeGreaterThan(0);
        expect(await countOf('execution_screenshots', noShot.prompt_task_id)).toBe(1);
        expect(await countOf('execution_products', z.prompt_task_id)).toBe(1);
        const v = await verifyAll();
        expect(v.differences).toEqual([]);
        expect(v.goneUpstream).toEqual([]);
        expect(verifyPassed(v)).toBe(true);
      } finally {
        m.reset();
      }
    });
  });
}
