/** Reading every page: stops at last_page, follows a changing total, detects loops. */
import { describe, expect, it } from 'vitest';
import { PageLoopError } from '../../src/api/errors.ts';
import { monitoringTask, ok, pageBody, resultItem, route, setup, source } from './helpers.ts';

const RESULTS = '/api/v2/geo/task/results';

/** Serves pages from a function of the page asked for. */
function serve(pool: ReturnType<typeof setup>['pool'], pages: (page: number, n: number) => unknown) {
  route(pool, 'GET', RESULTS, (q, n) => ({ body: pages(Number(q.get('page')), n) }));
}

const ids = (from: number, count: number) => Array.from({ length: count }, (_, i) => resultItem(from + i));

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

describe('paged reads', () => {
  it('reads pages 1..last_page with the maximum per_page, and never past it', async () => {
    const { pool, client, calls } = setup();
    serve(pool, (page) =>
      pageBody(ids(page * 100, page < 3 ? 100 : 7), { current_page: page, last_page: 3, total: 207 }),
    );
    const pages = await collect(client.pages.taskResults({ task_id: 700, date: '2025-02-28' }));
    expect(pages.map((p) => p.current_page)).toEqual([1, 2, 3]);
    expect(calls().map((c) => c.searchParams)).toEqual(
      [1, 2, 3].map((page) => ({ task_id: '700', date: '2025-02-28', per_page: '100', page: String(page) })),
    );
    const all = await collect(client.all.taskResults({ task_id: 700, date: '2025-02-28' }));
    expect(all).toHaveLength(207);
  });

  it('last_page 0 (nothing at all): one request', async () => {
    const { pool, client, calls } = setup();
    serve(pool, () => pageBody([], { current_page: 1, last_page: 0, total: 0 }));
    expect(await collect(client.all.taskResults({ task_id: 700 }))).toEqual([]);
    expect(calls()).toHaveLength(1);
  });

  it('a total that grows between pages: goes by the latest last_page', async () => {
    const { pool, client, calls } = setup();
    serve(pool, (page) =>
      pageBody(ids(page * 100, 100), {
        current_page: page,
        last_page: page === 1 ? 2 : 3,
        total: page === 1 ? 200 : 300,
      }),
    );
    const all = await collect(client.all.taskResults({ task_id: 700 }));
    expect(all).toHaveLength(300);
    expect(calls()).toHaveLength(3);
  });

  it('a total that shrinks between pages: stops at the new last_page', async () => {
    const { pool, client, calls } = setup();
    serve(pool, (page) =>
      pageBody(ids(page * 100, page === 1 ? 100 : 50), { current_page: page, last_page: page === 1 ? 3 : 2 }),
    );
    expect(await collect(client.all.taskResults({ task_id: 700 }))).toHaveLength(150);
    expect(calls()).toHaveLength(2);
  });

  it('an empty page ends the read even if last_page says more', async () => {
    const { pool, client, calls } = setup();
    serve(pool, (page) => pageBody(page === 1 ? ids(100, 100) : [], { current_page: page, last_page: 5 }));
    expect(await collect(client.all.taskResults({ task_id: 700 }))).toHaveLength(100);
    expect(calls()).toHaveLength(2);
  });

  it('starts at the page given', async () => {
    const { pool, client, calls } = setup();
    serve(pool, (page) => pageBody(ids(page * 100, 100), { current_page: page, last_page: 3 }));
    expect(await collect(client.pages.taskResults({ task_id: 700, page: 2 }))).toHaveLength(2);
    expect(calls().map((c) => c.searchParams.page)).toEqual(['2', '3']);
  });

  it('a page whose items were all rejected does not end the read', async () => {
    const { pool, client, rejected } = setup();
    serve(pool, (page) =>
      pageBody(page === 1 ? [{ broken: true }] : ids(200, 3), { current_page: page, last_page: 2 }),
    );
    expect(await collect(client.all.taskResults({ task_id: 700 }))).toHaveLength(3);
    expect(rejected).toHaveLength(1);
  });
});

describe('loop detection', () => {
  it('the server answers another page than the one asked', async () => {
    const { pool, client, calls } = setup();
    serve(pool, (page) => pageBody(ids(page * 100, 100), { current_page: 1, last_page: 3 }));
    const err = await collect(client.all.taskResults({ task_id: 700 })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PageLoopError);
    expect((err as PageLoopError).message).toContain('asked for page 2, the server answered page 1');
    expect((err as PageLoopError).message).toContain('GET /api/v2/geo/task/results');
    expect(calls()).toHaveLength(2);
  });

  it('the same page content twice', async () => {
    const { pool, client } = setup();
    serve(pool, (page) => pageBody(ids(100, 100), { current_page: page, last_page: 9 }));
    const err = await collect(client.all.taskResults({ task_id: 700 })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PageLoopError);
    expect((err as PageLoopError).message).toContain('page 2 repeats the content of page 1');
  });

  it('more pages than the sane bound', async () => {
    const { pool, client, calls } = setup({ maxPages: 5 });
    serve(pool, (page) => pageBody(ids(page * 100, 100), { current_page: page, last_page: 1_000_000 }));
    const err = await collect(client.all.taskResults({ task_id: 700 })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PageLoopError);
    expect((err as PageLoopError).message).toContain('more than 5 pages');
    expect(calls()).toHaveLength(5);
  });
});

describe('every paged endpoint', () => {
  it('prompt/searches pages with per_page 1000', async () => {
    const { pool, client, calls } = setup();
    route(pool, 'GET', '/api/v2/geo/prompt/searches', (q) => {
      const page = Number(q.get('page'));
      return { body: pageBody([source(page)], { current_page: page, last_page: 2 }) };
    });
    const all = await collect(client.all.promptSearches({ prompt_task_id: 7000 }));
    expect(all.map((s) => s.source_id)).toEqual([1, 2]);
    expect(calls().map((c) => c.searchParams.per_page)).toEqual(['1000', '1000']);
  });

  it('prompt/products pages through data.products', async () => {
    const { pool, client } = setup();
    route(pool, 'GET', '/api/v2/geo/prompt/products', (q) => {
      const page = Number(q.get('page'));
      return {
        body: ok({
          products: [{ product: `p${page}` }],
          current_page: page,
          last_page: 3,
          total: 3,
          per_page: 1,
        }),
      };
    });
    const all = await collect(client.all.promptProducts({ prompt_task_id: 9, per_page: 1 }));
    expect(all).toEqual([{ product: 'p1' }, { product: 'p2' }, { product: 'p3' }]);
  });

  it('legacy task/searches follows pagination, or a short page when there is none', async () => {
    const item = (id: number) => ({
      id,
      task_ai_id: 'u',
      task_prompt_id: 9,
      url: 'u',
      title: 't',
      site_name: 's',
      site_icon: '',
      cite_index: '1',
      published_at: '2025-01-01',
      snippet: 's',
      domain: 'd',
    });
    const a = setup();
    route(a.pool, 'GET', '/api/v2/geo/task/searches', (q) => {
      const page = Number(q.get('page'));
      return {
        body: ok([item(page)], { pagination: { current_page: page, last_page: 2, per_page: 1, total: 2 } }),
      };
    });
    expect(
      (await collect(a.client.all.legacyTaskSearches({ task_id: 9, limit: 1 }))).map((s) => s.id),
    ).toEqual([1, 2]);

    const b = setup();
    route(b.pool, 'GET', '/api/v2/geo/task/searches', (q) => {
      const page = Number(q.get('page'));
      return { body: ok(page === 1 ? [item(1), item(2)] : [item(3)]) };
    });
    expect(
      (await collect(b.client.all.legacyTaskSearches({ task_id: 9, limit: 2 }))).map((s) => s.id),
    ).toEqual([1, 2, 3]);
    expect(b.calls()).toHaveLength(2);
  });

  it('customer projects, legacy project list and deductions read every page', async () => {
    const { pool, client } = setup();
    const projects = (id: number) => ({
      number_id: id,
      brand_name: 'b',
      brand_cate_desc: 'c',
      brand_desc_list: 'A',
      status: 1,
      status_name: 's',
      created_at: '2025-01-01 00:00:00',
      projects: [],
      prompts: [],
    });
    const deduction = (id: number) => ({
      id,
      user_id: 1,
      project_id: 9,
      diff_amount: -1.5,
      before_amount: 10,
      after_amount: 8.5,
      remark: 'r',
      created_at: '2025-01-01 00:00:00',
    });
    for (const [path, make] of [
      ['/api/v2/geo/customer/projects', monitoringTask],
      ['/api/v2/geo/project/list', projects],
      ['/api/v2/finance/deduction/details', deduction],
    ] as const) {
      route(pool, 'GET', path, (q) => {
        const page = Number(q.get('page'));
        return { body: pageBody([make(page)], { current_page: page, last_page: 2 }) };
      });
    }
    expect((await collect(client.all.customerProjects({ customer_id: 7 }))).map((t) => t.project_id)).toEqual(
      [1, 2],
    );
    expect((await collect(client.all.legacyProjectList())).map((t) => t.number_id)).toEqual([1, 2]);
    const d = await collect(client.all.deductionDetails({ start_date: '2025-01-01' }));
    expect(d.map((x) => [x.id, x.diff_amount])).toEqual([
      [1, '-1.5'],
      [2, '-1.5'],
    ]);
  });
});
