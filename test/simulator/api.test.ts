/**
 * Every endpoint over a real socket: bodies parse with the zod schemas of src/api/schemas,
 * auth, 404/422/400 cases, defaults with an injected clock, paging math, legacy create/edit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ENDPOINTS, endpointId } from '../../src/api/endpoints.ts';
import type { EndpointName } from '../../src/api/endpoints.ts';
import { Balance, Deduction, LoginData, User } from '../../src/api/schemas/account.ts';
import { SiteDiagnosis } from '../../src/api/schemas/diagnosis.ts';
import { ErrorBody, MessageOnly, PageObject, envelope } from '../../src/api/schemas/envelope.ts';
import {
  MonitoringTask,
  PlatformTask,
  ProductCard,
  ProductsBody,
  PromptExecution,
  PromptResult,
  PromptResultItem,
  Screenshot,
  Source,
} from '../../src/api/schemas/hierarchical.ts';
import {
  LegacyCreated,
  LegacyDailyItem,
  LegacyMonitoringTask,
  LegacyMonitoringTaskDetail,
  LegacyResult,
  LegacyScreenshot,
  LegacySearchesBody,
  LegacySource,
  LegacyTaskDetail,
} from '../../src/api/schemas/legacy.ts';
import type { RunningSimulator, WirePromptResultItem } from '../../src/simulator/index.ts';
import { startSimulator } from '../../src/simulator/index.ts';
import { firstWith } from '../helpers/world.ts';
import { NOW, YESTERDAY, call } from './helpers.ts';

let sim: RunningSimulator;
let cid: number;
let mtId: number;
let taskId: number;
let execs: WirePromptResultItem[];
/** The day's 1,200-source execution (k = 0 of the first platform task). */
let big: number;
let withCards: number;
let withShot: number;

beforeAll(async () => {
  sim = await startSimulator({ seed: 3, now: () => NOW, executionsPerDay: 400, days: 3 });
  const w = sim.world;
  cid = w.customerIds()[0]!;
  mtId = w.monitoringTasks(cid)[0]!.project_id;
  taskId = w.platformTasks(mtId)[0]!.task_id;
  execs = [...w.executions(taskId, YESTERDAY)];
  big = execs[0]!.prompt_task_id;
  // From the whole day, not the one unit: a unit of a dozen has no card set past a page in one
  // world in 13 (GEO_SIM_WORLD_SHIFT); the day's 400 always have one.
  const day = w.allPlatformTasks().flatMap((t) => [...w.executions(t.task_id, YESTERDAY)]);
  withCards = firstWith(
    day,
    (e) => w.products(e.prompt_task_id).cards.length > 20,
    'execution with more than 20 product cards',
  ).prompt_task_id;
  withShot = firstWith(execs, (e) => e.screenshot_url !== null, 'execution with a screenshot').prompt_task_id;
});

afterAll(async () => {
  await sim.close();
});

type Check = (body: unknown) => void;
const single =
  (schema: z.ZodType): Check =>
  (body) =>
    envelope(schema).parse(body);
const list =
  (schema: z.ZodType): Check =>
  (body) =>
    envelope(z.array(schema).min(1)).parse(body);
const paged =
  (schema: z.ZodType): Check =>
  (body) => {
    const page = envelope(PageObject).parse(body).data;
    expect(page.data.length).toBeGreaterThan(0);
    for (const item of page.data) schema.parse(item);
  };

interface Row {
  name: EndpointName;
  path: () => string;
  body?: () => unknown;
  token?: () => Promise<string>;
  status?: number;
  check: Check;
}

const login = async () => {
  const r = await call(sim, '/api/v2/auth/login', {
    token: null,
    body: { email: 'demo@geo-sync.local', password: 'demo-password' },
  });
  return String(r.json.data.token);
};

const ROWS: Row[] = [
  {
    name: 'login',
    path: () => '/api/v2/auth/login',
    body: () => ({ email: 'demo@geo-sync.local', password: 'demo-password' }),
    check: single(LoginData),
  },
  { name: 'user', path: () => '/api/v2/auth/user', check: single(User) },
  {
    name: 'logout',
    path: () => '/api/v2/auth/logout',
    body: () => ({}),
    token: login,
    check: (b) => MessageOnly.parse(b),
  },
  {
    name: 'startSiteDiagnosis',
    path: () => `/api/v2/projects/${cid}/site-diagnosis`,
    body: () => ({}),
    status: 202,
    check: single(SiteDiagnosis),
  },
  {
    name: 'getSiteDiagnosis',
    path: () => `/api/v2/projects/${cid}/site-diagnosis`,
    check: single(SiteDiagnosis),
  },
  {
    name: 'customerProjects',
    path: () => `/api/v2/geo/customer/projects?customer_id=${cid}`,
    check: paged(MonitoringTask),
  },
  {
    name: 'projectTasks',
    path: () => `/api/v2/geo/project/tasks?project_id=${mtId}&customer_id=${cid}`,
    check: list(PlatformTask),
  },
  { name: 'taskInfo', path: () => `/api/v2/geo/task/info?task_id=${taskId}`, check: single(PlatformTask) },
  {
    name: 'taskPrompts',
    path: () => `/api/v2/geo/task/prompts?task_id=${taskId}&date=${YESTERDAY}`,
    check: list(PromptExecution),
  },
  {
    name: 'taskResults',
    path: () => `/api/v2/geo/task/results?task_id=${taskId}`,
    check: paged(PromptResultItem),
  },
  {
    name: 'promptDetail',
    path: () => `/api/v2/geo/prompt/detail?prompt_task_id=${big}`,
    check: single(PromptExecution),
  },
  {
    name: 'promptResult',
    path: () => `/api/v2/geo/prompt/result?prompt_task_id=${big}`,
    check: single(PromptResult),
  },
  {
    name: 'promptSearches',
    path: () => `/api/v2/geo/prompt/searches?prompt_task_id=${big}`,
    check: paged(Source),
  },
  {
    name: 'promptScreenshot',
    path: () => `/api/v2/geo/prompt/screenshot?prompt_task_id=${withShot}`,
    check: single(Screenshot),
  },
  {
    name: 'promptProducts',
    path: () => `/api/v2/geo/prompt/products?prompt_task_id=${withCards}`,
    check: (b) => {
      const body = ProductsBody.parse(b);
      expect(body.data.products.length).toBe(20);
      for (const c of body.data.products) ProductCard.parse(c);
      expect(body.data).toMatchObject({ supported: true, result_status: 'available' });
    },
  },
  {
    name: 'legacyProjectCreate',
    path: () => '/api/v2/geo/project/create',
    body: () => ({
      brand: '表格测试',
      brand_desc: '甲,乙',
      diy_prompt: '问题一,问题二',
      ai_platform: 'deepseek,qwen',
    }),
    check: single(LegacyCreated),
  },
  {
    name: 'legacyProjectEdit',
    path: () => '/api/v2/geo/project/edit',
    body: () => ({ number_id: mtId, brand_desc: '甲,乙', diy_prompt: '问题一', ai_platform: 'deepseek' }),
    check: (b) => expect(MessageOnly.parse(b).success).toBe(true),
  },
  { name: 'legacyProjectList', path: () => '/api/v2/geo/project/list', check: paged(LegacyMonitoringTask) },
  {
    name: 'legacyProjectDetail',
    path: () => `/api/v2/geo/project/detail?number_id=${mtId}`,
    check: single(LegacyMonitoringTaskDetail),
  },
  {
    name: 'legacyTaskList',
    path: () => `/api/v2/geo/task/list?project_id=${taskId}&date=${YESTERDAY}`,
    check: list(LegacyDailyItem),
  },
  {
    name: 'legacyTaskDetail',
    path: () => `/api/v2/geo/task/detail?task_id=${big}`,
    check: single(LegacyTaskDetail),
  },
  {
    name: 'legacyTaskResult',
    path: () => `/api/v2/geo/task/result?task_id=${withCards}&with_products=1`,
    check: single(LegacyResult),
  },
  {
    name: 'legacyTaskScreenshot',
    path: () => `/api/v2/geo/task/screenshot?task_id=${withShot}`,
    check: single(LegacyScreenshot),
  },
  {
    name: 'legacyTaskSearches',
    path: () => `/api/v2/geo/task/searches?task_id=${big}&page=1`,
    check: (b) => {
      const body = LegacySearchesBody.parse(b);
      expect(body.data).toHaveLength(10);
      for (const s of body.data) LegacySource.parse(s);
      expect(body.pagination).toEqual({ current_page: 1, last_page: 120, per_page: 10, total: 1200 });
    },
  },
  { name: 'balance', path: () => '/api/v2/finance/balance', check: single(Balance) },
  { name: 'deductionDetails', path: () => '/api/v2/finance/deduction/details', check: paged(Deduction) },
];

describe('every endpoint answers a body that parses with its schema', () => {
  it('the table covers the 26 endpoints', () => {
    expect(ROWS.map((r) => r.name).sort()).toEqual((Object.keys(ENDPOINTS) as EndpointName[]).sort());
  });

  it.each(ROWS.map((r) => [r.name, r] as const))('%s', async (name, row) => {
    const token = row.token ? await row.token() : undefined;
    const before = sim.stats.byEndpoint[endpointId(name)] ?? 0;
    const r = await call(sim, row.path(), {
      method: ENDPOINTS[name].method,
      ...(row.body ? { body: row.body() } : {}),
      ...(token ? { token } : {}),
    });
    expect(r.status, JSON.stringify(r.body)).toBe(row.status ?? 200);
    expect(r.headers.get('content-type')).toMatch(/application\/json/);
    row.check(r.body);
    expect(sim.stats.byEndpoint[endpointId(name)]).toBe(before + 1);
  });
});

describe('authentication', () => {
  const protectedRows = ROWS.filter((r) => ENDPOINTS[r.name].auth);

  it.each(protectedRows.map((r) => [r.name, r] as const))(
    '%s: 401 without a valid token',
    async (name, row) => {
      for (const token of [null, 'wrong-key']) {
        const r = await call(sim, row.path(), {
          method: ENDPOINTS[name].method,
          token,
          ...(row.body ? { body: row.body() } : {}),
        });
        expect(r.status).toBe(401);
        ErrorBody.parse(r.body);
      }
    },
  );

  it('login with wrong credentials: 401 success=false with a message', async () => {
    const r = await call(sim, '/api/v2/auth/login', {
      token: null,
      body: { email: 'demo@geo-sync.local', password: 'nope' },
    });
    expect(r.status).toBe(401);
    expect(r.json).toMatchObject({ success: false, message: expect.any(String) });
  });

  it('a login token works until logout revokes it; the API key stays valid', async () => {
    const token = await login();
    expect((await call(sim, '/api/v2/auth/user', { token })).status).toBe(200);
    expect((await call(sim, '/api/v2/auth/logout', { token, body: {} })).status).toBe(200);
    expect((await call(sim, '/api/v2/auth/user', { token })).status).toBe(401);
    expect((await call(sim, '/api/v2/auth/user')).status).toBe(200);
  });

  it('accepts several configured API keys', async () => {
    const other = await startSimulator({ apiKeys: ['k1', 'k2'], executionsPerDay: 10, days: 1 });
    try {
      expect((await call(other, '/api/v2/finance/balance', { token: 'k2' })).status).toBe(200);
      expect((await call(other, '/api/v2/finance/balance', { token: 'sim-key' })).status).toBe(401);
    } finally {
      await other.close();
    }
  });
});

describe('404: missing, deleted or not readable', () => {
  const rows: [string, () => string, 'hier' | 'legacy'][] = [
    [
      'project/tasks of an unreadable monitoring task',
      () => `/api/v2/geo/project/tasks?project_id=${sim.world.unreadableMonitoringTaskIds[0]}`,
      'hier',
    ],
    [
      'project/tasks with another customer_id',
      () => `/api/v2/geo/project/tasks?project_id=${mtId}&customer_id=${sim.world.customerIds()[1]}`,
      'hier',
    ],
    ['project/tasks unknown', () => '/api/v2/geo/project/tasks?project_id=1', 'hier'],
    [
      'task/info of an unreadable platform task',
      () => `/api/v2/geo/task/info?task_id=${sim.world.unreadablePlatformTaskIds[0]}`,
      'hier',
    ],
    ['task/prompts unknown', () => '/api/v2/geo/task/prompts?task_id=1', 'hier'],
    [
      'task/results unreadable',
      () => `/api/v2/geo/task/results?task_id=${sim.world.unreadablePlatformTaskIds[0]}`,
      'hier',
    ],
    ['prompt/detail unknown', () => '/api/v2/geo/prompt/detail?prompt_task_id=123', 'hier'],
    [
      'prompt/result out of the k range',
      () => `/api/v2/geo/prompt/result?prompt_task_id=${big + execs.length}`,
      'hier',
    ],
    ['prompt/searches unknown', () => '/api/v2/geo/prompt/searches?prompt_task_id=9', 'hier'],
    ['prompt/products unknown', () => '/api/v2/geo/prompt/products?prompt_task_id=9', 'hier'],
    [
      'site-diagnosis of the unreadable project',
      () => `/api/v2/projects/${sim.world.unreadableCustomerId}/site-diagnosis`,
      'hier',
    ],
    ['site-diagnosis of an unknown project', () => '/api/v2/projects/1/site-diagnosis', 'hier'],
    ['unknown path', () => '/api/v2/geo/nothing', 'hier'],
    [
      'legacy project/detail unreadable',
      () => `/api/v2/geo/project/detail?number_id=${sim.world.unreadableMonitoringTaskIds[0]}`,
      'legacy',
    ],
    ['legacy task/list unknown', () => '/api/v2/geo/task/list?project_id=1', 'legacy'],
    ['legacy task/detail unknown', () => '/api/v2/geo/task/detail?task_id=1', 'legacy'],
    ['legacy task/result unknown', () => '/api/v2/geo/task/result?task_id=1', 'legacy'],
    ['legacy task/screenshot unknown', () => '/api/v2/geo/task/screenshot?task_id=1', 'legacy'],
    ['legacy task/searches unknown', () => '/api/v2/geo/task/searches?task_id=1', 'legacy'],
  ];

  it.each(rows)('%s', async (_, path, kind) => {
    const r = await call(sim, path());
    expect(r.status).toBe(404);
    if (kind === 'legacy') expect(r.json).toEqual({ success: false, message: expect.any(String) });
    else expect(r.json).toEqual({ message: expect.any(String) });
  });

  it('customer/projects of the unreadable project is an empty list, not an error', async () => {
    const r = await call(sim, `/api/v2/geo/customer/projects?customer_id=${sim.world.unreadableCustomerId}`);
    expect(r.status).toBe(200);
    expect(r.json.data).toMatchObject({ data: [], total: 0, current_page: 1 });
  });
});

describe('422: invalid parameters', () => {
  const rows: [string, () => string][] = [
    ['date not a calendar day', () => `/api/v2/geo/task/results?task_id=${taskId}&date=2025-02-30`],
    ['date without dashes', () => `/api/v2/geo/task/prompts?task_id=${taskId}&date=20250614`],
    ['per_page 0', () => `/api/v2/geo/task/results?task_id=${taskId}&per_page=0`],
    ['per_page 101', () => `/api/v2/geo/task/results?task_id=${taskId}&per_page=101`],
    ['page 0', () => `/api/v2/geo/task/results?task_id=${taskId}&page=0`],
    ['sources per_page 1001', () => `/api/v2/geo/prompt/searches?prompt_task_id=${big}&per_page=1001`],
    ['products per_page 101', () => `/api/v2/geo/prompt/products?prompt_task_id=${big}&per_page=101`],
    ['customer_id missing', () => '/api/v2/geo/customer/projects'],
    ['customer_id not an integer', () => '/api/v2/geo/customer/projects?customer_id=abc'],
    ['status out of the set', () => `/api/v2/geo/customer/projects?customer_id=${cid}&status=7`],
    ['task_id missing', () => '/api/v2/geo/task/info'],
    ['legacy limit 1001', () => `/api/v2/geo/task/searches?task_id=${big}&limit=1001`],
  ];

  it.each(rows)('%s', async (_, path) => {
    const r = await call(sim, path());
    expect(r.status).toBe(422);
    expect(r.json.message).toEqual(expect.any(String));
  });

  it('start_date/end_date on hierarchical endpoints are ignored', async () => {
    const plain = await call(sim, `/api/v2/geo/task/results?task_id=${taskId}&date=${YESTERDAY}`);
    const extra = await call(
      sim,
      `/api/v2/geo/task/results?task_id=${taskId}&date=${YESTERDAY}&start_date=x&end_date=2020-01-01`,
    );
    expect(extra.status).toBe(200);
    expect(extra.body).toEqual(plain.body);
  });
});

describe('defaults: hierarchical date = yesterday, legacy task/list = today (Asia/Shanghai)', () => {
  // 2025-06-14 16:30 UTC is 2025-06-15 00:30 in Shanghai: the UTC day would be wrong.
  let late: RunningSimulator;
  let t: number;
  beforeAll(async () => {
    late = await startSimulator({
      seed: 3,
      now: () => new Date('2025-06-14T16:30:00Z'),
      executionsPerDay: 100,
      days: 2,
    });
    t = late.world.allPlatformTasks()[0]!.task_id;
  });
  afterAll(() => late.close());

  it('task/prompts and task/results without date read 2025-06-14', async () => {
    for (const p of ['prompts', 'results']) {
      const implicit = await call(late, `/api/v2/geo/task/${p}?task_id=${t}`);
      const explicit = await call(late, `/api/v2/geo/task/${p}?task_id=${t}&date=2025-06-14`);
      expect(implicit.body).toEqual(explicit.body);
      expect(JSON.stringify(implicit.body)).toContain('"date_time":"2025-06-14"');
    }
  });

  it('legacy task/list without date reads today (no data yet), not yesterday', async () => {
    const implicit = await call(late, `/api/v2/geo/task/list?project_id=${t}`);
    expect(implicit.json.data).toEqual(
      (await call(late, `/api/v2/geo/task/list?project_id=${t}&date=2025-06-15`)).json.data,
    );
    expect(implicit.json.data).toEqual([]);
    const yesterday = await call(late, `/api/v2/geo/task/list?project_id=${t}&date=2025-06-14`);
    expect(yesterday.json.data.length).toBeGreaterThan(0);
  });

  it('dates outside the history give empty lists', async () => {
    const r = await call(late, `/api/v2/geo/task/results?task_id=${t}&date=2020-01-01`);
    expect(r.json.data).toMatchObject({ data: [], total: 0, last_page: 1 });
    expect((await call(late, `/api/v2/geo/task/prompts?task_id=${t}&date=2030-01-01`)).json.data).toEqual([]);
  });
});

describe('paging math', () => {
  it('task/results: pages at per_page 7 concatenate to the day, last_page = ceil(total/7)', async () => {
    const per = 7;
    const first = await call(
      sim,
      `/api/v2/geo/task/results?task_id=${taskId}&date=${YESTERDAY}&per_page=${per}`,
    );
    const { total, last_page } = first.json.data;
    expect(total).toBe(execs.length);
    expect(last_page).toBe(Math.ceil(execs.length / per));
    const all: unknown[] = [];
    for (let p = 1; p <= last_page; p++) {
      const r = await call(
        sim,
        `/api/v2/geo/task/results?task_id=${taskId}&date=${YESTERDAY}&per_page=${per}&page=${p}`,
      );
      expect(r.json.data.current_page).toBe(p);
      all.push(...r.json.data.data);
    }
    expect(all).toEqual(execs);
    const beyond = await call(
      sim,
      `/api/v2/geo/task/results?task_id=${taskId}&date=${YESTERDAY}&per_page=${per}&page=${last_page + 1}`,
    );
    expect(beyond.json.data).toMatchObject({ data: [], total, last_page });
  });

  it('the 1,200-source execution spans 2 pages at per_page 1000', async () => {
    const p1 = await call(sim, `/api/v2/geo/prompt/searches?prompt_task_id=${big}&per_page=1000`);
    const p2 = await call(sim, `/api/v2/geo/prompt/searches?prompt_task_id=${big}&per_page=1000&page=2`);
    expect(p1.json.data).toMatchObject({ total: 1200, last_page: 2, per_page: 1000, current_page: 1 });
    expect(p1.json.data.data).toHaveLength(1000);
    expect(p2.json.data.data).toHaveLength(200);
    expect([...p1.json.data.data, ...p2.json.data.data]).toEqual(sim.world.sources(big));
  });

  it('sources default per_page 100; legacy searches default limit 10 without pagination', async () => {
    const h = await call(sim, `/api/v2/geo/prompt/searches?prompt_task_id=${big}`);
    expect(h.json.data).toMatchObject({ per_page: 100, last_page: 12 });
    const l = await call(sim, `/api/v2/geo/task/searches?task_id=${big}`);
    expect(l.json.data).toHaveLength(10);
    expect(l.json.pagination).toBeUndefined();
    const l2 = await call(sim, `/api/v2/geo/task/searches?task_id=${big}&limit=1000&page=2`);
    expect(l2.json.data).toHaveLength(200);
    expect(l2.json.pagination).toEqual({ current_page: 2, last_page: 2, per_page: 1000, total: 1200 });
    // Legacy `id` is the hierarchical source_id: the two forms join.
    expect(l2.json.data.map((s: { id: number }) => s.id)).toEqual(
      sim.world
        .sources(big)
        .slice(1000)
        .map((s) => s.source_id),
    );
  });

  it('products page in data.products with the metadata inside data', async () => {
    const cards = sim.world.products(withCards).cards;
    const got: unknown[] = [];
    const first = await call(sim, `/api/v2/geo/prompt/products?prompt_task_id=${withCards}`);
    expect(first.json.data).toMatchObject({
      total: cards.length,
      per_page: 20,
      last_page: Math.ceil(cards.length / 20),
    });
    for (let p = 1; p <= first.json.data.last_page; p++)
      got.push(
        ...(await call(sim, `/api/v2/geo/prompt/products?prompt_task_id=${withCards}&page=${p}`)).json.data
          .products,
      );
    expect(got).toEqual(cards);
  });

  it('unsupported platforms: supported false, result_status unsupported, no products', async () => {
    const t = sim.world.platformTasks(mtId).find((p) => p.model_key === 'qwen')!;
    const e = [...sim.world.executions(t.task_id, YESTERDAY)][0]!;
    const r = await call(sim, `/api/v2/geo/prompt/products?prompt_task_id=${e.prompt_task_id}`);
    expect(r.json.data).toMatchObject({
      products: [],
      supported: false,
      result_status: 'unsupported',
      total: 0,
    });
    const legacy = await call(sim, `/api/v2/geo/task/result?task_id=${e.prompt_task_id}&with_products=1`);
    expect(legacy.json.data.products).toEqual([]);
    const without = await call(sim, `/api/v2/geo/task/result?task_id=${e.prompt_task_id}`);
    expect(without.json.data.products).toBeUndefined();
  });

  it('customer/projects status filter and legacy my_project_id filter', async () => {
    const tasks = sim.world.monitoringTasks(cid);
    const status = tasks[0]!.status;
    const r = await call(sim, `/api/v2/geo/customer/projects?customer_id=${cid}&status=${status}`);
    expect(r.json.data.data).toEqual(tasks.filter((t) => t.status === status));
    const l = await call(sim, `/api/v2/geo/project/list?my_project_id=${cid}&per_page=100`);
    expect(l.json.data.data.map((t: { number_id: number }) => t.number_id).sort()).toEqual(
      tasks.map((t) => t.project_id).sort(),
    );
  });

  it('deduction details: newest first, filtered by day and by prompt execution', async () => {
    const all = sim.world.deductions();
    const r = await call(
      sim,
      `/api/v2/finance/deduction/details?start_date=${YESTERDAY}&end_date=${YESTERDAY}&per_page=1000`,
    );
    const expected = all.filter((d) => d.created_at.startsWith(YESTERDAY)).reverse();
    expect(r.json.data.data).toEqual(expected);
    const one = expected[1]!;
    const byId = await call(sim, `/api/v2/finance/deduction/details?project_id=${one.project_id}`);
    expect(byId.json.data.data).toContainEqual(one);
  });

  it('unstableTotals: total varies between pages, the data does not', async () => {
    const wobbly = await startSimulator({
      seed: 3,
      now: () => NOW,
      executionsPerDay: 400,
      days: 3,
      unstableTotals: true,
    });
    try {
      const totals = new Set<number>();
      const items: unknown[] = [];
      for (let p = 1; p <= 4; p++) {
        const r = await call(
          wobbly,
          `/api/v2/geo/task/results?task_id=${taskId}&date=${YESTERDAY}&per_page=5&page=${p}`,
        );
        totals.add(r.json.data.total);
        items.push(...r.json.data.data);
      }
      expect(totals.size).toBeGreaterThan(1);
      expect(items).toEqual(execs.slice(0, 20));
    } finally {
      await wobbly.close();
    }
  });
});

describe('legacy create and edit', () => {
  const base = {
    brand: '新品牌监测',
    brand_desc: '品牌甲,品牌乙',
    diy_prompt: '问题一,问题二',
    ai_platform: 'deepseek,doubao',
  };

  it.each([
    ['empty name', { ...base, brand: '  ' }],
    ['no platform', { ...base, ai_platform: '' }],
    ['unknown platform', { ...base, ai_platform: 'deepseek,chatgpt' }],
    ['week_restart out of range', { ...base, week_restart: 5 }],
    ['only_rank out of range', { ...base, only_rank: 2 }],
    ['missing questions', { brand: 'x', brand_desc: 'a', ai_platform: 'qwen' }],
  ])('create refuses %s with 400 success=false', async (_, body) => {
    const r = await call(sim, '/api/v2/geo/project/create', { body });
    expect(r.status).toBe(400);
    expect(r.json).toEqual({ success: false, message: expect.any(String) });
  });

  it('a created task appears in project/list, project/detail and project/tasks', async () => {
    const r = await call(sim, '/api/v2/geo/project/create', { body: { ...base, week_restart: 1 } });
    const { number_id, project_ids } = r.json.data;
    expect(project_ids).toHaveLength(2);
    const listed = await call(sim, '/api/v2/geo/project/list?per_page=100');
    expect(listed.json.data.data.map((t: { number_id: number }) => t.number_id)).toContain(number_id);
    const detail = await call(sim, `/api/v2/geo/project/detail?number_id=${number_id}`);
    expect(detail.json.data).toMatchObject({
      number_id,
      brand_name: '新品牌监测',
      brand_desc_list: '品牌甲\n品牌乙',
      prompts: ['问题一', '问题二'],
      week_restart: 1,
      projects: [
        { project_id: project_ids[0], model_key: 'deepseek', prompts: ['问题一', '问题二'] },
        { project_id: project_ids[1], model_key: 'doubao' },
      ],
    });
    const tasks = await call(sim, `/api/v2/geo/project/tasks?project_id=${number_id}`);
    expect(
      tasks.json.data.map((t: { task_id: number; customer_id: null }) => [t.task_id, t.customer_id]),
    ).toEqual([
      [project_ids[0], null],
      [project_ids[1], null],
    ]);
    expect(sim.world.allPlatformTasks().map((t) => t.task_id)).toContain(project_ids[0]);
  });

  it('edit changes brands, questions and platforms; dropped platforms are paused', async () => {
    const created = await call(sim, '/api/v2/geo/project/create', {
      body: { ...base, brand: `${base.brand}-1` },
    });
    const { number_id, project_ids } = created.json.data;
    const r = await call(sim, '/api/v2/geo/project/edit', {
      body: {
        number_id,
        brand_desc: '品牌丙',
        diy_prompt: '新问题',
        ai_platform: 'doubao,kimi_back',
        rank_match: 1,
      },
    });
    expect(r.status).toBe(200);
    const detail = (await call(sim, `/api/v2/geo/project/detail?number_id=${number_id}`)).json.data;
    expect(detail).toMatchObject({ brand_desc_list: '品牌丙', prompts: ['新问题'], rank_match: 1 });
    expect(detail.projects.map((p: { model_key: string }) => p.model_key)).toEqual([
      'deepseek',
      'doubao',
      'kimi_back',
    ]);
    const info = await call(sim, `/api/v2/geo/task/info?task_id=${project_ids[0]}`);
    expect(info.json.data).toMatchObject({ status: -1, status_name: '已暂停' });
  });

  it('create refuses a name already in use with the server-side 400', async () => {
    const body = { ...base, brand: '重名测试' };
    expect((await call(sim, '/api/v2/geo/project/create', { body })).status).toBe(200);
    const again = await call(sim, '/api/v2/geo/project/create', { body });
    expect(again.status).toBe(400);
    expect(again.json).toEqual({ success: false, message: '监测任务名称已存在: 重名测试' });
  });

  it('edit: 404 for an unknown monitoring task, 400 for a bad body', async () => {
    const body = { number_id: 1, brand_desc: 'a', diy_prompt: 'b', ai_platform: 'qwen' };
    expect((await call(sim, '/api/v2/geo/project/edit', { body })).status).toBe(404);
    const bad = await call(sim, '/api/v2/geo/project/edit', {
      body: { ...body, number_id: mtId, ai_platform: 'x' },
    });
    expect(bad.status).toBe(400);
    expect(bad.json.success).toBe(false);
  });

  it('mutations.reset() drops created tasks', async () => {
    const created = await call(sim, '/api/v2/geo/project/create', {
      body: { ...base, brand: `${base.brand}-2` },
    });
    sim.world.mutations.reset();
    const r = await call(sim, `/api/v2/geo/project/detail?number_id=${created.json.data.number_id}`);
    expect(r.status).toBe(404);
  });
});
