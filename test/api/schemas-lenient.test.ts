/**
 * The schemas tolerate members the spec does not name, anywhere, and read the
 * display metadata of product cards and the untyped diagnosis members leniently; known fields
 * that are invalid still fail.
 */
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import {
  Balance,
  Deduction,
  LegacyMonitoringTaskDetail,
  LegacyResult,
  LegacySource,
  MonitoringTask,
  PageObject,
  PlatformTask,
  ProductsBody,
  PromptResult,
  PromptResultItem,
  Screenshot,
  SiteDiagnosis,
  Source,
  User,
  envelope,
} from '../../src/api/schemas/index.ts';
import { UNKNOWN_MEMBERS, withUnknownMembers } from '../../src/simulator/faults.ts';
import { execution, monitoringTask, platformTask, resultItem, source } from './helpers.ts';

const rank = { brand: 'Acme', brand_short: 'A', position: 1, visibility: 80, score: 7 };

const SAMPLES: [string, z.ZodType, unknown][] = [
  ['MonitoringTask', MonitoringTask, monitoringTask(1)],
  ['PlatformTask', PlatformTask, platformTask(2)],
  ['PromptResultItem', PromptResultItem, { ...resultItem(3), rank_details: [rank] }],
  [
    'PromptResult',
    PromptResult,
    {
      ...execution(3),
      result_status: 'available',
      answer: 'a',
      think: null,
      rank_exposure: '1',
      rank_exposure_number: '1',
      rank_details: [rank],
    },
  ],
  ['Source', Source, source(4)],
  [
    'Screenshot',
    Screenshot,
    {
      customer_id: 1,
      project_id: 2,
      task_id: 3,
      prompt_task_id: 4,
      screenshot_status: 2,
      screenshot_url: 'u',
    },
  ],
  [
    'ProductsBody',
    ProductsBody,
    {
      success: true,
      data: {
        products: [{ product: 'p', price: '9.9' }],
        current_page: 1,
        last_page: 1,
        total: 1,
        per_page: 20,
        field_order: ['product', 'price'],
        field_labels: { product: '商品', price: '价格' },
        supported: true,
        result_status: 'available',
      },
    },
  ],
  [
    'SiteDiagnosis',
    SiteDiagnosis,
    {
      status: 'completed',
      diagnosis_id: 5,
      result_ready: true,
      progress_percent: 100,
      current_step: 'done',
      result: { composite_score: 71.5, top_issues: [{ title: 't' }], result_json: { modules: { a: 1 } } },
    },
  ],
  [
    'LegacyMonitoringTaskDetail',
    LegacyMonitoringTaskDetail,
    {
      number_id: 1,
      brand_name: 'b',
      brand_cate_desc: 'c',
      brand_desc_list: 'x\ny',
      status: 1,
      status_name: 's',
      created_at: '2025-01-01 10:00:00',
      projects: [{ project_id: 2, model_key: 'k', model_name: 'n', prompts: ['q'] }],
      prompts: ['q'],
      week_restart: 0,
      only_rank: 0,
      rank_match: 0,
      brand_urls: [],
      emails: [],
    },
  ],
  [
    'LegacyResult',
    LegacyResult,
    {
      project_id: 2,
      task_id: 3,
      answer: null,
      think: null,
      brand_exposure: '',
      model: 'm',
      engine: 'e',
      prompt_name: 'q',
      date_time: '2025-01-01',
      rank_exposure: '',
      rank_exposure_number: '',
      rank_details: [rank],
      products: [{ product: 'p' }],
    },
  ],
  [
    'LegacySource',
    LegacySource,
    {
      id: 1,
      task_ai_id: 'a',
      task_prompt_id: 3,
      url: 'u',
      title: 't',
      site_name: 's',
      site_icon: 'i',
      cite_index: '1',
      published_at: '2025-01-01',
      snippet: 's',
      domain: 'd',
    },
  ],
  [
    'User',
    User,
    {
      id: 1,
      name: 'n',
      email: 'e',
      uuid: 'u',
      last_login_time: '2025-01-01 10:00:00',
      amount: 1.5,
      block_reason: null,
      created_at: '2025-01-01 10:00:00',
    },
  ],
  ['Balance', Balance, { amount: '12.50', user_id: 1, user_name: 'n' }],
  [
    'Deduction',
    Deduction,
    {
      id: 1,
      user_id: 1,
      project_id: 3,
      diff_amount: -1,
      before_amount: 2,
      after_amount: 1,
      remark: 'r',
      created_at: '2025-01-01 10:00:00',
    },
  ],
  ['PageObject', PageObject, { current_page: 1, data: [{ a: 1 }], total: 1, per_page: 20, last_page: 1 }],
  ['envelope', envelope(PlatformTask), { success: true, data: platformTask(2) }],
];

describe('unknown members at every depth', () => {
  it.each(SAMPLES)('%s: accepted, and the named fields read the same', (_name, schema, sample) => {
    const plain = schema.parse(sample);
    const extra = schema.safeParse(withUnknownMembers(sample));
    expect(extra.error).toBeUndefined();
    // Named fields are unchanged; the added members are kept on the value (loose objects).
    const got = extra.data as Record<string, unknown>;
    for (const [k, v] of Object.entries(plain as Record<string, unknown>)) {
      if (v === null || typeof v !== 'object') expect(got[k]).toEqual(v);
    }
    expect(got).toMatchObject(UNKNOWN_MEMBERS);
  });

  it.each(SAMPLES)('%s: a known field of the wrong type still fails', (_name, schema, sample) => {
    // The first member the sample names, given a value of a type no field takes.
    const s = withUnknownMembers(sample) as Record<string, unknown>;
    const bad = { ...s, [Object.keys(sample as object)[0]!]: Symbol('bad') };
    expect(schema.safeParse(bad).success).toBe(false);
  });
});

describe('product card display metadata is any JSON', () => {
  const body = (meta: Record<string, unknown>) => ({
    data: { products: [], current_page: 1, last_page: 1, total: 0, per_page: 20, ...meta },
  });

  it.each([
    ['a label map gaining a number', { field_labels: { product: '商品', x: 3 } }],
    ['a label map gaining null and an object', { field_labels: { x: null, y: { zh: '价格' } } }],
    ['labels as null', { field_labels: null }],
    ['labels as a list', { field_labels: [['product', '商品']] }],
    ['an order with objects and numbers', { field_order: ['product', { name: 'price' }, 3] }],
    ['an order as null', { field_order: null }],
  ])('%s', (_name, meta) => {
    const r = ProductsBody.safeParse(body(meta));
    expect(r.error).toBeUndefined();
    for (const [k, v] of Object.entries(meta))
      expect((r.data!.data as Record<string, unknown>)[k]).toEqual(v);
  });

  it.each([
    [true, true],
    [false, false],
    [1, true],
    [0, false],
    ['true', true],
    ['0', false],
    ['yes', undefined],
    [null, undefined],
    [{ web: true }, undefined],
  ])('supported %j reads as %j', (supported, want) => {
    expect(ProductsBody.parse(body({ supported })).data.supported).toBe(want);
  });

  it.each([
    ['missing', 'missing'],
    ['partially_supported', 'partially_supported'],
    [null, undefined],
    [2, '2'],
    [{ code: 'missing' }, '{"code":"missing"}'],
  ])('result_status %j reads as %j', (result_status, want) => {
    expect(ProductsBody.parse(body({ result_status })).data.result_status).toBe(want);
  });
});

describe('diagnosis members whose type the spec does not show', () => {
  it.each([
    [71.5, 71.5],
    ['71.5', 71.5],
    ['40%', 40],
    [null, null],
    ['n/a', null],
    [{ value: 3 }, null],
  ])('composite_score and progress_percent %j read as %j', (v, want) => {
    const d = SiteDiagnosis.parse({ status: 'running', progress_percent: v, result: { composite_score: v } });
    expect(d.progress_percent).toBe(want);
    expect(d.result?.composite_score).toBe(want);
  });

  it('current_step that is not text is kept as its JSON text', () => {
    expect(SiteDiagnosis.parse({ status: 'running', current_step: { id: 2 } }).current_step).toBe('{"id":2}');
  });

  it('an unknown status is still refused', () => {
    expect(SiteDiagnosis.safeParse({ status: 'paused' }).success).toBe(false);
  });
});
