/** Items of lists validated one by one; products metadata from either place; legacy shapes. */
import { describe, expect, it } from 'vitest';
import { InvalidResponseError } from '../../src/api/errors.ts';
import { ok, pageBody, platformTask, replies, resultItem, route, setup } from './helpers.ts';

const RESULTS = '/api/v2/geo/task/results';
const PRODUCTS = '/api/v2/geo/prompt/products';

describe('a bad item in a list', () => {
  it('goes to onReject with its raw value and reason; the others are returned', async () => {
    const { pool, client, rejected } = setup();
    const bad = { ...resultItem(2), prompt_task_id: 'two' };
    route(pool, 'GET', RESULTS, () => ({
      body: pageBody([resultItem(1), bad, resultItem(3)], { current_page: 1, last_page: 1 }),
    }));
    const page = await client.taskResults({ task_id: 700, date: '2025-02-28' });
    expect(page.items.map((r) => r.prompt_task_id)).toEqual([1, 3]);
    expect(page.total).toBe(3);
    expect(rejected).toHaveLength(1);
    expect(rejected[0]).toMatchObject({
      endpoint: 'GET /api/v2/geo/task/results',
      params: { task_id: 700, date: '2025-02-28', per_page: 100 },
      raw: bad,
    });
    expect(rejected[0]?.reason).toMatch(/^prompt_task_id: /);
  });

  it('without onReject, throws InvalidResponseError naming the item and field instead', async () => {
    const { pool, client } = setup({ onReject: undefined });
    // A rank number is never refused (rank-number.ts); a brand that is no text is.
    const bad = { ...resultItem(2), rank_details: [{ brand: 42, brand_short: 'A', position: 1 }] };
    route(pool, 'GET', RESULTS, () => ({
      body: pageBody([resultItem(1), bad], { current_page: 1, last_page: 1 }),
    }));
    const err = (await client.taskResults({ task_id: 700 }).catch((e: unknown) => e)) as InvalidResponseError;
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect(err.field).toBe('data.data[1].rank_details[0].brand');
    expect(err.raw).toEqual(bad);
    expect(err.retryable).toBe(false);
  });

  it('full arrays (project/tasks) are checked item by item too', async () => {
    const { pool, client, rejected } = setup();
    route(pool, 'GET', '/api/v2/geo/project/tasks', () => ({
      body: ok([platformTask(1), { task_id: 2 }, platformTask(3)]),
    }));
    const tasks = await client.projectTasks({ project_id: 70, customer_id: 7 });
    expect(tasks.map((t) => t.task_id)).toEqual([1, 3]);
    expect(rejected.map((r) => r.raw)).toEqual([{ task_id: 2 }]);
  });

  it('a broken page object fails the whole call, naming the field', async () => {
    const { pool, client, calls } = setup();
    route(pool, 'GET', RESULTS, () => ({ body: ok({ data: [], current_page: 1, total: 0, per_page: 100 }) }));
    const err = (await client.taskResults({ task_id: 700 }).catch((e: unknown) => e)) as InvalidResponseError;
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect(err.field).toBe('data.last_page');
    expect(calls()).toHaveLength(1);
  });
});

describe('product cards (spec 2.8)', () => {
  const cards = [{ product: 'Phone X', price: '¥1999' }, { product: 'Phone Y' }];
  const meta = {
    field_order: ['product', 'price'],
    field_labels: { product: '商品', price: '价格' },
    supported: true,
    result_status: 'available',
  };
  const paging = { current_page: 1, last_page: 1, total: 2, per_page: 100 };

  it.each([
    ['metadata inside data', ok({ products: cards, ...paging, ...meta })],
    ['metadata beside data', ok({ products: cards, ...paging }, meta)],
  ])('%s', async (_name, body) => {
    const { pool, client } = setup();
    route(pool, 'GET', PRODUCTS, () => ({ body }));
    const page = await client.promptProducts({ prompt_task_id: 9 });
    expect(page).toEqual({ items: cards, ...paging, ...meta });
  });

  it('data wins when both places carry metadata', async () => {
    const { pool, client } = setup();
    route(pool, 'GET', PRODUCTS, () => ({
      body: ok({ products: [], ...paging, total: 0, supported: false, result_status: 'unsupported' }, meta),
    }));
    const page = await client.promptProducts({ prompt_task_id: 9 });
    expect(page).toMatchObject({
      items: [],
      supported: false,
      result_status: 'unsupported',
      field_order: meta.field_order,
    });
  });

  it('a card that is not an object is rejected, the others kept', async () => {
    const { pool, client, rejected } = setup();
    route(pool, 'GET', PRODUCTS, () => ({ body: ok({ products: [cards[0], 'oops', cards[1]], ...paging }) }));
    const page = await client.promptProducts({ prompt_task_id: 9 });
    expect(page.items).toEqual(cards);
    expect(rejected.map((r) => r.raw)).toEqual(['oops']);
  });
});

describe('legacy shapes', () => {
  const src = (id: number) => ({
    id,
    task_ai_id: 'up-1',
    task_prompt_id: 9,
    url: 'https://e.com',
    title: 't',
    site_name: 'E',
    site_icon: '',
    cite_index: '1',
    published_at: '2025-01-01',
    snippet: 's',
    domain: 'e.com',
  });

  it('task/searches: items, and pagination only when the server sends it; limit defaults to 1000', async () => {
    const { pool, client, calls } = setup();
    replies(pool, 'GET', '/api/v2/geo/task/searches', [
      { body: ok([src(1)]) },
      { body: ok([src(1)], { pagination: { current_page: 1, last_page: 1, per_page: 1000, total: 1 } }) },
    ]);
    expect(await client.legacyTaskSearches({ task_id: 9 })).toEqual({ items: [src(1)] });
    expect(await client.legacyTaskSearches({ task_id: 9, page: 1 })).toEqual({
      items: [src(1)],
      pagination: { current_page: 1, last_page: 1, per_page: 1000, total: 1 },
    });
    expect(calls().map((c) => c.searchParams)).toEqual([
      { task_id: '9', limit: '1000' },
      { task_id: '9', page: '1', limit: '1000' },
    ]);
  });

  it('project/edit returns the message; an empty 200 body is accepted', async () => {
    const { pool, client } = setup();
    replies(pool, 'POST', '/api/v2/geo/project/edit', [
      { body: { success: true, message: 'saved' } },
      { text: '' },
    ]);
    const body = { number_id: 5, brand_desc: 'A', diy_prompt: 'q', ai_platform: 'qwen' };
    expect(await client.legacyProjectEdit(body)).toBe('saved');
    expect(await client.legacyProjectEdit(body)).toBeUndefined();
  });
});
