/**
 * A full walk over the HTTP API, as a client does it, counts exactly what world.dayTotals says;
 * mutations show on the wire as documented.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PromptResultItem } from '../../src/api/schemas/hierarchical.ts';
import type { DayTotals, RunningSimulator } from '../../src/simulator/index.ts';
import { startSimulator } from '../../src/simulator/index.ts';
import { NOW, YESTERDAY, call } from './helpers.ts';

let sim: RunningSimulator;
const EXECUTIONS = 60;

beforeAll(async () => {
  sim = await startSimulator({ seed: 5, now: () => NOW, executionsPerDay: EXECUTIONS, days: 2 });
});
afterAll(() => sim.close());

/** Read every page of a paged endpoint (`data.data`), following last_page. */
async function allPages(path: string, perPage: number): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for (let page = 1; ; page++) {
    const r = await call(sim, `${path}&per_page=${perPage}&page=${page}`);
    expect(r.status).toBe(200);
    out.push(...r.json.data.data);
    if (page >= r.json.data.last_page) return out;
  }
}

interface Walk {
  totals: Omit<DayTotals, 'missingResults' | 'corruptedExecutions' | 'platformTasksWithExecutions'>;
  items: Record<string, unknown>[];
}

async function walk(date: string): Promise<Walk> {
  const legacy = await allPages('/api/v2/geo/project/list?x=1', 50);
  const tasks: { task_id: number }[] = [];
  for (const mt of legacy) {
    const r = await call(sim, `/api/v2/geo/project/tasks?project_id=${String(mt.number_id)}`);
    tasks.push(...r.json.data);
  }
  const totals = {
    platformTasks: tasks.length,
    executions: 0,
    ranks: 0,
    sources: 0,
    productCards: 0,
    screenshots: 0,
  };
  const items: Record<string, unknown>[] = [];
  for (const t of tasks) {
    const results = await allPages(`/api/v2/geo/task/results?task_id=${t.task_id}&date=${date}`, 100);
    items.push(...results);
    await Promise.all(
      results.map(async (e) => {
        const id = String(e.prompt_task_id);
        totals.executions++;
        totals.ranks += (e.rank_details as unknown[]).length;
        // Read before adding: `x += await y` would add to a stale x under Promise.all.
        const sources = await allPages(`/api/v2/geo/prompt/searches?prompt_task_id=${id}`, 1000);
        totals.sources += sources.length;
        for (let page = 1; ; page++) {
          const p = await call(sim, `/api/v2/geo/prompt/products?prompt_task_id=${id}&page=${page}`);
          totals.productCards += p.json.data.products.length;
          if (page >= p.json.data.last_page) break;
        }
        const shot = await call(sim, `/api/v2/geo/prompt/screenshot?prompt_task_id=${id}`);
        // Spec 2.7: 200 for every existing execution; one without a screenshot has an empty URL.
        expect(shot.status).toBe(200);
        if (shot.json.data.screenshot_url !== '') totals.screenshots++;
      }),
    );
  }
  return { totals, items };
}

function pick(t: DayTotals): Walk['totals'] {
  const { platformTasks, executions, ranks, sources, productCards, screenshots } = t;
  return { platformTasks, executions, ranks, sources, productCards, screenshots };
}

describe('dayTotals equals a full walk over HTTP', () => {
  it.each(['2025-06-13', YESTERDAY])('%s', async (date) => {
    const { totals, items } = await walk(date);
    expect(totals).toEqual(pick(sim.world.dayTotals(date)));
    expect(totals.executions).toBe(EXECUTIONS);
    expect(totals.sources).toBeGreaterThan(1200);
    const truth = sim.world.allPlatformTasks().flatMap((t) => [...sim.world.executions(t.task_id, date)]);
    const byId = (a: Record<string, unknown>, b: Record<string, unknown>) =>
      Number(a.prompt_task_id) - Number(b.prompt_task_id);
    expect(items.sort(byId)).toEqual(truth.sort(byId));
  });

  it('legacy project/list covers customer/projects of every project plus the historical tasks', async () => {
    const legacy = (await allPages('/api/v2/geo/project/list?x=1', 100)).map((t) => t.number_id);
    const hierarchical: unknown[] = [];
    for (const c of sim.world.customerIds())
      hierarchical.push(
        ...(await allPages(`/api/v2/geo/customer/projects?customer_id=${c}`, 100)).map((t) => t.project_id),
      );
    const historical = sim.world.historicalMonitoringTasks().map((t) => t.project_id);
    expect([...legacy].sort()).toEqual([...hierarchical, ...historical].sort());
  });
});

describe('mutations on the wire', () => {
  it('deleted, re-answered, source removed, corrupted: served as documented, totals follow', async () => {
    const task = sim.world.allPlatformTasks()[0]!;
    // first: the day's 1,200-source execution (k = 0 of the first task); two others from anywhere.
    const first = [...sim.world.executions(task.task_id, YESTERDAY)][0];
    const [second, third] = sim.world
      .allPlatformTasks()
      .flatMap((t) => [...sim.world.executions(t.task_id, YESTERDAY)])
      .filter((e) => e.prompt_task_id !== first!.prompt_task_id);
    const w = sim.world.mutations;
    try {
      w.deleteExecution(third!.prompt_task_id);
      w.setAnswer(second!.prompt_task_id, null);
      const gone = sim.world.sources(first!.prompt_task_id)[7]!;
      w.removeSource(gone.source_id);
      w.corruptExecution(first!.prompt_task_id);

      const { totals } = await walk(YESTERDAY);
      expect(totals).toEqual(pick(sim.world.dayTotals(YESTERDAY)));
      expect(totals.executions).toBe(EXECUTIONS - 1);

      for (const p of ['detail', 'result', 'searches', 'screenshot', 'products'])
        expect(
          (await call(sim, `/api/v2/geo/prompt/${p}?prompt_task_id=${third!.prompt_task_id}`)).status,
        ).toBe(404);
      expect((await call(sim, `/api/v2/geo/task/detail?task_id=${third!.prompt_task_id}`)).status).toBe(404);

      const result = await call(sim, `/api/v2/geo/prompt/result?prompt_task_id=${second!.prompt_task_id}`);
      expect(result.json.data).toMatchObject({ result_status: 'missing', answer: null, think: null });

      const sources = await allPages(
        `/api/v2/geo/prompt/searches?prompt_task_id=${first!.prompt_task_id}`,
        1000,
      );
      expect(sources).toHaveLength(1199);
      expect(sources.map((s) => s.source_id)).not.toContain(gone.source_id);

      // Corrupted in the lists (per-item validation rejects it), intact on its own endpoints.
      const page = await call(
        sim,
        `/api/v2/geo/task/results?task_id=${task.task_id}&date=${YESTERDAY}&per_page=1`,
      );
      expect(page.json.data.data[0].hours).toBe('abc');
      expect(PromptResultItem.safeParse(page.json.data.data[0]).success).toBe(false);
      const prompts = await call(sim, `/api/v2/geo/task/prompts?task_id=${task.task_id}&date=${YESTERDAY}`);
      expect(prompts.json.data[0].hours).toBe('abc');
      const detail = await call(sim, `/api/v2/geo/prompt/detail?prompt_task_id=${first!.prompt_task_id}`);
      expect(detail.json.data.hours).toBe(first!.hours);
    } finally {
      w.reset();
    }
    expect((await walk(YESTERDAY)).totals.executions).toBe(EXECUTIONS);
  });
});
