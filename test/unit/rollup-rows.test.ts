/**
 * The per-day aggregates a write transaction computes in JavaScript (src/load/core/rollup-rows.ts),
 * case by case. The SQL recomputation is held to the same rows by test/load/rollups.test.ts; these
 * pin each measure's rule where it is easy to get wrong: NULL positions, a NULL customer, a
 * screenshot from either place, a brand whose name could pass for a key separator, ownership by
 * host, and how rows of units that only gained executions combine.
 */
import { describe, expect, it } from 'vitest';
import {
  ownedBy,
  rollupRowsOf,
  weekStart,
  type ExecutionFacts,
  type RankFacts,
  type UnitFacts,
} from '../../src/load/core/rollup-rows.ts';

const DAY = '2026-11-18'; // a Wednesday
const execution = (id: number, o: Partial<ExecutionFacts> = {}): ExecutionFacts => ({
  prompt_task_id: id,
  date_time: DAY,
  task_id: 10,
  project_id: 1,
  customer_id: 7,
  engine: 'deepseek',
  model: 'r1',
  prompt_name: 'best phone?',
  result_status: 'available',
  screenshot_url: null,
  shot_url: null,
  ...o,
});
const rank = (id: number, brand: string, position: number | null, o: Partial<RankFacts> = {}): RankFacts => ({
  prompt_task_id: id,
  brand,
  position,
  visibility: null,
  score: null,
  ...o,
});
const facts = (o: Partial<UnitFacts>): UnitFacts => ({
  executions: [],
  ranks: [],
  citations: [],
  hosts: new Map(),
  ...o,
});

describe('weekStart', () => {
  it.each([
    ['2026-11-16', '2026-11-16'], // Monday
    ['2026-11-18', '2026-11-16'],
    ['2026-11-22', '2026-11-16'], // Sunday
    ['2026-01-01', '2025-12-29'], // across a year
    ['2024-03-03', '2024-02-26'], // across a leap day
  ])('%s is in the week of %s', (day, monday) => {
    expect(weekStart(day)).toBe(monday);
    expect(weekStart(day)).toBe(monday); // and again, from its cache
  });
});

describe('ownedBy', () => {
  it.each([
    ['shop.example.com', ['example.com'], true],
    ['example.com', ['example.com'], true],
    ['badexample.com', ['example.com'], false],
    ['example.com', ['shop.example.com'], false],
    ['example.com', [''], false], // an empty host owns nothing
    ['example.com', [], false],
  ])('%s owned by %j: %s', (site, hosts, owned) => {
    expect(ownedBy(site, hosts)).toBe(owned);
  });
});

describe('rollupRowsOf', () => {
  it('counts executions by status and screenshot (the screenshot row or the listed URL)', () => {
    const rows = rollupRowsOf(
      facts({
        executions: [
          execution(1, { shot_url: 'https://s/1.png' }),
          execution(2, { screenshot_url: 'https://s/2.png' }),
          execution(3, { result_status: 'missing', screenshot_url: '', shot_url: '' }),
          execution(4, { model: 'v3' }),
        ],
      }),
    );
    expect(rows.rollup_executions_daily).toEqual([
      {
        date: DAY,
        week_start: '2026-11-16',
        task_id: 10,
        project_id: 1,
        customer_id: 7,
        engine: 'deepseek',
        model: 'r1',
        executions: 3,
        available: 2,
        missing: 1,
        with_screenshot: 2,
        valid_rank_items: 0,
        citations: 0,
      },
      expect.objectContaining({ model: 'v3', executions: 1, available: 1, with_screenshot: 0 }),
    ]);
  });

  it('an execution without a customer counts once, in its own row', () => {
    const rows = rollupRowsOf(facts({ executions: [execution(1), execution(2, { customer_id: null })] }));
    expect(rows.rollup_executions_daily.map((r) => [r.customer_id, r.executions])).toEqual([
      [7, 1],
      [null, 1],
    ]);
  });

  it('brands: items, valid ones, best position per execution, top-1 and top-3, sums and counts', () => {
    const rows = rollupRowsOf(
      facts({
        executions: [execution(1), execution(2), execution(3, { prompt_name: 'cheap phone?' })],
        ranks: [
          rank(1, 'Acme', 2, { visibility: 40, score: 70 }),
          rank(1, 'Acme', 5, { visibility: 20 }),
          rank(1, 'Acme', null),
          rank(2, 'Acme', 1, { score: 90 }),
          rank(3, 'Acme', null),
          rank(2, 'Bolt|r1', 4), // a separator-like name stays its own brand
          rank(99, 'Acme', 1), // no execution: counts nowhere
        ],
      }),
    );
    const acme = rows.rollup_brands_daily.find((r) => r.brand === 'Acme')!;
    expect(acme).toMatchObject({
      rank_items: 5,
      valid_rank_items: 3,
      position_sum: 8,
      executions_ranked: 2,
      best_position_sum: 3,
      best_position: 1,
      top1_executions: 1,
      top3_executions: 2,
      visibility_sum: 60,
      visibility_items: 2,
      score_sum: 160,
      score_items: 2,
    });
    expect(rows.rollup_brands_daily.map((r) => r.brand)).toEqual(['Acme', 'Bolt|r1']);
    expect(rows.rollup_executions_daily[0]!.valid_rank_items).toBe(4);

    // Per question: runs are every execution of it, ranked or not.
    expect(
      rows.rollup_question_brands_daily.map((r) => [
        r.question,
        r.brand,
        r.runs,
        r.runs_ranked,
        r.best_position_sum,
        r.best_position,
      ]),
    ).toEqual([
      ['best phone?', 'Acme', 2, 2, 3, 1],
      ['cheap phone?', 'Acme', 1, 0, 0, null],
      ['best phone?', 'Bolt|r1', 2, 1, 4, 4],
    ]);
  });

  it('domains: citations, executions citing, owned against the monitoring task hosts', () => {
    const rows = rollupRowsOf(
      facts({
        executions: [execution(1), execution(2)],
        citations: [
          { prompt_task_id: 1, domain: 'www.shop.example.com', site: 'shop.example.com', citations: 2 },
          { prompt_task_id: 2, domain: 'www.shop.example.com', site: 'shop.example.com', citations: 1 },
          { prompt_task_id: 2, domain: 'other.org', site: 'other.org', citations: 4 },
        ],
        hosts: new Map([[1, ['example.com']]]),
      }),
    );
    expect(
      rows.rollup_domains_daily.map((r) => [r.domain, r.citations, r.executions_citing, r.owned]),
    ).toEqual([
      ['www.shop.example.com', 3, 2, true],
      ['other.org', 4, 1, false],
    ]);
    expect(rows.rollup_executions_daily[0]!.citations).toBe(7);
  });
});
