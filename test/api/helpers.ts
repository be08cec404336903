/** Shared set-up of the client tests: a MockAgent, a client on it, and sample records. */
import { MockAgent } from 'undici';
import { type Clock, GeoClient, type GeoClientOptions, type RejectedRecord } from '../../src/api/client.ts';
import { RequestQueue } from '../../src/api/request-queue.ts';

export const ORIGIN = 'http://geo.test';
export const API_KEY = 'sk-test-0123456789abcdef';
export const JSON_HEADERS = { 'content-type': 'application/json' };

/** A queue that records Retry-After pauses instead of waiting them out. */
export class RecordingQueue extends RequestQueue {
  readonly pausesAsked: number[] = [];
  override pauseFor(ms: number): void {
    this.pausesAsked.push(ms);
  }
}

/** A clock whose sleeps return at once and are recorded. */
export function fakeClock(now = Date.parse('2025-03-01T12:00:00Z')): Clock & { slept: number[] } {
  const slept: number[] = [];
  return { slept, now: () => now, sleep: async (ms) => void slept.push(ms) };
}

export function setup(opts: Partial<GeoClientOptions> = {}) {
  const agent = new MockAgent({ enableCallHistory: true });
  agent.disableNetConnect();
  const pool = agent.get(ORIGIN);
  const clock = fakeClock();
  const queue = new RecordingQueue({ concurrency: 8, requestsPerSecond: 10_000 });
  const rejected: RejectedRecord[] = [];
  const client = new GeoClient({
    baseUrl: ORIGIN,
    auth: { apiKey: API_KEY },
    dispatcher: agent,
    queue,
    clock,
    random: () => 0.5,
    onReject: (r) => rejected.push(r),
    ...opts,
  });
  const calls = () => agent.getCallHistory()?.calls() ?? [];
  return { agent, pool, client, clock, queue, rejected, calls };
}

export const ok = (data: unknown, extra: Record<string, unknown> = {}) => ({ success: true, data, ...extra });

export function pageBody(
  items: unknown[],
  meta: { current_page: number; last_page: number; total?: number; per_page?: number },
) {
  return ok({ data: items, total: items.length, per_page: 100, ...meta });
}

export const monitoringTask = (project_id: number) => ({
  customer_id: 7,
  project_id,
  project_name: `task ${project_id}`,
  brand_cate_desc: 'phones',
  brand_desc_list: 'A\nB',
  status: 1,
  status_name: 'in progress',
  created_at: '2025-01-01 10:00:00',
  task_count: 2,
  prompts: ['best phone?'],
});

export const platformTask = (task_id: number) => ({
  customer_id: 7,
  project_id: 70,
  task_id,
  task_name: 'deepseek',
  model_key: 'deepseek',
  model_name: 'DeepSeek',
  engine: 'deepseek',
  status: 1,
  status_name: 'in progress',
});

export const execution = (prompt_task_id: number) => ({
  customer_id: 7,
  project_id: 70,
  task_id: 700,
  prompt_task_id,
  prompt_name: 'best phone?',
  date_time: '2025-02-28',
  hours: 9,
  status: 2,
  model: 'deepseek',
  engine: 'deepseek',
  brand_exposure: '1',
  screenshot_url: null,
});

export const resultItem = (prompt_task_id: number) => ({
  ...execution(prompt_task_id),
  result_status: 'available',
  answer: 'A is best',
  think: null,
  rank_exposure: '1',
  rank_exposure_number: '1',
  rank_details: [{ brand: 'A', brand_short: 'A', position: 1, visibility: 80, score: 90 }],
});

export const source = (source_id: number) => ({
  customer_id: 7,
  project_id: 70,
  task_id: 700,
  prompt_task_id: 7000,
  source_id,
  url: `https://example.com/${source_id}`,
  title: 'A review',
  domain: 'example.com',
  cite_index: '1',
  snippet: 'A is best',
  upstream_task_id: 'up-1',
});

type Pool = ReturnType<MockAgent['get']>;

export interface RouteReply {
  status?: number;
  body?: unknown;
  /** Sent as is instead of JSON. */
  text?: string;
  headers?: Record<string, string>;
}

/**
 * Answers every request to `path` (query ignored for matching) with `handler`, which sees the
 * query. Persistent: the handler decides what each call gets.
 */
export function route(
  pool: Pool,
  method: 'GET' | 'POST',
  path: string,
  handler: (query: URLSearchParams, n: number) => RouteReply,
): void {
  let n = 0;
  pool
    .intercept({ path: (p) => p.split('?')[0] === path, method })
    .reply((o) => {
      const r = handler(new URL(o.path, ORIGIN).searchParams, n++);
      return {
        statusCode: r.status ?? 200,
        data: r.text ?? JSON.stringify(r.body ?? {}),
        responseOptions: { headers: { ...JSON_HEADERS, ...r.headers } },
      };
    })
    .persist();
}

/** Answers the next requests to `path`, one reply each, in order. */
export function replies(pool: Pool, method: 'GET' | 'POST', path: string, list: RouteReply[]): void {
  route(pool, method, path, (_q, n) => list[Math.min(n, list.length - 1)] ?? {});
}
