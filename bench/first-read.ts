/**
 * Scenario 7, first read: the requests of a first read, by what they can bring, on a
 * world shaped like a real account's medium day: ~1,060 executions over ~320 units (platform task,
 * day) of ~3.3 executions, every enrichment on. The simulator's account has 40 platform tasks, so
 * the 320 units are 8 days of them, each day read by a run of its own (`sync --date D`): as on
 * that day, every platform task has one unit in its run (a products answer serves the
 * task's executions of that run only), and the scope is read 8 times. Two thirds of the simulator's platforms have no product cards (spec 2.8 names four of twelve:
 * `unsupported`), and 8% of its executions are listed without a screenshot.
 *
 * Then ~15% of the look-back window's executions change (late answers, answers saved again, late
 * screenshots) and one scheduled-style run reads the window: its requests per execution of the
 * window (on units of that day's size; scenario 6's are larger).
 *
 * Requests are counted by the simulator (in this process); which execution a products or
 * screenshot request was for is told by a counting wrap of the run's API port, classified with
 * the simulator's ground truth. `before` is what the old rules asked of the same run:
 * task/prompts once per unit, prompt/products and prompt/screenshot once per execution read.
 */
import { performance } from 'node:perf_hooks';
import { join } from 'node:path';
import { createApi, runLocked } from '../dist/app.js';
import { loadConfig } from '../dist/config.js';
import { openWarehouse, RUN_DUCKDB_THREADS } from '../dist/load/index.js';
import { silentLogger } from '../dist/log.js';
import { startSimulator } from '../dist/simulator/index.js';
import type { RunSummary } from '../dist/sync/run.js';
import type { RunKind } from '../dist/transform/rows.js';
import { tempDir } from './paths.ts';
import { FIRST_READ } from './sizes.ts';

/** The categories a request falls in, by what it can bring. */
export interface RequestCounts {
  scope: number;
  taskResults: number;
  taskPrompts: number;
  productsUnsupported: number;
  screenshotsNone: number;
  otherPerExecution: number;
  total: number;
}

/** One run's requests, and what the old rules (per-unit cross-check, per-execution products and screenshot) would have asked. */
export interface RunRequests {
  units: number;
  executionsRead: number;
  after: RequestCounts;
  before: RequestCounts;
}

export interface FirstReadResult {
  executions: number;
  /** Executions of platform tasks whose products answer `unsupported`; listed without a screenshot. */
  unsupportedExecutions: number;
  noScreenshotExecutions: number;
  first: RunRequests;
  requestsPerExecution: number;
  /** The scheduled run over the look-back window after ~15% of its executions changed. */
  nightly: RunRequests & {
    windowExecutions: number;
    changed: number;
    perExecution: number;
    perExecutionBefore: number;
  };
}

function addCounts(a: RequestCounts, b: RequestCounts): RequestCounts {
  const out = { ...a };
  for (const k of Object.keys(out) as (keyof RequestCounts)[]) out[k] += b[k];
  return out;
}

function addRuns(a: RunRequests, b: RunRequests): RunRequests {
  return {
    units: a.units + b.units,
    executionsRead: a.executionsRead + b.executionsRead,
    after: addCounts(a.after, b.after),
    before: addCounts(a.before, b.before),
  };
}

const PER_EXECUTION = /\/geo\/(prompt\/|task\/(detail|searches)$)/;

export async function runFirstRead(): Promise<FirstReadResult> {
  const sim = await startSimulator({
    seed: FIRST_READ.seed,
    days: FIRST_READ.days,
    executionsPerDay: FIRST_READ.executionsPerDay,
    apiKeys: ['bench-key'],
  });
  const tmp = tempDir('first-read');
  try {
    const dates = sim.world.dates();
    const itemsOf = (days: string[]) =>
      days.flatMap((d) =>
        sim.world.allPlatformTasks().flatMap((t) => [...sim.world.executions(t.task_id, d)]),
      );
    const listed = new Map<number, { screenshot_url: string | null }>();
    const unsupported = (id: number) => !sim.world.products(id).supported;
    const noShot = (id: number) => !listed.get(id)?.screenshot_url;

    const config = loadConfig({
      env: {},
      overrides: {
        baseUrl: sim.url,
        apiKey: 'bench-key',
        warehouse: `duckdb:${join(tmp.dir, 'first-read.duckdb')}`,
        concurrency: 16,
        requestsPerSecond: 100_000,
        lookbackDays: FIRST_READ.lookbackDays,
        logLevel: 'silent',
      },
    });
    const run = async (kind: RunKind, days: string[]): Promise<RunRequests> => {
      listed.clear();
      for (const e of itemsOf(days)) listed.set(e.prompt_task_id, e);
      const api = createApi(config, silentLogger);
      // Which executions the products and screenshot requests were for (one call, one request
      // here: unsupported answers are one page and nothing is retried).
      const calls = { products: 0, productsUnsupported: 0, screenshots: 0, screenshotsNone: 0 };
      const port = api.port;
      api.port = {
        ...port,
        products: (id) => {
          calls.products++;
          if (unsupported(id)) calls.productsUnsupported++;
          return port.products(id);
        },
        screenshot: (id) => {
          calls.screenshots++;
          if (noShot(id)) calls.screenshotsNone++;
          return port.screenshot(id);
        },
      };
      const warehouse = await openWarehouse(config.warehouse, {
        logger: silentLogger,
        duckdb: { threads: RUN_DUCKDB_THREADS },
      });
      let summary: RunSummary;
      try {
        await warehouse.migrate();
        sim.stats.reset();
        summary = await runLocked(api, warehouse, config, silentLogger, {
          kind,
          dates: days,
          customers: [],
          force: false,
          args: { dates: days },
          waitForLockMs: 0,
        });
      } finally {
        await warehouse.close();
        await api.close();
      }
      if (summary.status !== 'success') throw new Error(`${kind}: ${summary.status} ${summary.error ?? ''}`);
      const by = sim.stats.byEndpoint;
      const n = (e: string) => by[`GET /api/v2/geo/${e}`] ?? 0;
      let perExecution = 0;
      for (const [endpoint, count] of Object.entries(by))
        if (PER_EXECUTION.test(endpoint.replace(/^GET |^POST /, ''))) perExecution += count;
      const total = sim.stats.total;
      const after: RequestCounts = {
        scope: total - perExecution - n('task/results') - n('task/prompts'),
        taskResults: n('task/results'),
        taskPrompts: n('task/prompts'),
        productsUnsupported: calls.productsUnsupported,
        screenshotsNone: calls.screenshotsNone,
        otherPerExecution: perExecution - calls.productsUnsupported - calls.screenshotsNone,
        total,
      };
      // Under the old rules every unit read task/prompts, and every execution read its products and
      // its screenshot: what this run did not ask is what it saved.
      const units = summary.counters.unitsDone;
      const read = summary.counters.executionsRead;
      const saved = {
        taskPrompts: units - after.taskPrompts,
        products: read - calls.products,
        screenshots: read - calls.screenshots,
      };
      const before: RequestCounts = {
        ...after,
        taskPrompts: units,
        productsUnsupported: after.productsUnsupported + saved.products,
        screenshotsNone: after.screenshotsNone + saved.screenshots,
        total: total + saved.taskPrompts + saved.products + saved.screenshots,
      };
      return { units, executionsRead: read, after, before };
    };

    // The first read: every day of the world, each by a run of its own.
    const days: RunRequests[] = [];
    for (const d of dates) days.push(await run('sync', [d]));
    const first = days.reduce(addRuns);
    const everything = itemsOf(dates);
    const executions = everything.length;
    const unsupportedExecutions = everything.filter((e) => unsupported(e.prompt_task_id)).length;
    const noScreenshotExecutions = everything.filter((e) => !e.screenshot_url).length;

    // The night: ~15% of the look-back window's executions change, as in scenario 6.
    const window = dates.slice(-(FIRST_READ.lookbackDays + 1));
    const m = sim.world.mutations;
    let changed = 0;
    itemsOf(window).forEach((e, i) => {
      if ((i * 2654435761) % 1000 >= FIRST_READ.changedShare * 1000) return;
      if (changed % 3 === 0 && e.screenshot_url === null && m.takeScreenshot(e.prompt_task_id)) changed++;
      else {
        m.setAnswer(
          e.prompt_task_id,
          `${e.result_status === 'missing' ? 'a late answer' : 'saved again'} ${i}`,
        );
        changed++;
      }
    });
    const night = await run('schedule', window);
    const windowExecutions = listed.size;
    return {
      executions,
      unsupportedExecutions,
      noScreenshotExecutions,
      first,
      requestsPerExecution: first.after.total / executions,
      nightly: {
        ...night,
        windowExecutions,
        changed,
        perExecution: night.after.total / windowExecutions,
        perExecutionBefore: night.before.total / windowExecutions,
      },
    };
  } finally {
    await sim.close();
    tmp.remove();
  }
}

/** A first read's wall time with the per-day aggregates kept, against the same without them. */
export interface FirstReadRollupCost {
  executions: number;
  withMs: number[];
  withoutMs: number[];
  /** Median with over median without. */
  ratio: number;
}

/**
 * The first read of every day (one backfill, many small units, latency 0: the writes are all
 * there is to wait for) into a fresh DuckDB file, `pairs` times each way, alternated so the
 * machine's drift falls on both sides alike: what keeping the aggregates costs a first read.
 */
export async function runFirstReadRollupCost(pairs: number): Promise<FirstReadRollupCost> {
  const sim = await startSimulator({
    seed: FIRST_READ.seed,
    days: FIRST_READ.days,
    executionsPerDay: FIRST_READ.executionsPerDay,
    apiKeys: ['bench-key'],
  });
  const tmp = tempDir('first-read-rollups');
  const cost: FirstReadRollupCost = { executions: 0, withMs: [], withoutMs: [], ratio: 0 };
  try {
    const dates = sim.world.dates();
    // A first run, not counted: the simulator builds each day's world as a run first asks for it,
    // and V8 compiles the run's code. Counted, it always fell on the side that goes first (with
    // the aggregates), the slowest run of the scenario by 8-40% (2026-12-07), and of three runs
    // a side the median then was the slower of the other two. It keeps the aggregates, so that the
    // code only that side runs (the markers, the refresh) is compiled before either is timed.
    const sides = [
      null,
      ...Array.from({ length: pairs }, (_, i) => (i % 2 === 0 ? [true, false] : [false, true])),
    ];
    for (const [i, pair] of sides.entries()) {
      for (const keepRollups of pair ?? [true]) {
        const config = loadConfig({
          env: {},
          overrides: {
            baseUrl: sim.url,
            apiKey: 'bench-key',
            warehouse: `duckdb:${join(tmp.dir, `first-read-${i}-${keepRollups}.duckdb`)}`,
            concurrency: 16,
            requestsPerSecond: 100_000,
            logLevel: 'silent',
          },
        });
        const api = createApi(config, silentLogger);
        const warehouse = await openWarehouse(config.warehouse, {
          logger: silentLogger,
          keepRollups,
          duckdb: { threads: RUN_DUCKDB_THREADS },
        });
        try {
          await warehouse.migrate();
          const t0 = performance.now();
          const s = await runLocked(api, warehouse, config, silentLogger, {
            kind: 'backfill',
            dates,
            customers: [],
            force: false,
            args: { dates },
            waitForLockMs: 0,
          });
          const ms = performance.now() - t0;
          if (s.status !== 'success') throw new Error(`first read: ${s.status} ${s.error ?? ''}`);
          cost.executions = s.counters.executionsRead;
          if (pair) (keepRollups ? cost.withMs : cost.withoutMs).push(ms);
        } finally {
          await warehouse.close();
          await api.close();
        }
      }
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
    cost.ratio = median(cost.withMs) / median(cost.withoutMs);
    return cost;
  } finally {
    await sim.close();
    tmp.remove();
  }
}
