import { describe, expect, it } from 'vitest';
import { PromptResultItem, RankDetail } from '../../src/api/schemas/hierarchical.ts';
import { Deduction } from '../../src/api/schemas/account.ts';
import { SiteDiagnosis } from '../../src/api/schemas/diagnosis.ts';
import { toExecutionRow, toRankRows, validPosition } from '../../src/transform/executions.ts';
import { toCardRows, toProductsRow, toSourceRow } from '../../src/transform/children.ts';
import { toDeductionRow, toSiteDiagnosisRow } from '../../src/transform/account.ts';
import {
  addDays,
  daysBetween,
  shanghaiDay,
  shanghaiToIso,
  shanghaiYesterday,
} from '../../src/transform/time.ts';

describe('validPosition (spec 2.5 rule 2: empty or <= 0 is not a rank)', () => {
  it.each([
    [1, 1],
    [7, 7],
    [0, null],
    [-1, null],
    [-20, null],
    [null, null],
    [Number.NaN, null],
    [1.5, null],
  ])('%s -> %s', (input, expected) => {
    expect(validPosition(input)).toBe(expected);
  });
});

describe('rank_details parsing then transform: every item kept, invalid positions NULL, never 0', () => {
  it.each([
    [{ position: 3 }, 3],
    [{ position: '3' }, 3],
    [{ position: '' }, null],
    [{ position: '  ' }, null],
    [{ position: null }, null],
    [{}, null],
    [{ position: 0 }, null],
    [{ position: '0' }, null],
    [{ position: -2 }, null],
  ])('%j -> position %s', (extra, expected) => {
    const parsed = RankDetail.parse({
      brand: '石头',
      brand_short: '石头',
      visibility: 1,
      score: 80,
      ...extra,
    });
    const [row] = toRankRows(42, [parsed]);
    expect(row).toMatchObject({ prompt_task_id: 42, ordinal: 0, brand: '石头', position: expected });
  });

  it('keeps order and ordinals', () => {
    const ranks = ['A', 'B', 'C'].map((b, i) =>
      RankDetail.parse({ brand: b, brand_short: b, position: i === 1 ? 0 : i + 1, visibility: 0, score: 0 }),
    );
    expect(toRankRows(9, ranks).map((r) => [r.ordinal, r.brand, r.position])).toEqual([
      [0, 'A', 1],
      [1, 'B', null],
      [2, 'C', 3],
    ]);
  });
});

const baseResult = {
  customer_id: 101,
  project_id: 2001,
  task_id: 30001,
  prompt_task_id: 9000001,
  prompt_name: '扫地机器人哪个牌子好',
  date_time: '2026-11-21',
  hours: 9,
  status: 2,
  model: 'DeepSeek',
  engine: 'deepseek',
  brand_exposure: '石头',
  screenshot_url: null,
  result_status: 'available',
  answer: '推荐石头和科沃斯。',
  think: '用户问的是…',
  rank_exposure: '1',
  rank_exposure_number: '2',
  rank_details: [],
};

describe('toExecutionRow', () => {
  it.each([
    [
      'available keeps answer and think',
      {},
      { answer: '推荐石头和科沃斯。', think: '用户问的是…', result_status: 'available' },
    ],
    [
      'missing has null answer and think',
      { result_status: 'missing', answer: null, think: null },
      { answer: null, think: null, result_status: 'missing' },
    ],
    [
      'missing with stray text still null (status rules)',
      { result_status: 'missing', answer: 'x', think: 'y' },
      { answer: null, think: null },
    ],
    ['historical customer_id null kept null', { customer_id: null }, { customer_id: null }],
    ['prompt_task_id taken as returned', { prompt_task_id: 77 }, { prompt_task_id: 77, task_id: 30001 }],
  ])('%s', (_name, patch, expected) => {
    const item = PromptResultItem.parse({ ...baseResult, ...patch });
    expect(toExecutionRow(item)).toMatchObject(expected);
  });

  it('a missing result keeps its ranks as real data', () => {
    const item = PromptResultItem.parse({
      ...baseResult,
      result_status: 'missing',
      answer: null,
      think: null,
      rank_details: [{ brand: '石头', brand_short: '石头', position: 2, visibility: 1, score: 3 }],
    });
    expect(toRankRows(item.prompt_task_id, item.rank_details)).toHaveLength(1);
  });

  it('legacy enrichment sets created_at/updated_at as Shanghai instants', () => {
    const item = PromptResultItem.parse(baseResult);
    const row = toExecutionRow(item, {
      created_at: '2026-11-21 09:00:01',
      updated_at: '2026-11-21 09:05:00',
    });
    expect(row.created_at).toBe('2026-11-21T09:00:01+08:00');
    expect(Date.parse(row.created_at!)).toBe(Date.parse('2026-11-21T01:00:01Z'));
    expect(row.updated_at).toBe('2026-11-21T09:05:00+08:00');
  });
});

describe('time', () => {
  it.each([
    ['2026-11-21 08:00:00', '2026-11-21T08:00:00+08:00'],
    ['2026-11-21T08:00:00', '2026-11-21T08:00:00+08:00'],
    ['2026-11-21 08:00', '2026-11-21T08:00:00+08:00'],
    ['', null],
    [null, null],
    ['yesterday', null],
  ])('shanghaiToIso(%j) -> %j', (input, expected) => {
    expect(shanghaiToIso(input)).toBe(expected);
  });

  it.each([
    // 16:00 UTC is already the next day in Shanghai.
    ['2026-11-21T15:59:59Z', '2026-11-21', '2026-11-20'],
    ['2026-11-21T16:00:00Z', '2026-11-22', '2026-11-21'],
    ['2026-01-01T00:00:00Z', '2026-01-01', '2025-12-31'],
  ])('at %s Shanghai day is %s, yesterday %s', (at, day, yesterday) => {
    expect(shanghaiDay(new Date(at))).toBe(day);
    expect(shanghaiYesterday(new Date(at))).toBe(yesterday);
  });

  it('daysBetween is inclusive on both ends and crosses months', () => {
    expect(daysBetween('2026-02-27', '2026-03-02')).toEqual([
      '2026-02-27',
      '2026-02-28',
      '2026-03-01',
      '2026-03-02',
    ]);
    expect(daysBetween('2026-03-02', '2026-03-01')).toEqual([]);
    expect(addDays('2028-02-28', 1)).toBe('2028-02-29');
  });
});

describe('sources and product cards', () => {
  const source = {
    customer_id: 101,
    project_id: 2001,
    task_id: 30001,
    prompt_task_id: 9000001,
    source_id: 5,
    url: 'https://www.zhihu.com/question/1',
    title: '扫地机器人怎么选',
    domain: 'zhihu.com',
    cite_index: '1',
    snippet: '…',
    upstream_task_id: 'up-1',
  };

  it.each([
    [
      'without legacy enrichment',
      null,
      { site_name: null, site_icon: null, published_at: null, task_ai_id: null },
    ],
    [
      'with legacy enrichment',
      {
        id: 5,
        task_ai_id: 'ai-1',
        task_prompt_id: 9000001,
        url: source.url,
        title: source.title,
        site_name: '知乎',
        site_icon: 'https://zhihu.com/favicon.ico',
        cite_index: '1',
        published_at: '2026-10-01',
        snippet: '…',
        domain: 'zhihu.com',
      },
      { site_name: '知乎', task_ai_id: 'ai-1', published_at: '2026-10-01' },
    ],
  ])('%s', (_n, legacy, expected) => {
    expect(toSourceRow(source, legacy)).toMatchObject({ source_id: 5, prompt_task_id: 9000001, ...expected });
  });

  it.each([
    [
      { product_name: '石头 G20', price: '3999', shop: '京东自营', link: 'https://jd.com/1' },
      ['石头 G20', '3999', '京东自营', null, 'https://jd.com/1'],
    ],
    [{ name: 'X', price: 12.5, platform: '淘宝', url: 'u' }, ['X', '12.5', null, '淘宝', 'u']],
    [{ title: 'only title' }, ['only title', null, null, null, null]],
    [{}, [null, null, null, null, null]],
  ])('card %j -> common columns', (card, [product_name, price, shop, source, link]) => {
    const [row] = toCardRows(1, [card]);
    expect(row).toMatchObject({ position: 0, product_name, price, shop, source, link, card });
  });

  it.each([
    [{ supported: false, result_status: 'unsupported', cards: [] }, 'unsupported'],
    [{ supported: true, result_status: 'missing', cards: [] }, 'missing'],
    [{ supported: true, result_status: undefined, cards: [{ a: 1 }] }, 'available'],
    [{ supported: false, result_status: undefined, cards: [] }, 'unsupported'],
  ] as const)('products summary %j -> %s', (p, expected) => {
    const row = toProductsRow(1, {
      ...p,
      cards: [...p.cards],
      total: p.cards.length,
      field_order: undefined,
      field_labels: undefined,
    });
    expect(row.result_status).toBe(expected);
  });
});

describe('finance and diagnosis', () => {
  it('a deduction project_id is an execution id; money stays exact', () => {
    const d = Deduction.parse({
      id: 1,
      user_id: 7,
      project_id: 9000001,
      diff_amount: '-0.10',
      before_amount: 100.3,
      after_amount: '100.20',
      remark: '监测扣费',
      created_at: '2026-11-21 23:59:59',
    });
    expect(toDeductionRow(d)).toEqual({
      id: 1,
      user_id: 7,
      prompt_task_id: 9000001,
      diff_amount: '-0.10',
      before_amount: '100.3',
      after_amount: '100.20',
      remark: '监测扣费',
      created_at: '2026-11-21T23:59:59+08:00',
    });
  });

  it.each([
    [{ status: 'not_started', diagnosis_id: null, result: null }, null],
    [
      { status: 'queued', diagnosis_id: 5, result_ready: false, result: null },
      { diagnosis_id: '5', composite_score: null },
    ],
    [
      {
        status: 'completed',
        diagnosis_id: 'd-6',
        result_ready: true,
        result: { composite_score: 71.5, top_issues: [{ a: 1 }] },
      },
      { diagnosis_id: 'd-6', composite_score: 71.5, top_issues: [{ a: 1 }], result_ready: true },
    ],
    [
      { status: 'failed', diagnosis_id: 8, error: 'timeout', result: null },
      { status: 'failed', error: 'timeout' },
    ],
  ])('%j', (input, expected) => {
    const row = toSiteDiagnosisRow(101, SiteDiagnosis.parse(input), new Date('2026-11-22T00:00:00Z'));
    if (expected === null) expect(row).toBeNull();
    else expect(row).toMatchObject({ customer_id: 101, ...expected });
  });
});
