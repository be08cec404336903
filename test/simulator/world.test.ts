/** The simulated world without a server: determinism, shape of the data, totals at scale. */
import { describe, expect, it } from 'vitest';
import { ALLOWED_AI_PLATFORMS } from '../../src/api/endpoints.ts';
import {
  MonitoringTask,
  PlatformTask,
  PromptResultItem,
  Source,
} from '../../src/api/schemas/hierarchical.ts';
import { createWorld } from '../../src/simulator/index.ts';
import {
  decodePromptTaskId,
  decodeSourceId,
  encodePromptTaskId,
  encodeSourceId,
} from '../../src/simulator/ids.ts';
import { hash32, Rng } from '../../src/simulator/rng.ts';
import { NOW, YESTERDAY } from './helpers.ts';

const small = (seed = 1) => createWorld({ seed, now: () => NOW, executionsPerDay: 300, days: 3 });

/** A compact fingerprint of a world: catalog plus the first executions and children of a day. */
function fingerprint(seed: number): string {
  const w = small(seed);
  const tasks = w.allPlatformTasks();
  const execs = [...w.executions(tasks[0]!.task_id, YESTERDAY)].slice(0, 5);
  return JSON.stringify({
    customers: w.customerIds(),
    monitoring: w.customerIds().map((c) => w.monitoringTasks(c)),
    tasks,
    execs,
    sources: w.sources(execs[1]!.prompt_task_id),
    products: w.products(execs[0]!.prompt_task_id),
    deductions: w.deductions().slice(0, 5),
    user: w.user,
  });
}

describe('rng', () => {
  it('hash32 is deterministic, order-sensitive and folds IDs above 2^32', () => {
    expect(hash32(1, 2, 3)).toBe(hash32(1, 2, 3));
    expect(hash32(1, 2)).not.toBe(hash32(2, 1));
    expect(hash32(2 ** 40)).not.toBe(hash32(2 ** 40 + 2 ** 32));
  });

  it('Rng.of gives the same sequence for the same parts', () => {
    const a = Rng.of(7, 8);
    const b = Rng.of(7, 8);
    const xs = Array.from({ length: 5 }, () => a.next());
    expect(Array.from({ length: 5 }, () => b.next())).toEqual(xs);
    expect(Rng.of(7, 9).next()).not.toBe(xs[0]);
  });
});

describe('ids', () => {
  it.each([
    [1, 0, 0],
    [5, 9_000, 123_456],
    [127, 32_767, 2 ** 20 - 1],
  ])('prompt_task_id and source_id round-trip (ordinal %i, day %i, k %i)', (ordinal, day, k) => {
    const id = encodePromptTaskId(ordinal, day, k);
    expect(Number.isSafeInteger(id)).toBe(true);
    expect(decodePromptTaskId(id)).toEqual({ ordinal, day, k });
    const sid = encodeSourceId(id, 1199);
    expect(Number.isSafeInteger(sid)).toBe(true);
    expect(decodeSourceId(sid)).toEqual({ promptTaskId: id, index: 1199 });
  });

  it('refuses numbers that are not IDs of the scheme', () => {
    expect(decodePromptTaskId(42)).toBeNull();
    expect(decodePromptTaskId(1.5)).toBeNull();
    expect(decodePromptTaskId(Number.MAX_SAFE_INTEGER + 2)).toBeNull();
  });
});

describe('determinism', () => {
  it('the same seed builds the same world; another seed another one', () => {
    const a = fingerprint(1);
    expect(fingerprint(1)).toBe(a);
    expect(fingerprint(2)).not.toBe(a);
  });

  it('GEO_SIM_WORLD_SHIFT draws other executions from the same catalog, as another day would', () => {
    const day = (w: ReturnType<typeof small>) =>
      w.allPlatformTasks().flatMap((t) => [...w.executions(t.task_id, YESTERDAY)].map((e) => e.prompt_name));
    const saved = process.env.GEO_SIM_WORLD_SHIFT;
    try {
      delete process.env.GEO_SIM_WORLD_SHIFT;
      const before = small();
      process.env.GEO_SIM_WORLD_SHIFT = '1';
      const shifted = small();
      expect(shifted.allPlatformTasks()).toEqual(before.allPlatformTasks());
      expect(day(shifted)).not.toEqual(day(before));
      process.env.GEO_SIM_WORLD_SHIFT = '-1';
      expect(() => small()).toThrow(/GEO_SIM_WORLD_SHIFT: expected a whole number, got "-1"/);
    } finally {
      if (saved === undefined) delete process.env.GEO_SIM_WORLD_SHIFT;
      else process.env.GEO_SIM_WORLD_SHIFT = saved;
    }
  });

  it('executions are rebuilt identically from their ID in any order', () => {
    const w = small();
    const t = w.allPlatformTasks()[2]!;
    const list = [...w.executions(t.task_id, YESTERDAY)];
    const again = [...w.executions(t.task_id, YESTERDAY)].reverse().reverse();
    expect(again).toEqual(list);
    const one = list[list.length - 1]!;
    expect(w.resultItem(w.resolve(one.prompt_task_id)!)).toEqual(one);
  });
});

describe('catalog', () => {
  const w = small();

  it('has 3 readable projects with 2-4 monitoring tasks of 3-6 allowed platforms each', () => {
    expect(w.customerIds()).toHaveLength(3);
    expect(w.customerIds()).not.toContain(w.unreadableCustomerId);
    for (const c of w.customerIds()) {
      const tasks = w.monitoringTasks(c);
      expect(tasks.length).toBeGreaterThanOrEqual(2);
      expect(tasks.length).toBeLessThanOrEqual(4);
      for (const t of tasks) {
        MonitoringTask.parse(t);
        const platforms = w.platformTasks(t.project_id);
        expect(platforms.length).toBeGreaterThanOrEqual(3);
        expect(platforms.length).toBeLessThanOrEqual(6);
        expect(t.task_count).toBe(platforms.length);
        for (const p of platforms) {
          PlatformTask.parse(p);
          expect(ALLOWED_AI_PLATFORMS).toContain(p.model_key);
          expect(p.customer_id).toBe(c);
        }
      }
    }
  });

  it('has 1-2 historical monitoring tasks with customer_id null, readable', () => {
    const hist = w.historicalMonitoringTasks();
    expect(hist.length).toBeGreaterThanOrEqual(1);
    expect(hist.length).toBeLessThanOrEqual(2);
    for (const h of hist) {
      expect(h.customer_id).toBeNull();
      expect(w.platformTasks(h.project_id).every((p) => p.customer_id === null)).toBe(true);
    }
    const all = new Set(w.allPlatformTasks().map((p) => p.task_id));
    for (const h of hist)
      for (const p of w.platformTasks(h.project_id)) expect(all.has(p.task_id)).toBe(true);
  });

  it('lists nothing of the unreadable project', () => {
    expect(w.monitoringTasks(w.unreadableCustomerId)).toEqual([]);
  });

  it('dates(): `days` days ending yesterday in Asia/Shanghai', () => {
    expect(w.dates()).toEqual(['2025-06-12', '2025-06-13', '2025-06-14']);
    // 2025-06-14 23:30 UTC is already 2025-06-15 07:30 in Shanghai.
    const late = createWorld({ days: 1, now: () => new Date('2025-06-14T23:30:00Z') });
    expect(late.dates()).toEqual(['2025-06-14']);
  });
});

describe('executions of a day', () => {
  const w = createWorld({ now: () => NOW, executionsPerDay: 2000, days: 1 });
  const all = w.allPlatformTasks().flatMap((t) => [...w.executions(t.task_id, YESTERDAY)]);

  it('sum to executionsPerDay, parse, and carry distinct prompt_task_ids', () => {
    expect(all).toHaveLength(2000);
    expect(new Set(all.map((e) => e.prompt_task_id)).size).toBe(2000);
    for (const e of all.slice(0, 200)) PromptResultItem.parse(e);
  });

  it('about 5% are missing, with null answer/think and ranks still present', () => {
    const missing = all.filter((e) => e.result_status === 'missing');
    expect(missing.length / all.length).toBeGreaterThan(0.02);
    expect(missing.length / all.length).toBeLessThan(0.09);
    expect(missing.every((e) => e.answer === null && e.think === null)).toBe(true);
    expect(missing.some((e) => e.rank_details.length > 0)).toBe(true);
  });

  it('has invalid ranks: empty string, 0 and negative', () => {
    const positions = all.flatMap((e) => e.rank_details.map((r) => r.position));
    expect(positions).toContain('');
    expect(positions).toContain(0);
    expect(positions.some((p) => typeof p === 'number' && p < 0)).toBe(true);
    expect(Math.max(...all.map((e) => e.rank_details.length))).toBeLessThanOrEqual(8);
  });

  it('runs the same question several times a day with distinct IDs and hours', () => {
    const t = w.allPlatformTasks()[0]!;
    const list = [...w.executions(t.task_id, YESTERDAY)];
    const q = list[0]!.prompt_name;
    const runs = list.filter((e) => e.prompt_name === q);
    expect(runs.length).toBeGreaterThan(1);
    expect(new Set(runs.map((e) => e.hours)).size).toBeGreaterThan(1);
  });

  it('sometimes has no screenshot_url', () => {
    expect(all.some((e) => e.screenshot_url === null)).toBe(true);
    expect(all.some((e) => e.screenshot_url !== null)).toBe(true);
  });

  it('has exactly one execution with 1,200 sources, all others 0-25, source_ids unique', () => {
    const counts = all.map((e) => w.sources(e.prompt_task_id).length);
    expect(counts.filter((n) => n === 1200)).toHaveLength(1);
    expect(counts.filter((n) => n !== 1200).every((n) => n >= 0 && n <= 25)).toBe(true);
    const big = w.sources(all[counts.indexOf(1200)]!.prompt_task_id);
    expect(new Set(big.map((s) => s.source_id)).size).toBe(1200);
    for (const s of big.slice(0, 50)) Source.parse(s);
  });

  it('products: supported platforms have 0 or 1-45 cards, others are unsupported with none', () => {
    let available = 0;
    const platformOf = new Map(w.allPlatformTasks().map((t) => [t.task_id, t.model_key]));
    for (const e of all) {
      const p = w.products(e.prompt_task_id);
      const supported = ['yuanbao', 'yuanbao_auto', 'doubao', 'ai_douyin'].includes(
        platformOf.get(e.task_id)!,
      );
      expect(p.supported).toBe(supported);
      if (!supported) expect(p).toMatchObject({ result_status: 'unsupported', cards: [] });
      else if (p.cards.length === 0) expect(p.result_status).toBe('missing');
      else {
        available++;
        expect(p.cards.length).toBeLessThanOrEqual(45);
        expect(p.result_status).toBe('available');
        // One assertion per execution: vitest's expect is too slow to call per card field.
        const stray = p.cards.flatMap((c) => Object.keys(c)).filter((k) => !p.field_order.includes(k));
        expect(stray).toEqual([]);
      }
    }
    expect(available).toBeGreaterThan(0);
  });

  it('dayTotals equals a walk of the ground truth', () => {
    const t = w.dayTotals(YESTERDAY);
    expect(t.executions).toBe(all.length);
    expect(t.ranks).toBe(all.reduce((n, e) => n + e.rank_details.length, 0));
    expect(t.sources).toBe(all.reduce((n, e) => n + w.sources(e.prompt_task_id).length, 0));
    expect(t.productCards).toBe(all.reduce((n, e) => n + w.products(e.prompt_task_id).cards.length, 0));
    expect(t.screenshots).toBe(all.filter((e) => w.screenshot(e.prompt_task_id) !== null).length);
    expect(t.missingResults).toBe(all.filter((e) => e.result_status === 'missing').length);
    expect(t.platformTasks).toBe(w.allPlatformTasks().length);
  });

  it('dates outside the history have nothing', () => {
    const t = w.allPlatformTasks()[0]!;
    expect([...w.executions(t.task_id, '2025-06-15')]).toEqual([]);
    expect([...w.executions(t.task_id, '2025-06-13')]).toEqual([]);
    expect(w.dayTotals('2025-06-15').executions).toBe(0);
  });
});

describe('mutations (world level)', () => {
  const w = small();
  const t = w.allPlatformTasks()[0]!;
  const list = () => [...w.executions(t.task_id, YESTERDAY)];

  it('setAnswer, removeSource, deleteExecution, corruptExecution, then reset', () => {
    const before = w.dayTotals(YESTERDAY);
    const [first, second, third] = list();
    w.mutations.setAnswer(second!.prompt_task_id, null);
    expect(list()[1]).toMatchObject({ result_status: 'missing', answer: null, think: null });
    w.mutations.setAnswer(second!.prompt_task_id, '新的回答');
    expect(list()[1]).toMatchObject({ result_status: 'available', answer: '新的回答' });

    const src = w.sources(first!.prompt_task_id);
    w.mutations.removeSource(src[3]!.source_id);
    expect(w.sources(first!.prompt_task_id).map((s) => s.source_id)).not.toContain(src[3]!.source_id);
    expect(w.dayTotals(YESTERDAY).sources).toBe(before.sources - 1);

    w.mutations.deleteExecution(third!.prompt_task_id);
    expect(list().map((e) => e.prompt_task_id)).not.toContain(third!.prompt_task_id);
    expect(w.resolve(third!.prompt_task_id)).toBeNull();
    expect(() => w.sources(third!.prompt_task_id)).toThrow(RangeError);
    expect(w.dayTotals(YESTERDAY).executions).toBe(before.executions - 1);

    w.mutations.corruptExecution(first!.prompt_task_id);
    expect(w.dayTotals(YESTERDAY).corruptedExecutions).toBe(1);

    w.mutations.reset();
    expect(w.dayTotals(YESTERDAY)).toEqual(before);
    expect(list()[2]).toEqual(third);
  });

  it('refuses unknown IDs', () => {
    expect(() => w.mutations.deleteExecution(12345)).toThrow(RangeError);
    expect(() => w.mutations.removeSource(encodeSourceId(list()[0]!.prompt_task_id, 2000))).toThrow(
      RangeError,
    );
  });
});

describe('finance', () => {
  const w = small();

  it('chains before/after amounts exactly and ends at the balance', () => {
    const d = w.deductions();
    expect(d.length).toBeGreaterThan(10);
    for (let i = 1; i < d.length; i++) expect(d[i]!.before_amount).toBe(d[i - 1]!.after_amount);
    for (const r of d) {
      expect(Math.round((Number(r.before_amount) + Number(r.diff_amount)) * 100)).toBe(
        Math.round(Number(r.after_amount) * 100),
      );
      expect(Number(r.diff_amount) * 100).toBeCloseTo(Math.round(Number(r.diff_amount) * 100), 6);
    }
    expect(w.balance().amount).toBe(d[d.length - 1]!.after_amount);
    expect(w.user.amount).toBe(w.balance().amount);
    expect(d.filter((r) => Number(r.diff_amount) > 0).length).toBeGreaterThanOrEqual(1);
  });

  it('references executions of that day', () => {
    for (const r of w.deductions().filter((x) => Number(x.diff_amount) < 0)) {
      const ref = w.resolve(r.project_id);
      expect(ref).not.toBeNull();
      expect(w.executionItem(ref!).date_time).toBe(r.created_at.slice(0, 10));
    }
  });
});

describe('scale', () => {
  it('100,000 executions per day: dayTotals and paging cost no big memory', () => {
    const w = createWorld({ now: () => NOW, executionsPerDay: 100_000, days: 2 });
    const heap0 = process.memoryUsage().heapUsed;
    const t = w.dayTotals(YESTERDAY);
    const t2 = w.dayTotals('2025-06-13');
    const grown = process.memoryUsage().heapUsed - heap0;
    expect(t.executions).toBe(100_000);
    expect(t2.executions).toBe(100_000);
    expect(t.sources).toBeGreaterThan(1_000_000);
    // Materializing 100k executions would take hundreds of MB; the walk keeps nothing.
    expect(grown).toBeLessThan(30 * 1024 * 1024);

    // The last execution of the largest platform task resolves from its ID alone.
    const task = w.allPlatformTasks()[0]!;
    const count = w.visible(w.readablePlatformTask(task.task_id)!, w.today() - 1).count;
    expect(count).toBeGreaterThan(500);
    const last = w.refs(w.readablePlatformTask(task.task_id)!, w.today() - 1, count - 1, 1)[0]!;
    expect(w.resolve(last.prompt_task_id)?.k).toBe(count - 1);
  });
});
