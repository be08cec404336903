/**
 * The simulator's fault switches for unexpected answers, over a real socket: an invalid child
 * (corruptChild), a child answering 404 for a listed execution (hideChild), a list that shifts
 * between two pages (moveToHeadBetweenPages), an answer saved again between two pages (resaveBetweenPages) and a
 * server-side cap of task/results pages (resultsPerPageCap); and an execution made to have no
 * screenshot (dropScreenshot), for tests that need one on whatever day they run.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { envelope } from '../../src/api/schemas/envelope.ts';
import { Screenshot } from '../../src/api/schemas/hierarchical.ts';
import type { RunningSimulator, WirePromptResultItem } from '../../src/simulator/index.ts';
import { startSimulator } from '../../src/simulator/index.ts';
import { firstWith } from '../helpers/world.ts';
import { NOW, YESTERDAY, call, type JsonReply } from './helpers.ts';

let sim: RunningSimulator;
/** A platform task's executions of yesterday, in list order. */
let unit: WirePromptResultItem[];
let taskId: number;

beforeAll(async () => {
  sim = await startSimulator({ seed: 9, now: () => NOW, executionsPerDay: 400, days: 2 });
  // A unit over three pages of 3 with a screenshot, and an execution of several rank items on its
  // first page (resaveBetweenPages): the first unit of more than 6 had none in one world in 70
  // (GEO_SIM_WORLD_SHIFT), so the unit is chosen for all three.
  const t = firstWith(
    sim.world.allPlatformTasks(),
    (p) => {
      const list = [...sim.world.executions(p.task_id, YESTERDAY)];
      return (
        list.length > 6 &&
        list.some((e) => e.screenshot_url !== null) &&
        list.slice(0, 3).some((e) => e.rank_details.length > 1)
      );
    },
    'unit of more than 6 executions, one with a screenshot and one of several rank items on its first page',
  );
  taskId = t.task_id;
  unit = [...sim.world.executions(taskId, YESTERDAY)];
});
afterEach(() => {
  sim.world.mutations.reset();
  sim.setFaults({});
});
afterAll(async () => {
  await sim.close();
});

const ids = (r: JsonReply): number[] =>
  (r.json.data.data as { prompt_task_id: number }[]).map((e) => e.prompt_task_id);

describe('child faults', () => {
  it('corruptChild: 200 with a known field of the wrong type, only for that execution and child', async () => {
    const [x, y] = unit;
    sim.world.mutations.corruptChild(x!.prompt_task_id, 'screenshot');
    sim.world.mutations.corruptChild(x!.prompt_task_id, 'sources');
    sim.world.mutations.corruptChild(x!.prompt_task_id, 'products');
    const shot = await call(sim, `/api/v2/geo/prompt/screenshot?prompt_task_id=${x!.prompt_task_id}`);
    expect(shot.status).toBe(200);
    expect(envelope(Screenshot).safeParse(shot.body).success).toBe(false);
    const searches = await call(sim, `/api/v2/geo/prompt/searches?prompt_task_id=${x!.prompt_task_id}`);
    expect(searches.json.data.total).toBe('many');
    const products = await call(sim, `/api/v2/geo/prompt/products?prompt_task_id=${x!.prompt_task_id}`);
    expect(products.json.data.total).toBe('many');
    const other = await call(sim, `/api/v2/geo/prompt/screenshot?prompt_task_id=${y!.prompt_task_id}`);
    expect(envelope(Screenshot).safeParse(other.body).success).toBe(true);
  });

  it('hideChild: the child answers 404 (hierarchical and legacy) while the execution stays listed', async () => {
    const x = unit[0]!;
    sim.world.mutations.hideChild(x.prompt_task_id, 'sources');
    expect((await call(sim, `/api/v2/geo/prompt/searches?prompt_task_id=${x.prompt_task_id}`)).status).toBe(
      404,
    );
    expect((await call(sim, `/api/v2/geo/task/searches?task_id=${x.prompt_task_id}`)).status).toBe(404);
    expect((await call(sim, `/api/v2/geo/prompt/detail?prompt_task_id=${x.prompt_task_id}`)).status).toBe(
      200,
    );
    const list = await call(sim, `/api/v2/geo/task/results?task_id=${taskId}&date=${YESTERDAY}&per_page=100`);
    expect(ids(list)).toContain(x.prompt_task_id);
  });
});

describe('screenshots made and taken', () => {
  const listed = async (id: number, task = taskId) => {
    const list = await call(sim, `/api/v2/geo/task/results?task_id=${task}&date=${YESTERDAY}&per_page=100`);
    return (list.json.data.data as WirePromptResultItem[]).find((e) => e.prompt_task_id === id)!;
  };
  const shot = async (id: number) =>
    (await call(sim, `/api/v2/geo/prompt/screenshot?prompt_task_id=${id}`)).json.data as {
      screenshot_url: string;
    };

  const legacy = async (id: number) =>
    (await call(sim, `/api/v2/geo/task/screenshot?task_id=${id}`)).json.data as { sceenshot_result: string };
  const totals = () => sim.world.dayTotals(YESTERDAY).screenshots;

  it('dropScreenshot: listed without one, prompt/screenshot and the legacy read say none, the day counts one fewer; takeScreenshot gives it back', async () => {
    const x = unit.find((e) => e.screenshot_url !== null)!;
    const m = sim.world.mutations;
    const drawn = totals();
    expect(m.dropScreenshot(x.prompt_task_id)).toBe(true);
    expect(m.dropScreenshot(x.prompt_task_id)).toBe(false);
    expect((await listed(x.prompt_task_id)).screenshot_url).toBeNull();
    expect((await shot(x.prompt_task_id)).screenshot_url).toBe('');
    expect((await legacy(x.prompt_task_id)).sceenshot_result).toBe('');
    expect(totals()).toBe(drawn - 1);
    // Every other execution as it was.
    const others = unit.filter((e) => e !== x);
    for (const e of others) expect((await listed(e.prompt_task_id)).screenshot_url).toBe(e.screenshot_url);
    expect(m.takeScreenshot(x.prompt_task_id)).toBe(true);
    expect((await listed(x.prompt_task_id)).screenshot_url).toBe(x.screenshot_url);
    expect((await shot(x.prompt_task_id)).screenshot_url).toBe(x.screenshot_url);
    expect(totals()).toBe(drawn);
    // And again: each undoes the other as often as they are made.
    expect(m.dropScreenshot(x.prompt_task_id)).toBe(true);
    expect((await listed(x.prompt_task_id)).screenshot_url).toBeNull();
    expect(totals()).toBe(drawn - 1);
  });

  it('takeScreenshot on one drawn without, then dropScreenshot: none again', async () => {
    const yesterdays = sim.world
      .allPlatformTasks()
      .flatMap((t) => [...sim.world.executions(t.task_id, YESTERDAY)]);
    const y = firstWith(yesterdays, (e) => e.screenshot_url === null, 'execution drawn without a screenshot');
    const task = y.task_id;
    const m = sim.world.mutations;
    const drawn = totals();
    expect(m.takeScreenshot(y.prompt_task_id)).toBe(true);
    expect((await listed(y.prompt_task_id, task)).screenshot_url).not.toBeNull();
    expect(totals()).toBe(drawn + 1);
    expect(m.dropScreenshot(y.prompt_task_id)).toBe(true);
    expect((await listed(y.prompt_task_id, task)).screenshot_url).toBeNull();
    expect((await shot(y.prompt_task_id)).screenshot_url).toBe('');
    expect(totals()).toBe(drawn);
  });
});

describe('lists that change between pages', () => {
  it('resultsPerPageCap: task/results pages hold at most the cap, whatever per_page asks', async () => {
    sim.setFaults({ resultsPerPageCap: 3 });
    const r = await call(sim, `/api/v2/geo/task/results?task_id=${taskId}&date=${YESTERDAY}&per_page=100`);
    expect(r.json.data).toMatchObject({
      per_page: 3,
      total: unit.length,
      last_page: Math.ceil(unit.length / 3),
    });
    expect(ids(r)).toEqual(unit.slice(0, 3).map((e) => e.prompt_task_id));
  });

  it('moveToHeadBetweenPages: after the first page, the execution heads the list and paging skips it', async () => {
    const moved = unit.at(-1)!.prompt_task_id;
    sim.world.mutations.moveToHeadBetweenPages(moved);
    const page = (p: number) =>
      call(sim, `/api/v2/geo/task/results?task_id=${taskId}&date=${YESTERDAY}&per_page=3&page=${p}`);
    const first = await page(1);
    expect(ids(first)).toEqual(unit.slice(0, 3).map((e) => e.prompt_task_id));
    const read = [...ids(first)];
    for (let p = 2; p <= first.json.data.last_page; p++) read.push(...ids(await page(p)));
    // The last item of page 1 comes again at the head of page 2; the moved one is never read.
    expect(read).not.toContain(moved);
    expect(read[3]).toBe(read[2]);
    // The full array of task/prompts lists it, first.
    const prompts = await call(sim, `/api/v2/geo/task/prompts?task_id=${taskId}&date=${YESTERDAY}`);
    expect(prompts.json.data[0].prompt_task_id).toBe(moved);
    expect(prompts.json.data).toHaveLength(unit.length);
  });

  it('resaveBetweenPages: after the first page, the execution is saved again and listed last, so paging lists it twice', async () => {
    const x = unit.slice(0, 3).find((e) => e.rank_details.length > 1)!;
    expect(x).toBeDefined();
    sim.world.mutations.resaveBetweenPages(x.prompt_task_id, 'saved again');
    const page = (p: number) =>
      call(sim, `/api/v2/geo/task/results?task_id=${taskId}&date=${YESTERDAY}&per_page=3&page=${p}`);
    const first = await page(1);
    const items = [...(first.json.data.data as WirePromptResultItem[])];
    for (let p = 2; p <= first.json.data.last_page; p++)
      items.push(...((await page(p)).json.data.data as WirePromptResultItem[]));
    const copies = items.filter((e) => e.prompt_task_id === x.prompt_task_id);
    expect(copies).toHaveLength(2);
    expect(copies[0]).toEqual(x);
    // The second copy is the execution saved again: a new answer, one rank item fewer.
    expect(copies[1]!.answer).toBe('saved again');
    expect(copies[1]!.rank_details).toEqual(x.rank_details.slice(0, -1));
    expect(items.at(-1)!.prompt_task_id).toBe(x.prompt_task_id);
    // Its own endpoint and task/prompts agree with the second copy.
    const result = await call(sim, `/api/v2/geo/prompt/result?prompt_task_id=${x.prompt_task_id}`);
    expect(result.json.data.rank_details).toEqual(copies[1]!.rank_details);
    const prompts = await call(sim, `/api/v2/geo/task/prompts?task_id=${taskId}&date=${YESTERDAY}`);
    expect(prompts.json.data.at(-1).prompt_task_id).toBe(x.prompt_task_id);
    expect(prompts.json.data).toHaveLength(unit.length);
  });
});
