/** Fault injection and stats: each fault at rate 1.0 is observed on the wire and counted. */
import { Agent, request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../src/simulator/index.ts';
import { startSimulator } from '../../src/simulator/index.ts';
import { firstWith } from '../helpers/world.ts';

let sim: RunningSimulator;
const agent = new Agent({ connections: 16 });
const PATH = '/api/v2/finance/balance';

/** Wait until a condition holds (no timing assertion: the test timeout bounds it). */
async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 5));
}

async function get(token = 'sim-key', path = PATH) {
  const r = await request(sim.url + path, {
    dispatcher: agent,
    headers: { authorization: `Bearer ${token}` },
  });
  return { status: r.statusCode, headers: r.headers, text: await r.body.text() };
}

beforeAll(async () => {
  // Yesterday's world (the real clock): 60 a day holds an execution with product cards and odd
  // rank numbers (below) whatever the day; at 10, about one day in 30 drew no cards.
  sim = await startSimulator({ executionsPerDay: 60, days: 1 });
});
afterEach(() => {
  sim.setFaults({});
  sim.stats.reset();
});
afterAll(async () => {
  await agent.close();
  await sim.close();
});

describe('faults at rate 1.0', () => {
  it('errorRate: 500/502/503 with a JSON {message}', async () => {
    sim.setFaults({ errorRate: 1 });
    const statuses = new Set<number>();
    for (let i = 0; i < 30; i++) {
      const r = await get();
      statuses.add(r.status);
      expect(JSON.parse(r.text)).toEqual({ message: expect.any(String) });
    }
    expect([...statuses].every((s) => [500, 502, 503].includes(s))).toBe(true);
    expect(statuses.size).toBeGreaterThan(1);
    expect(sim.stats.faults.serverErrors).toBe(30);
  });

  it('resetRate: the socket is destroyed with no response', async () => {
    sim.setFaults({ resetRate: 1 });
    for (let i = 0; i < 3; i++) await expect(get()).rejects.toThrow();
    expect(sim.stats.faults.resets).toBe(3);
    expect(sim.stats.total).toBe(3);
  });

  it('malformedRate: 200 with a body that is not JSON', async () => {
    sim.setFaults({ malformedRate: 1 });
    for (let i = 0; i < 10; i++) {
      const r = await get();
      expect(r.status).toBe(200);
      expect(() => JSON.parse(r.text)).toThrow();
    }
    expect(sim.stats.faults.malformed).toBe(10);
  });

  it('slowRate: delayed and counted; in-flight includes the wait', async () => {
    sim.setFaults({ slowRate: 1, slowMs: 400 });
    const all = Promise.all(Array.from({ length: 8 }, () => get()));
    await until(() => sim.stats.inFlight === 8);
    expect((await all).every((r) => r.status === 200)).toBe(true);
    expect(sim.stats.faults.slow).toBe(8);
    expect(sim.stats.peakInFlight).toBe(8);
    expect(sim.stats.inFlight).toBe(0);
  });

  it('latency with jitter: concurrent requests overlap in flight', async () => {
    sim.setFaults({ latencyMs: 30, latencyJitterMs: 10 });
    const rs = await Promise.all(Array.from({ length: 10 }, () => get()));
    expect(rs.every((r) => r.status === 200)).toBe(true);
    expect(sim.stats.peakInFlight).toBeGreaterThan(1);
    expect(sim.stats.inFlight).toBe(0);
  });

  it('rate limit: 429 with Retry-After beyond the per-token window; other tokens unaffected', async () => {
    sim.setFaults({ rateLimitPerSecond: 5, retryAfterSeconds: 3 });
    const rs = await Promise.all(Array.from({ length: 20 }, () => get()));
    const limited = rs.filter((r) => r.status === 429);
    expect(rs.filter((r) => r.status === 200)).toHaveLength(5);
    expect(limited).toHaveLength(15);
    expect(limited[0]!.headers['retry-after']).toBe('3');
    expect(sim.stats.faults.rateLimited).toBe(15);

    const login = await request(`${sim.url}/api/v2/auth/login`, {
      dispatcher: agent,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'demo@geo-sync.local', password: 'demo-password' }),
    });
    const token = ((await login.body.json()) as { data: { token: string } }).data.token;
    expect((await get(token)).status).toBe(200);
  });

  it('rateLimitEvery: every n-th request is a 429, however slowly they come', async () => {
    sim.setFaults({ rateLimitEvery: 3, retryAfterSeconds: 2 });
    const statuses: number[] = [];
    // One at a time: a per-second limit would never trip on these.
    for (let i = 0; i < 9; i++) statuses.push((await get()).status);
    expect(statuses).toEqual([200, 200, 429, 200, 200, 429, 200, 200, 429]);
    expect(() => sim.setFaults({ rateLimitEvery: 0 })).toThrow(RangeError);
    expect(() => sim.setFaults({ rateLimitEvery: 1.5 })).toThrow(RangeError);
    sim.setFaults({});
  });
});

describe('stats', () => {
  it('counts requests per EndpointId, unknown paths apart, and resets', async () => {
    await get();
    await get('sim-key', '/api/v2/geo/task/info?task_id=1');
    await get('sim-key', '/nope');
    expect(sim.stats.total).toBe(3);
    expect(sim.stats.byEndpoint).toEqual({
      'GET /api/v2/finance/balance': 1,
      'GET /api/v2/geo/task/info': 1,
      unknown: 1,
    });
    sim.stats.reset();
    expect(sim.stats.total).toBe(0);
    expect(sim.stats.byEndpoint).toEqual({});
  });

  it('setFaults changes behaviour at runtime', async () => {
    sim.setFaults({ errorRate: 1 });
    expect((await get()).status).toBeGreaterThanOrEqual(500);
    sim.setFaults({});
    expect((await get()).status).toBe(200);
    expect(() => sim.setFaults({ errorRate: 2 })).toThrow(RangeError);
  });
});

describe('determinism and shutdown', () => {
  it('the same seed draws the same faults for the same request sequence', async () => {
    const run = async () => {
      const s = await startSimulator({ seed: 9, executionsPerDay: 10, days: 1, faults: { errorRate: 0.5 } });
      const out: number[] = [];
      for (let i = 0; i < 20; i++) {
        const r = await fetch(s.url + PATH, { headers: { authorization: 'Bearer sim-key' } });
        out.push(r.status);
        await r.arrayBuffer();
      }
      await s.close();
      return out;
    };
    const a = await run();
    expect(await run()).toEqual(a);
    expect(new Set(a).size).toBeGreaterThan(1);
  });

  it('close() ends idle keep-alive sockets and requests waiting on latency', async () => {
    const s = await startSimulator({ executionsPerDay: 10, days: 1 });
    const ka = new Agent({ connections: 4 });
    await (
      await request(s.url + PATH, { dispatcher: ka, headers: { authorization: 'Bearer sim-key' } })
    ).body.text();
    s.setFaults({ latencyMs: 60_000 });
    const pending = request(s.url + PATH, {
      dispatcher: ka,
      headers: { authorization: 'Bearer sim-key' },
    }).then(
      () => 'answered',
      () => 'failed',
    );
    await until(() => s.stats.inFlight === 1);
    await s.close();
    expect(await pending).toBe('failed');
    expect(s.stats.inFlight).toBe(0);
    await ka.close();
  });
});

describe('unknownMembers', () => {
  it('adds a number, a null and a nested object to every JSON object sent, maps included', async () => {
    const { UNKNOWN_MEMBERS } = await import('../../src/simulator/faults.ts');
    sim.setFaults({ unknownMembers: true });
    // An execution with product cards, so the page carries cards and a field_labels map.
    const date = sim.world.dates()[0]!;
    const withCards = firstWith(
      sim.world.allPlatformTasks().flatMap((t) => [...sim.world.executions(t.task_id, date)]),
      (e) => sim.world.products(e.prompt_task_id).cards.length > 0,
      'execution with product cards',
    );
    const r = await get('sim-key', `/api/v2/geo/prompt/products?prompt_task_id=${withCards.prompt_task_id}`);
    expect(r.status).toBe(200);
    const body = JSON.parse(r.text) as Record<string, Record<string, unknown>>;
    /** Every object in a JSON value, at any depth, outside the added members themselves. */
    const objects = (v: unknown): Record<string, unknown>[] => {
      if (Array.isArray(v)) return v.flatMap(objects);
      if (v === null || typeof v !== 'object') return [];
      const o = v as Record<string, unknown>;
      return [
        o,
        ...Object.entries(o)
          .filter(([k]) => !(k in UNKNOWN_MEMBERS))
          .flatMap(([, x]) => objects(x)),
      ];
    };
    expect(objects(body).length).toBeGreaterThan(2);
    for (const o of objects(body)) expect(o).toMatchObject(UNKNOWN_MEMBERS);
    expect(body.data!.field_labels).toMatchObject(UNKNOWN_MEMBERS);
    sim.setFaults({});
    expect(JSON.parse((await get()).text)).not.toHaveProperty('sim_extra_number');
  });
});

describe('oddValues', () => {
  it('rewrites rank numbers and other fields from the seed: every read of a record the same', async () => {
    const date = sim.world.dates()[0]!;
    const paths = sim.world
      .allPlatformTasks()
      .filter((t) => [...sim.world.executions(t.task_id, date)].length > 0)
      .map((t) => `/api/v2/geo/task/results?task_id=${t.task_id}&date=${date}&per_page=100`);
    const read = async () => Promise.all(paths.map(async (p) => (await get('sim-key', p)).text));
    const plain = await read();
    sim.setFaults({ oddValues: true });
    const first = await read();
    const again = await read();
    sim.setFaults({});
    expect(again).toEqual(first);
    type Item = { rank_details: Record<string, unknown>[] };
    const ranks = (texts: string[]) =>
      texts.flatMap((t) =>
        (JSON.parse(t) as { data: { data: Item[] } }).data.data.flatMap((i) => i.rank_details),
      );
    const odd = ranks(first).filter((r) =>
      ['position', 'visibility', 'score'].some((f) => f in r && !Number.isInteger(r[f])),
    );
    expect(odd.length).toBeGreaterThan(0);
    // The same items, the same brands: only values changed.
    expect(ranks(first).map((r) => r.brand)).toEqual(ranks(plain).map((r) => r.brand));
  });
});
