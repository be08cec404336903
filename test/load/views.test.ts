/**
 * The modelled views on both warehouses, against values computed by hand over a small
 * world with every trap: empty and <= 0 ranks (stored as NULL positions, some with visibility
 * and score), a brand named twice in one answer, two runs of one question on a day, a missing
 * answer whose ranks still count, a platform without product cards, a monitoring task without
 * brand_urls, owned domains with and without "www." and below a brand host, a look-alike domain
 * that is not owned, and two ISO weeks; then the week's edges (Sunday, Monday, ISO years that
 * differ from the calendar year).
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openWarehouse, type Warehouse } from '../../src/load/index.ts';
import { readReportData } from '../../src/report/queries.ts';
import type { Dialect } from '../../src/load/warehouse.ts';
import type { ExecutionRankRow, MonitoringTaskRow, PlatformTaskRow } from '../../src/transform/rows.ts';
import { createTempDuckDB } from '../helpers/duckdb.ts';
import { createTestDatabase, postgresReachable } from '../helpers/postgres.ts';
import { batch, card, execution, products, rank, screenshot, source } from './fixtures.ts';

const pgUp = await postgresReachable();
const DIALECTS: Dialect[] = ['duckdb', 'postgres'];

const D1 = '2026-11-16'; // Monday of ISO week 2026-W47
const D2 = '2026-11-17';
const D3 = '2026-11-23'; // Monday of 2026-W48

function monitoringTask(projectId: number, name: string): MonitoringTaskRow {
  return {
    project_id: projectId,
    customer_id: 1000,
    project_name: name,
    brand_cate_desc: 'robot vacuums',
    brand_desc_list: 'Acme\nBolt',
    status: 1,
    status_name: 'in progress',
    created_at: '2026-10-01T10:00:00+08:00',
    task_count: 2,
    prompts: ['Q1', 'Q2'],
  };
}
function platformTask(
  taskId: number,
  projectId: number,
  modelKey: string,
  modelName: string,
): PlatformTaskRow {
  return {
    task_id: taskId,
    project_id: projectId,
    customer_id: 1000,
    task_name: `${modelName} task`,
    model_key: modelKey,
    model_name: modelName,
    engine: modelKey,
    status: 1,
    status_name: 'in progress',
  };
}
const r = (
  id: number,
  ordinal: number,
  brand: string,
  position: number | null,
  visibility: number | null,
  score: number | null,
): ExecutionRankRow => rank(id, ordinal, brand, position, { visibility, score });

async function seed(w: Warehouse): Promise<void> {
  await w.upsertMonitoringTasks([monitoringTask(100, 'Robot vacuums'), monitoringTask(200, 'Purifiers')]);
  await w.updateMonitoringTaskConfig([
    {
      project_id: 100,
      week_restart: 0,
      only_rank: 0,
      rank_match: 0,
      brand_urls: ['https://www.acme.com/robots/', 'shop.acme.cn'],
      emails: [],
    },
  ]);
  await w.upsertPlatformTasks([
    platformTask(10, 100, 'deepseek', 'DeepSeek'),
    platformTask(11, 100, 'doubao', '豆包'),
    platformTask(20, 200, 'deepseek', 'DeepSeek'),
  ]);
  const at = (taskId: number, projectId: number, date: string, question: string) => ({
    task_id: taskId,
    project_id: projectId,
    date_time: date,
    prompt_name: question,
  });
  const src = (id: number, exec: number, domain: string, taskId = 10, projectId = 100) =>
    source(id, exec, domain, { task_id: taskId, project_id: projectId });
  await w.writeExecutionBatch(
    batch({
      executions: [
        execution(1001, at(10, 100, D1, 'Q1')),
        execution(1002, at(10, 100, D1, 'Q1')), // the same question again that day
        execution(1003, { ...at(10, 100, D1, 'Q2'), result_status: 'missing', answer: null }),
        execution(1101, at(11, 100, D1, 'Q1')),
        execution(1004, at(10, 100, D2, 'Q1')),
        execution(1005, at(10, 100, D3, 'Q1')),
        execution(2001, { ...at(20, 200, D1, 'Q1'), screenshot_url: 'https://img.example/2001.png' }),
      ],
      ranks: [
        r(1001, 0, 'Acme', 1, 80, 7),
        r(1001, 1, 'Bolt', 2, 60, 5),
        r(1001, 2, 'Cleo', null, null, null), // an empty rank
        r(1002, 0, 'Acme', 3, 40, 3),
        r(1002, 1, 'Bolt', null, 10, 1), // position <= 0 upstream: not a valid rank
        r(1003, 0, 'Acme', 2, 50, 4), // a missing answer's ranks are real data
        r(1101, 0, 'Bolt', 1, 90, 9),
        r(1101, 1, 'Acme', 4, 20, 2),
        r(1004, 0, 'Acme', 2, 70, 6),
        r(1004, 1, 'Acme', 5, 30, 2), // the brand named twice in one answer
        r(1005, 0, 'Bolt', 1, 100, 10),
      ],
      sources: [
        src(1, 1001, 'acme.com'),
        src(2, 1001, 'news.com'),
        src(3, 1002, 'www.acme.com'),
        src(4, 1002, 'blog.shop.acme.cn'),
        src(5, 1002, 'news.com'),
        src(6, 1101, 'notacme.com', 11),
        src(7, 1101, 'notacme.com', 11),
        src(8, 1004, 'acme.com'),
        src(9, 1005, 'news.com'),
        src(10, 2001, 'acme.com', 20, 200), // not a brand host of monitoring task 200
      ],
      screenshots: [screenshot(1001), screenshot(1002, { screenshot_url: '' })],
      products: [products(1001, { total: 2 })],
      cards: [card(1001, 0), card(1001, 1)],
    }),
  );
  await w.refreshStaleRollups();
}

for (const dialect of DIALECTS) {
  describe.skipIf(dialect === 'postgres' && !pgUp)(`modelled views (${dialect})`, () => {
    let w: Warehouse;
    const cleanup: (() => Promise<void> | void)[] = [];

    beforeAll(async () => {
      if (dialect === 'postgres') {
        const db = await createTestDatabase();
        cleanup.push(() => db.drop());
        w = await openWarehouse(db.url, { migrate: true });
      } else {
        const db = createTempDuckDB('views');
        cleanup.push(() => db.remove());
        w = await openWarehouse(db.target, { migrate: true });
      }
      await seed(w);
    });
    afterAll(async () => {
      await w?.close();
      for (const c of cleanup) await c();
    });

    /** The view's rows, with the given columns, in key order; numbers rounded to 6 places. */
    async function rows(view: string, columns: string[], order: string): Promise<Record<string, unknown>[]> {
      const got = await w.query(`SELECT ${columns.join(', ')} FROM geo.${view} ORDER BY ${order}`);
      return got.map((row) =>
        Object.fromEntries(
          Object.entries(row).map(([k, v]) => [
            k,
            typeof v === 'number' && !Number.isInteger(v) ? Math.round(v * 1e6) / 1e6 : v,
          ]),
        ),
      );
    }
    const third = Math.round((1 / 3) * 1e6) / 1e6;

    it('executions_enriched: names, Shanghai day and ISO week, answer and screenshot flags, counts', async () => {
      expect(
        await rows(
          'executions_enriched',
          [
            'prompt_task_id',
            'date',
            'week_start',
            'iso_week',
            'monitoring_task_name',
            'brands',
            'model_key',
            'platform_name',
            'question',
            'result_status',
            'has_answer',
            'has_screenshot',
            'rank_items',
            'valid_ranks',
            'sources',
            'product_cards',
          ],
          'prompt_task_id',
        ),
      ).toEqual([
        {
          prompt_task_id: 1001,
          date: D1,
          week_start: D1,
          iso_week: '2026-W47',
          monitoring_task_name: 'Robot vacuums',
          brands: 'Acme\nBolt',
          model_key: 'deepseek',
          platform_name: 'DeepSeek',
          question: 'Q1',
          result_status: 'available',
          has_answer: true,
          has_screenshot: true,
          rank_items: 3,
          valid_ranks: 2,
          sources: 2,
          product_cards: 2,
        },
        {
          prompt_task_id: 1002,
          date: D1,
          week_start: D1,
          iso_week: '2026-W47',
          monitoring_task_name: 'Robot vacuums',
          brands: 'Acme\nBolt',
          model_key: 'deepseek',
          platform_name: 'DeepSeek',
          question: 'Q1',
          result_status: 'available',
          has_answer: true,
          has_screenshot: false,
          rank_items: 2,
          valid_ranks: 1,
          sources: 3,
          product_cards: 0,
        },
        {
          prompt_task_id: 1003,
          date: D1,
          week_start: D1,
          iso_week: '2026-W47',
          monitoring_task_name: 'Robot vacuums',
          brands: 'Acme\nBolt',
          model_key: 'deepseek',
          platform_name: 'DeepSeek',
          question: 'Q2',
          result_status: 'missing',
          has_answer: false,
          has_screenshot: false,
          rank_items: 1,
          valid_ranks: 1,
          sources: 0,
          product_cards: 0,
        },
        {
          prompt_task_id: 1004,
          date: D2,
          week_start: D1,
          iso_week: '2026-W47',
          monitoring_task_name: 'Robot vacuums',
          brands: 'Acme\nBolt',
          model_key: 'deepseek',
          platform_name: 'DeepSeek',
          question: 'Q1',
          result_status: 'available',
          has_answer: true,
          has_screenshot: false,
          rank_items: 2,
          valid_ranks: 2,
          sources: 1,
          product_cards: 0,
        },
        {
          prompt_task_id: 1005,
          date: D3,
          week_start: D3,
          iso_week: '2026-W48',
          monitoring_task_name: 'Robot vacuums',
          brands: 'Acme\nBolt',
          model_key: 'deepseek',
          platform_name: 'DeepSeek',
          question: 'Q1',
          result_status: 'available',
          has_answer: true,
          has_screenshot: false,
          rank_items: 1,
          valid_ranks: 1,
          sources: 1,
          product_cards: 0,
        },
        {
          prompt_task_id: 1101,
          date: D1,
          week_start: D1,
          iso_week: '2026-W47',
          monitoring_task_name: 'Robot vacuums',
          brands: 'Acme\nBolt',
          model_key: 'doubao',
          platform_name: '豆包',
          question: 'Q1',
          result_status: 'available',
          has_answer: true,
          has_screenshot: false,
          rank_items: 2,
          valid_ranks: 2,
          sources: 2,
          product_cards: 0,
        },
        {
          prompt_task_id: 2001,
          date: D1,
          week_start: D1,
          iso_week: '2026-W47',
          monitoring_task_name: 'Purifiers',
          brands: 'Acme\nBolt',
          model_key: 'deepseek',
          platform_name: 'DeepSeek',
          question: 'Q1',
          result_status: 'available',
          has_answer: true,
          has_screenshot: true,
          rank_items: 0,
          valid_ranks: 0,
          sources: 1,
          product_cards: 0,
        },
      ]);
    });

    const visibilityColumns = [
      'task_id',
      'brand',
      'executions',
      'executions_ranked',
      'visibility_rate',
      'avg_position',
      'best_position',
      'top1_rate',
      'top3_rate',
      'avg_visibility',
      'avg_score',
    ];

    it('brand_visibility_daily: per day, platform task and brand, over every execution of the day', async () => {
      expect(
        await rows('brand_visibility_daily', ['date', ...visibilityColumns], 'date, task_id, brand'),
      ).toEqual([
        {
          date: D1,
          task_id: 10,
          brand: 'Acme',
          executions: 3,
          executions_ranked: 3,
          visibility_rate: 1,
          avg_position: 2,
          best_position: 1,
          top1_rate: third,
          top3_rate: 1,
          avg_visibility: 56.666667,
          avg_score: 4.666667,
        },
        {
          date: D1,
          task_id: 10,
          brand: 'Bolt',
          executions: 3,
          executions_ranked: 1,
          visibility_rate: third,
          avg_position: 2,
          best_position: 2,
          top1_rate: 0,
          top3_rate: third,
          avg_visibility: 35,
          avg_score: 3,
        },
        {
          date: D1,
          task_id: 10,
          brand: 'Cleo',
          executions: 3,
          executions_ranked: 0,
          visibility_rate: 0,
          avg_position: null,
          best_position: null,
          top1_rate: 0,
          top3_rate: 0,
          avg_visibility: null,
          avg_score: null,
        },
        {
          date: D1,
          task_id: 11,
          brand: 'Acme',
          executions: 1,
          executions_ranked: 1,
          visibility_rate: 1,
          avg_position: 4,
          best_position: 4,
          top1_rate: 0,
          top3_rate: 0,
          avg_visibility: 20,
          avg_score: 2,
        },
        {
          date: D1,
          task_id: 11,
          brand: 'Bolt',
          executions: 1,
          executions_ranked: 1,
          visibility_rate: 1,
          avg_position: 1,
          best_position: 1,
          top1_rate: 1,
          top3_rate: 1,
          avg_visibility: 90,
          avg_score: 9,
        },
        {
          date: D2,
          task_id: 10,
          brand: 'Acme',
          executions: 1,
          executions_ranked: 1,
          visibility_rate: 1,
          avg_position: 2,
          best_position: 2,
          top1_rate: 0,
          top3_rate: 1,
          avg_visibility: 50,
          avg_score: 4,
        },
        {
          date: D3,
          task_id: 10,
          brand: 'Bolt',
          executions: 1,
          executions_ranked: 1,
          visibility_rate: 1,
          avg_position: 1,
          best_position: 1,
          top1_rate: 1,
          top3_rate: 1,
          avg_visibility: 100,
          avg_score: 10,
        },
      ]);
    });

    it('brand_visibility_weekly: the same over ISO weeks, from the executions (not averages of days)', async () => {
      expect(
        await rows(
          'brand_visibility_weekly',
          ['week_start', 'iso_week', ...visibilityColumns],
          'week_start, task_id, brand',
        ),
      ).toEqual([
        {
          week_start: D1,
          iso_week: '2026-W47',
          task_id: 10,
          brand: 'Acme',
          executions: 4,
          executions_ranked: 4,
          visibility_rate: 1,
          avg_position: 2,
          best_position: 1,
          top1_rate: 0.25,
          top3_rate: 1,
          avg_visibility: 54,
          avg_score: 4.4,
        },
        {
          week_start: D1,
          iso_week: '2026-W47',
          task_id: 10,
          brand: 'Bolt',
          executions: 4,
          executions_ranked: 1,
          visibility_rate: 0.25,
          avg_position: 2,
          best_position: 2,
          top1_rate: 0,
          top3_rate: 0.25,
          avg_visibility: 35,
          avg_score: 3,
        },
        {
          week_start: D1,
          iso_week: '2026-W47',
          task_id: 10,
          brand: 'Cleo',
          executions: 4,
          executions_ranked: 0,
          visibility_rate: 0,
          avg_position: null,
          best_position: null,
          top1_rate: 0,
          top3_rate: 0,
          avg_visibility: null,
          avg_score: null,
        },
        {
          week_start: D1,
          iso_week: '2026-W47',
          task_id: 11,
          brand: 'Acme',
          executions: 1,
          executions_ranked: 1,
          visibility_rate: 1,
          avg_position: 4,
          best_position: 4,
          top1_rate: 0,
          top3_rate: 0,
          avg_visibility: 20,
          avg_score: 2,
        },
        {
          week_start: D1,
          iso_week: '2026-W47',
          task_id: 11,
          brand: 'Bolt',
          executions: 1,
          executions_ranked: 1,
          visibility_rate: 1,
          avg_position: 1,
          best_position: 1,
          top1_rate: 1,
          top3_rate: 1,
          avg_visibility: 90,
          avg_score: 9,
        },
        {
          week_start: D3,
          iso_week: '2026-W48',
          task_id: 10,
          brand: 'Bolt',
          executions: 1,
          executions_ranked: 1,
          visibility_rate: 1,
          avg_position: 1,
          best_position: 1,
          top1_rate: 1,
          top3_rate: 1,
          avg_visibility: 100,
          avg_score: 10,
        },
      ]);
    });

    it('brand_share_of_voice_daily: share of the valid rank items of the platform task that day, and rank', async () => {
      expect(
        await rows(
          'brand_share_of_voice_daily',
          [
            'date',
            'task_id',
            'brand',
            'valid_rank_items',
            'all_valid_rank_items',
            'share_of_voice',
            'brand_rank',
          ],
          'date, task_id, brand',
        ),
      ).toEqual([
        {
          date: D1,
          task_id: 10,
          brand: 'Acme',
          valid_rank_items: 3,
          all_valid_rank_items: 4,
          share_of_voice: 0.75,
          brand_rank: 1,
        },
        {
          date: D1,
          task_id: 10,
          brand: 'Bolt',
          valid_rank_items: 1,
          all_valid_rank_items: 4,
          share_of_voice: 0.25,
          brand_rank: 2,
        },
        {
          date: D1,
          task_id: 10,
          brand: 'Cleo',
          valid_rank_items: 0,
          all_valid_rank_items: 4,
          share_of_voice: 0,
          brand_rank: null, // no valid rank item: not ranked
        },
        {
          date: D1,
          task_id: 11,
          brand: 'Acme',
          valid_rank_items: 1,
          all_valid_rank_items: 2,
          share_of_voice: 0.5,
          brand_rank: 1,
        },
        {
          date: D1,
          task_id: 11,
          brand: 'Bolt',
          valid_rank_items: 1,
          all_valid_rank_items: 2,
          share_of_voice: 0.5,
          brand_rank: 1,
        },
        {
          date: D2,
          task_id: 10,
          brand: 'Acme',
          valid_rank_items: 2,
          all_valid_rank_items: 2,
          share_of_voice: 1,
          brand_rank: 1,
        },
        {
          date: D3,
          task_id: 10,
          brand: 'Bolt',
          valid_rank_items: 1,
          all_valid_rank_items: 1,
          share_of_voice: 1,
          brand_rank: 1,
        },
      ]);
    });

    const citationColumns = [
      'task_id',
      'domain',
      'citations',
      'executions_citing',
      'citation_share',
      'owned',
    ];

    it('citations_daily: citations, executions citing, share, and owned = one of the brand_urls hosts', async () => {
      expect(await rows('citations_daily', ['date', ...citationColumns], 'date, task_id, domain')).toEqual([
        {
          date: D1,
          task_id: 10,
          domain: 'acme.com',
          citations: 1,
          executions_citing: 1,
          citation_share: 0.2,
          owned: true,
        },
        {
          date: D1,
          task_id: 10,
          domain: 'blog.shop.acme.cn',
          citations: 1,
          executions_citing: 1,
          citation_share: 0.2,
          owned: true,
        },
        {
          date: D1,
          task_id: 10,
          domain: 'news.com',
          citations: 2,
          executions_citing: 2,
          citation_share: 0.4,
          owned: false,
        },
        {
          date: D1,
          task_id: 10,
          domain: 'www.acme.com',
          citations: 1,
          executions_citing: 1,
          citation_share: 0.2,
          owned: true,
        },
        {
          date: D1,
          task_id: 11,
          domain: 'notacme.com',
          citations: 2,
          executions_citing: 1,
          citation_share: 1,
          owned: false,
        },
        {
          date: D1,
          task_id: 20,
          domain: 'acme.com',
          citations: 1,
          executions_citing: 1,
          citation_share: 1,
          owned: false,
        },
        {
          date: D2,
          task_id: 10,
          domain: 'acme.com',
          citations: 1,
          executions_citing: 1,
          citation_share: 1,
          owned: true,
        },
        {
          date: D3,
          task_id: 10,
          domain: 'news.com',
          citations: 1,
          executions_citing: 1,
          citation_share: 1,
          owned: false,
        },
      ]);
    });

    it('citations_weekly: the same over ISO weeks', async () => {
      const sixth = Math.round((1 / 6) * 1e6) / 1e6;
      expect(
        await rows('citations_weekly', ['iso_week', ...citationColumns], 'week_start, task_id, domain'),
      ).toEqual([
        {
          iso_week: '2026-W47',
          task_id: 10,
          domain: 'acme.com',
          citations: 2,
          executions_citing: 2,
          citation_share: third,
          owned: true,
        },
        {
          iso_week: '2026-W47',
          task_id: 10,
          domain: 'blog.shop.acme.cn',
          citations: 1,
          executions_citing: 1,
          citation_share: sixth,
          owned: true,
        },
        {
          iso_week: '2026-W47',
          task_id: 10,
          domain: 'news.com',
          citations: 2,
          executions_citing: 2,
          citation_share: third,
          owned: false,
        },
        {
          iso_week: '2026-W47',
          task_id: 10,
          domain: 'www.acme.com',
          citations: 1,
          executions_citing: 1,
          citation_share: sixth,
          owned: true,
        },
        {
          iso_week: '2026-W47',
          task_id: 11,
          domain: 'notacme.com',
          citations: 2,
          executions_citing: 1,
          citation_share: 1,
          owned: false,
        },
        {
          iso_week: '2026-W47',
          task_id: 20,
          domain: 'acme.com',
          citations: 1,
          executions_citing: 1,
          citation_share: 1,
          owned: false,
        },
        {
          iso_week: '2026-W48',
          task_id: 10,
          domain: 'news.com',
          citations: 1,
          executions_citing: 1,
          citation_share: 1,
          owned: false,
        },
      ]);
    });

    it("question_rank_daily: over a day's runs of one question, best and average valid position", async () => {
      expect(
        await rows(
          'question_rank_daily',
          ['date', 'task_id', 'question', 'brand', 'runs', 'runs_ranked', 'best_position', 'avg_position'],
          'date, task_id, question, brand',
        ),
      ).toEqual([
        {
          date: D1,
          task_id: 10,
          question: 'Q1',
          brand: 'Acme',
          runs: 2,
          runs_ranked: 2,
          best_position: 1,
          avg_position: 2,
        },
        {
          date: D1,
          task_id: 10,
          question: 'Q1',
          brand: 'Bolt',
          runs: 2,
          runs_ranked: 1,
          best_position: 2,
          avg_position: 2,
        },
        {
          date: D1,
          task_id: 10,
          question: 'Q1',
          brand: 'Cleo',
          runs: 2,
          runs_ranked: 0,
          best_position: null,
          avg_position: null,
        },
        {
          date: D1,
          task_id: 10,
          question: 'Q2',
          brand: 'Acme',
          runs: 1,
          runs_ranked: 1,
          best_position: 2,
          avg_position: 2,
        },
        {
          date: D1,
          task_id: 11,
          question: 'Q1',
          brand: 'Acme',
          runs: 1,
          runs_ranked: 1,
          best_position: 4,
          avg_position: 4,
        },
        {
          date: D1,
          task_id: 11,
          question: 'Q1',
          brand: 'Bolt',
          runs: 1,
          runs_ranked: 1,
          best_position: 1,
          avg_position: 1,
        },
        {
          date: D2,
          task_id: 10,
          question: 'Q1',
          brand: 'Acme',
          runs: 1,
          runs_ranked: 1,
          best_position: 2,
          avg_position: 2,
        },
        {
          date: D3,
          task_id: 10,
          question: 'Q1',
          brand: 'Bolt',
          runs: 1,
          runs_ranked: 1,
          best_position: 1,
          avg_position: 1,
        },
      ]);
    });

    it("the report's question ranks: N counts every run of the question, also on days the brand is not named", async () => {
      // Q1 ran on D3 (1005) without Acme and on D2 (1004) without Bolt; both count in N. Platform
      // task 20 (another monitoring task, where neither brand is named) does not.
      expect((await readReportData(w, { from: D1, to: D3 })).questions).toEqual([
        { question: 'Q1', brand: 'Acme', runs: 5, runs_ranked: 4, best_position: 1, avg_position: 2.5 },
        { question: 'Q1', brand: 'Bolt', runs: 5, runs_ranked: 3, best_position: 1, avg_position: 4 / 3 },
        { question: 'Q1', brand: 'Cleo', runs: 4, runs_ranked: 0, best_position: null, avg_position: null },
        { question: 'Q2', brand: 'Acme', runs: 1, runs_ranked: 1, best_position: 2, avg_position: 2 },
      ]);
      // One day: D3 has Bolt's row only; Acme is not named on it.
      expect((await readReportData(w, { from: D3, to: D3 })).questions).toEqual([
        { question: 'Q1', brand: 'Bolt', runs: 1, runs_ranked: 1, best_position: 1, avg_position: 1 },
      ]);
    });

    it("execution_brand_ranks: one row per execution and brand, with the execution's day and platform task", async () => {
      expect(
        await rows(
          'execution_brand_ranks',
          ['prompt_task_id', 'brand', 'rank_items', 'valid_rank_items', 'best_position', 'date', 'task_id'],
          'prompt_task_id, brand',
        ),
      ).toEqual([
        {
          prompt_task_id: 1001,
          brand: 'Acme',
          rank_items: 1,
          valid_rank_items: 1,
          best_position: 1,
          date: D1,
          task_id: 10,
        },
        {
          prompt_task_id: 1001,
          brand: 'Bolt',
          rank_items: 1,
          valid_rank_items: 1,
          best_position: 2,
          date: D1,
          task_id: 10,
        },
        {
          prompt_task_id: 1001,
          brand: 'Cleo',
          rank_items: 1,
          valid_rank_items: 0,
          best_position: null,
          date: D1,
          task_id: 10,
        },
        {
          prompt_task_id: 1002,
          brand: 'Acme',
          rank_items: 1,
          valid_rank_items: 1,
          best_position: 3,
          date: D1,
          task_id: 10,
        },
        {
          prompt_task_id: 1002,
          brand: 'Bolt',
          rank_items: 1,
          valid_rank_items: 0,
          best_position: null,
          date: D1,
          task_id: 10,
        },
        {
          prompt_task_id: 1003,
          brand: 'Acme',
          rank_items: 1,
          valid_rank_items: 1,
          best_position: 2,
          date: D1,
          task_id: 10,
        },
        {
          prompt_task_id: 1004,
          brand: 'Acme',
          rank_items: 2,
          valid_rank_items: 2,
          best_position: 2,
          date: D2,
          task_id: 10,
        },
        {
          prompt_task_id: 1005,
          brand: 'Bolt',
          rank_items: 1,
          valid_rank_items: 1,
          best_position: 1,
          date: D3,
          task_id: 10,
        },
        {
          prompt_task_id: 1101,
          brand: 'Acme',
          rank_items: 1,
          valid_rank_items: 1,
          best_position: 4,
          date: D1,
          task_id: 11,
        },
        {
          prompt_task_id: 1101,
          brand: 'Bolt',
          rank_items: 1,
          valid_rank_items: 1,
          best_position: 1,
          date: D1,
          task_id: 11,
        },
      ]);
    });

    it("a day filter on the brand views gives that day's rows of the unfiltered view", async () => {
      for (const view of ['brand_visibility_daily', 'brand_share_of_voice_daily', 'question_rank_daily']) {
        const all = await w.query(`SELECT * FROM geo.${view} ORDER BY 1, 2, 3, 4, 5, 6, 7, 8, 9`);
        const day = await w.query(
          `SELECT * FROM geo.${view} WHERE date = CAST($1 AS DATE) ORDER BY 1, 2, 3, 4, 5, 6, 7, 8, 9`,
          [D1],
        );
        expect(day.length, view).toBeGreaterThan(0);
        expect(day, view).toEqual(all.filter((row) => row.date === D1));
      }
    });

    it('the names people filter by are in every view; the three older views keep working', async () => {
      for (const view of [
        'brand_visibility_daily',
        'brand_share_of_voice_daily',
        'citations_daily',
        'question_rank_daily',
      ]) {
        const [row] = await w.query(
          `SELECT monitoring_task_name, platform_name, model_key FROM geo.${view} WHERE task_id = 11 LIMIT 1`,
        );
        expect(row, view).toEqual({
          monitoring_task_name: 'Robot vacuums',
          platform_name: '豆包',
          model_key: 'doubao',
        });
      }
      expect((await w.query('SELECT * FROM geo.brand_rank_daily')).length).toBeGreaterThan(0);
      expect((await w.query('SELECT * FROM geo.citation_domains_daily')).length).toBeGreaterThan(0);
      expect((await w.query('SELECT * FROM geo.executions_daily')).length).toBeGreaterThan(0);
    });

    // Last: it adds executions to the world the tests above computed by hand.
    it('ISO weeks at their edges: Sunday ends the week, and the ISO year is not the calendar year', async () => {
      await w.upsertPlatformTasks([platformTask(30, 100, 'kimi', 'Kimi')]);
      const days = [
        '2026-11-22',
        '2026-11-23',
        '2024-12-29',
        '2024-12-30',
        '2026-12-31',
        '2027-01-03',
        '2027-01-04',
      ];
      await w.writeExecutionBatch(
        batch({
          executions: days.map((date, i) =>
            execution(3000 + i, { task_id: 30, project_id: 100, date_time: date, prompt_name: 'Q1' }),
          ),
          ranks: days.map((_, i) => r(3000 + i, 0, 'Acme', 1, 50, 5)),
        }),
      );
      await w.refreshStaleRollups();
      expect(await rows('executions_enriched', ['date', 'week_start', 'iso_week'], 'date')).toEqual(
        expect.arrayContaining([
          { date: '2024-12-29', week_start: '2024-12-23', iso_week: '2024-W52' },
          { date: '2024-12-30', week_start: '2024-12-30', iso_week: '2025-W01' },
          { date: '2026-11-22', week_start: '2026-11-16', iso_week: '2026-W47' },
          { date: '2026-11-23', week_start: '2026-11-23', iso_week: '2026-W48' },
          { date: '2026-12-31', week_start: '2026-12-28', iso_week: '2026-W53' },
          { date: '2027-01-03', week_start: '2026-12-28', iso_week: '2026-W53' },
          { date: '2027-01-04', week_start: '2027-01-04', iso_week: '2027-W01' },
        ]),
      );
      const weeks = await w.query(
        `SELECT iso_week, executions FROM geo.brand_visibility_weekly WHERE task_id = 30 ORDER BY week_start`,
      );
      expect(weeks.map((x) => [x.iso_week, Number(x.executions)])).toEqual([
        ['2024-W52', 1],
        ['2025-W01', 1],
        ['2026-W47', 1],
        ['2026-W48', 1],
        ['2026-W53', 2],
        ['2027-W01', 1],
      ]);
    });

    // Adds executions of platform task 40 only, on a day of its own.
    it('averages that are not exact (30/11) are the same double on both warehouses', async () => {
      const day = '2026-12-07';
      await w.upsertPlatformTasks([platformTask(40, 100, 'qwen', 'Qwen')]);
      // Eleven runs of one question; Acme's positions 3 x 8 and 2 x 3 sum to 30.
      const positions = [3, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2];
      await w.writeExecutionBatch(
        batch({
          executions: positions.map((_, i) =>
            execution(4000 + i, { task_id: 40, project_id: 100, date_time: day, prompt_name: 'Q1' }),
          ),
          ranks: positions.map((p, i) => r(4000 + i, 0, 'Acme', p, 50, 5)),
        }),
      );
      await w.refreshStaleRollups();
      const avg = async (sql: string) => {
        const [row] = await w.query(sql);
        return row!.avg_position;
      };
      expect(await avg(`SELECT avg_position FROM geo.brand_visibility_daily WHERE task_id = 40`)).toBe(
        30 / 11,
      );
      expect(await avg(`SELECT avg_position FROM geo.brand_visibility_weekly WHERE task_id = 40`)).toBe(
        30 / 11,
      );
      expect(await avg(`SELECT avg_position FROM geo.question_rank_daily WHERE task_id = 40`)).toBe(30 / 11);
      expect(await avg(`SELECT avg_position FROM geo.brand_rank_daily WHERE task_id = 40`)).toBe(30 / 11);
    });

    // Adds executions of platform task 41 only, on a day of its own.
    it('brand_share_of_voice_daily on a day without valid ranks: no share and no rank; the report leaves such brands out', async () => {
      const day = '2026-12-14';
      await w.upsertPlatformTasks([platformTask(41, 100, 'yuanbao', 'Yuanbao')]);
      await w.writeExecutionBatch(
        batch({
          executions: [execution(4101, { task_id: 41, project_id: 100, date_time: day, prompt_name: 'Q1' })],
          ranks: [r(4101, 0, 'Acme', null, 10, 1), r(4101, 1, 'Bolt', null, null, null)],
        }),
      );
      await w.refreshStaleRollups();
      const got = await w.query(
        `SELECT brand, valid_rank_items, all_valid_rank_items, share_of_voice, brand_rank
           FROM geo.brand_share_of_voice_daily WHERE task_id = 41 ORDER BY brand`,
      );
      expect(got).toEqual([
        {
          brand: 'Acme',
          valid_rank_items: 0,
          all_valid_rank_items: 0,
          share_of_voice: null,
          brand_rank: null,
        },
        {
          brand: 'Bolt',
          valid_rank_items: 0,
          all_valid_rank_items: 0,
          share_of_voice: null,
          brand_rank: null,
        },
      ]);
      // The report's share-of-voice table: Cleo (no valid item on D1) and every brand of task 41 are left out.
      const voice = (await readReportData(w, { from: D1, to: day })).voice;
      expect(voice.filter((v) => v.items === 0)).toEqual([]);
      expect(voice.filter((v) => v.platform === 'DeepSeek')).toEqual([
        { platform: 'DeepSeek', brand: 'Acme', items: 5 },
        { platform: 'DeepSeek', brand: 'Bolt', items: 2 },
      ]);
      expect(voice.some((v) => v.platform === 'Yuanbao')).toBe(false);
    });

    // Adds monitoring task 300 and its platform task 50 only, on a day of their own.
    it('owned: both sides normalised alike (case, blanks, scheme, user@, :port, www., trailing dots), look-alikes not owned', async () => {
      const day = '2026-12-21';
      await w.upsertMonitoringTasks([monitoringTask(300, 'Mops')]);
      await w.updateMonitoringTaskConfig([
        {
          project_id: 300,
          week_restart: 0,
          only_rank: 0,
          rank_match: 0,
          brand_urls: [
            ' https://user@acme.com./x',
            'HTTP://Shop.Example.org:8080?q=1',
            '',
            'www.',
            // Pasted with its line break: the same host on both warehouses (RE2's . stops at \n).
            'https://pasted.example\n',
          ],
          emails: [],
        },
      ]);
      await w.upsertPlatformTasks([platformTask(50, 300, 'deepseek', 'DeepSeek')]);
      const domains = [
        'acme.com:443',
        'WWW.ACME.COM.',
        'blog.acme.com',
        'shop.example.org',
        'acme.com.evil.com',
        'evilacme.com',
        'example.org',
        'pasted.example\n/page',
      ];
      await w.writeExecutionBatch(
        batch({
          executions: [execution(5001, { task_id: 50, project_id: 300, date_time: day, prompt_name: 'Q1' })],
          sources: domains.map((d, i) => source(5100 + i, 5001, d, { task_id: 50, project_id: 300 })),
        }),
      );
      await w.refreshStaleRollups();
      expect(
        await w.query(
          `SELECT project_id, host FROM geo.monitoring_task_hosts WHERE project_id IN (100, 300) ORDER BY 1, 2`,
        ),
      ).toEqual([
        { project_id: 100, host: 'acme.com' },
        { project_id: 100, host: 'shop.acme.cn' },
        { project_id: 300, host: '' },
        { project_id: 300, host: 'acme.com' },
        { project_id: 300, host: 'pasted.example' },
        { project_id: 300, host: 'shop.example.org' },
      ]);
      const owned = {
        'WWW.ACME.COM.': true,
        'acme.com.evil.com': false,
        'acme.com:443': true,
        'blog.acme.com': true,
        'evilacme.com': false,
        'example.org': false,
        'pasted.example\n/page': true,
        'shop.example.org': true,
      };
      for (const view of ['citations_daily', 'citations_weekly']) {
        const got = await w.query(`SELECT domain, owned FROM geo.${view} WHERE task_id = 50 ORDER BY domain`);
        expect(Object.fromEntries(got.map((x) => [x.domain, x.owned])), view).toEqual(owned);
      }
    });

    it("the views page's example queries run as written", async () => {
      const page = readFileSync(new URL('../../docs/views.md', import.meta.url), 'utf8');
      const section = page.slice(page.indexOf('## The daily views'), page.indexOf('## What a reader sees'));
      const statements = [...section.matchAll(/```sql\n([\s\S]*?)```/g)]
        .flatMap((m) => m[1]!.split(';'))
        .map((q) => q.replace(/--.*$/gm, '').trim())
        .filter(Boolean);
      // Three for the older views, one for each modelled view's section.
      expect(statements.length).toBeGreaterThanOrEqual(8);
      for (const q of statements) {
        const got = await w.query(q).catch((e: unknown) => e);
        expect(got, q).toBeInstanceOf(Array);
      }
    });
  });
}
