/**
 * The client against the simulator over real sockets: every one of the 26 endpoints, every page,
 * and a full day read under injected faults with nothing lost. Counts only, no timings.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GeoClient, type RejectedRecord } from '../../src/api/client.ts';
import { ENDPOINTS, endpointId, type EndpointName } from '../../src/api/endpoints.ts';
import { RequestQueue } from '../../src/api/request-queue.ts';
import { type RunningSimulator, startSimulator } from '../../src/simulator/index.ts';

const NOW = new Date('2025-06-15T02:00:00Z'); // 10:00 in Asia/Shanghai
const DAY = '2025-06-14'; // yesterday there

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

describe('every endpoint against the simulator', () => {
  let sim: RunningSimulator;
  let client: GeoClient;
  const rejected: RejectedRecord[] = [];

  beforeAll(async () => {
    sim = await startSimulator({ seed: 3, days: 3, executionsPerDay: 300, now: () => NOW });
    client = new GeoClient({
      baseUrl: sim.url,
      auth: { apiKey: 'sim-key' },
      queue: new RequestQueue({ concurrency: 8, requestsPerSecond: 1000 }),
      onReject: (r) => rejected.push(r),
    });
  });
  afterAll(async () => {
    await client?.close();
    await sim?.close();
  });

  it('answers all 26 with valid data, every page read, matching the world', async () => {
    const w = sim.world;
    const called = new Set<EndpointName>();
    const mark = <T>(name: EndpointName, v: T): T => {
      called.add(name);
      return v;
    };

    // Auth: a second client that logs in with e-mail and password, reads, logs out.
    const loginClient = new GeoClient({
      baseUrl: sim.url,
      auth: { email: 'demo@geo-sync.local', password: 'demo-password' },
      queue: client.queue,
    });
    const who = mark('login', await loginClient.login());
    expect(who.user.email).toBe('demo@geo-sync.local');
    expect(mark('user', await loginClient.user()).email).toBe('demo@geo-sync.local');
    expect(typeof mark('logout', await loginClient.logout())).not.toBe('number');
    await loginClient.close();

    // Hierarchy: customer -> monitoring tasks -> platform tasks -> executions -> children.
    const customerId = w.customerIds()[0] as number;
    const monitoringTasks = mark(
      'customerProjects',
      await collect(client.all.customerProjects({ customer_id: customerId })),
    );
    expect(monitoringTasks.map((t) => t.project_id).sort()).toEqual(
      w
        .monitoringTasks(customerId)
        .map((t) => t.project_id)
        .sort(),
    );
    const firstPage = await client.customerProjects({ customer_id: customerId, per_page: 1 });
    expect(firstPage.total).toBe(monitoringTasks.length);

    const mt = monitoringTasks[0]!;
    const platformTasks = mark(
      'projectTasks',
      await client.projectTasks({ project_id: mt.project_id, customer_id: customerId }),
    );
    expect(platformTasks.map((t) => t.task_id)).toEqual(w.platformTasks(mt.project_id).map((t) => t.task_id));

    // A platform task that has executions on DAY.
    const pt = w.allPlatformTasks().find((t) => [...w.executions(t.task_id, DAY)].length > 0)!;
    expect(mark('taskInfo', await client.taskInfo({ task_id: pt.task_id })).task_id).toBe(pt.task_id);
    const expected = [...w.executions(pt.task_id, DAY)];
    const prompts = mark('taskPrompts', await client.taskPrompts({ task_id: pt.task_id, date: DAY }));
    expect(prompts.map((e) => e.prompt_task_id)).toEqual(expected.map((e) => e.prompt_task_id));
    const results = mark(
      'taskResults',
      await collect(client.all.taskResults({ task_id: pt.task_id, date: DAY, per_page: 2 })),
    );
    expect(results.map((e) => e.prompt_task_id)).toEqual(expected.map((e) => e.prompt_task_id));

    const ex = results.find((e) => w.sources(e.prompt_task_id).length > 1) ?? results[0]!;
    const id = ex.prompt_task_id;
    expect(mark('promptDetail', await client.promptDetail({ prompt_task_id: id })).prompt_task_id).toBe(id);
    expect(mark('promptResult', await client.promptResult({ prompt_task_id: id })).prompt_task_id).toBe(id);
    const sources = mark(
      'promptSearches',
      await collect(client.all.promptSearches({ prompt_task_id: id, per_page: 100 })),
    );
    expect(sources.map((s) => s.source_id)).toEqual(w.sources(id).map((s) => s.source_id));

    const withShot = results.find((e) => w.screenshot(e.prompt_task_id) !== null);
    const withoutShot = results.find((e) => w.screenshot(e.prompt_task_id) === null);
    if (withShot) {
      expect(
        mark('promptScreenshot', await client.promptScreenshot({ prompt_task_id: withShot.prompt_task_id }))
          .prompt_task_id,
      ).toBe(withShot.prompt_task_id);
    }
    if (withoutShot) {
      // Spec 2.7: an existing execution without a screenshot answers 200 with an empty URL.
      expect(
        mark(
          'promptScreenshot',
          await client.promptScreenshot({ prompt_task_id: withoutShot.prompt_task_id }),
        ),
      ).toMatchObject({ prompt_task_id: withoutShot.prompt_task_id, screenshot_url: '' });
    }

    // Products: every execution of the unit, all pages, against the world's card sets.
    for (const e of results) {
      const set = w.products(e.prompt_task_id);
      const pages = await collect(
        client.pages.promptProducts({ prompt_task_id: e.prompt_task_id, per_page: 2 }),
      );
      expect(pages.flatMap((p) => p.items)).toEqual(set.cards);
      expect(pages[0]).toMatchObject({ supported: set.supported, result_status: set.result_status });
    }
    called.add('promptProducts');

    // Site diagnosis of the page project.
    const started = mark('startSiteDiagnosis', await client.startSiteDiagnosis({ project_id: customerId }));
    expect([200, 202]).toContain(started.httpStatus);
    const again = await client.startSiteDiagnosis({ project_id: customerId });
    expect(again.httpStatus).toBe(200);
    expect(mark('getSiteDiagnosis', await client.getSiteDiagnosis({ project_id: customerId })).status).toBe(
      again.diagnosis.status,
    );

    // Legacy: list, detail, create, edit, daily list, execution detail/result/screenshot/sources.
    const legacy = mark('legacyProjectList', await collect(client.all.legacyProjectList({ per_page: 1 })));
    expect(legacy.length).toBeGreaterThan(0);
    const detail = mark(
      'legacyProjectDetail',
      await client.legacyProjectDetail({ number_id: mt.project_id }),
    );
    expect(detail.number_id).toBe(mt.project_id);
    const created = mark(
      'legacyProjectCreate',
      await client.legacyProjectCreate({
        brand: 'Client test',
        brand_desc: 'Acme,Rival',
        diy_prompt: 'best phone?,cheapest phone?',
        ai_platform: 'deepseek,qwen',
      }),
    );
    expect(created.project_ids).toHaveLength(2);
    const edited = mark(
      'legacyProjectEdit',
      await client.legacyProjectEdit({
        number_id: created.number_id,
        brand_desc: 'Acme',
        diy_prompt: 'best phone?',
        ai_platform: 'deepseek',
      }),
    );
    expect(edited === undefined || typeof edited === 'string').toBe(true);
    const daily = mark('legacyTaskList', await client.legacyTaskList({ project_id: pt.task_id, date: DAY }));
    expect(daily.map((d) => d.task_id)).toEqual(expected.map((e) => e.prompt_task_id));
    expect(mark('legacyTaskDetail', await client.legacyTaskDetail({ task_id: id })).task_id).toBe(id);
    const lr = mark('legacyTaskResult', await client.legacyTaskResult({ task_id: id, with_products: 1 }));
    expect(lr.task_id).toBe(id);
    expect(Array.isArray(lr.products)).toBe(true);
    if (withShot) {
      expect(
        mark('legacyTaskScreenshot', await client.legacyTaskScreenshot({ task_id: withShot.prompt_task_id }))
          .task_id,
      ).toBe(withShot.prompt_task_id);
    } else {
      called.add('legacyTaskScreenshot');
    }
    const legacySources = mark(
      'legacyTaskSearches',
      await collect(client.all.legacyTaskSearches({ task_id: id, limit: 100 })),
    );
    expect(legacySources).toHaveLength(w.sources(id).length);
    // One call without `page` is capped at `limit` (default here: the maximum, 1000).
    expect((await client.legacyTaskSearches({ task_id: id })).items).toHaveLength(
      Math.min(1000, w.sources(id).length),
    );

    // Finance.
    expect(mark('balance', await client.balance()).user_id).toBe(w.balance().user_id);
    const deductions = mark('deductionDetails', await collect(client.all.deductionDetails({ per_page: 5 })));
    expect(deductions).toHaveLength(w.deductions().length);

    expect([...called].sort()).toEqual(Object.keys(ENDPOINTS).sort());
    for (const name of Object.keys(ENDPOINTS) as EndpointName[]) {
      expect(sim.stats.byEndpoint[endpointId(name)] ?? 0, name).toBeGreaterThan(0);
    }
    expect(rejected).toEqual([]);
  });
});

describe('a full day under faults', () => {
  let sim: RunningSimulator;
  beforeAll(async () => {
    sim = await startSimulator({
      seed: 11,
      days: 2,
      executionsPerDay: 300,
      now: () => NOW,
      faults: { errorRate: 0.1, resetRate: 0.05, rateLimitPerSecond: 200, retryAfterSeconds: 1 },
    });
  });
  afterAll(async () => {
    await sim?.close();
  });

  it('reads every execution and source of the day: counts equal the world', async () => {
    const rejected: RejectedRecord[] = [];
    // Faster than the simulator's limit on purpose: the queue must find the limit by itself.
    const queue = new RequestQueue({ concurrency: 16, requestsPerSecond: 400 });
    const client = new GeoClient({
      baseUrl: sim.url,
      auth: { apiKey: 'sim-key' },
      queue,
      retry: { maxAttempts: 10, baseDelayMs: 20, maxDelayMs: 500 },
      onReject: (r) => rejected.push(r),
    });
    try {
      const totals = sim.world.dayTotals(DAY);
      expect(totals.executions).toBeGreaterThan(100);
      let executions = 0;
      let sources = 0;
      await Promise.all(
        sim.world.allPlatformTasks().map(async (pt) => {
          const work: Promise<void>[] = [];
          for await (const r of client.all.taskResults({ task_id: pt.task_id, date: DAY })) {
            executions++;
            work.push(
              (async () => {
                for await (const _s of client.all.promptSearches({ prompt_task_id: r.prompt_task_id }))
                  sources++;
              })(),
            );
          }
          await Promise.all(work);
        }),
      );
      expect(executions).toBe(totals.executions);
      expect(sources).toBe(totals.sources);
      expect(rejected).toEqual([]);
      // The faults really happened and were survived.
      expect(client.stats.retries).toBeGreaterThan(0);
      expect(sim.stats.faults.serverErrors + sim.stats.faults.resets).toBeGreaterThan(0);
      expect(client.stats.errorsByCode.SERVER_ERROR).toBe(sim.stats.faults.serverErrors);
      // A reset the server made is always seen; a keep-alive socket closing could add one more.
      expect(client.stats.errorsByCode.NETWORK ?? 0).toBeGreaterThanOrEqual(sim.stats.faults.resets);
      // Every 429 the server sent was seen, told to the queue, and retried (how many there are
      // depends on the machine's speed, so only the accounting is asserted).
      expect(client.stats.rateLimited).toBe(sim.stats.faults.rateLimited);
      expect(queue.stats.rateLimitSignals).toBe(sim.stats.faults.rateLimited);
      expect(client.stats.failures).toBe(0);
    } finally {
      await client.close();
    }
  });
});
