/**
 * Scenario 6, nightly: a backfill of the look-back window (4 days), then the simulator
 * changes about 15% of those days' executions as a real service's do (late answers, answers
 * saved again, late screenshots; one monitoring task renamed), then one scheduled-style run.
 * Requests are counted by the simulator (in this process: the scenario mutates its world).
 *
 * - nightly_requests_per_execution: the scheduled run's requests / executions in its window.
 * - nightly_ratio: those requests / what a run that reads only the changed executions needs,
 *   computed from what the simulator changed, under the rules a run follows today: the run's
 *   own non-execution requests (scope, list pages, account data) but task/prompts only for units
 *   that no longer list a stored execution (none here: nothing is deleted), and per changed
 *   execution the backfill's requests per execution read for its sources and legacy enrichments,
 *   a screenshot request where its item names one, and a products request, but one per platform
 *   task whose products are unsupported.
 * - resync_ratio: wall time of a re-sync (--force) of an unchanged day / its first sync.
 */
import { copyFileSync, existsSync, rmSync } from 'node:fs';
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
import { NIGHTLY } from './sizes.ts';

/** Endpoints an execution's own reads use (children, legacy enrichment, prompt/detail). */
const EXECUTION_ENDPOINT = /\/geo\/(prompt\/|task\/(detail|searches)$)/;
const PRODUCTS = 'GET /api/v2/geo/prompt/products';
const SCREENSHOT = 'GET /api/v2/geo/prompt/screenshot';
const PROMPTS = 'GET /api/v2/geo/task/prompts';

export interface NightlyResult {
  executions: number;
  changed: number;
  requests: number;
  executionRequests: number;
  nonExecutionRequests: number;
  backfillRequestsPerExecution: number;
  /** The backfill's requests per execution read besides products and screenshot. */
  backfillOtherPerExecution: number;
  /** task/prompts requests of the scheduled run (none needed: nothing was deleted). */
  crossChecks: number;
  idealRequests: number;
  nightlyRequestsPerExecution: number;
  nightlyRatio: number;
  resync: {
    firstMs: number;
    secondMs: number;
    ratio: number;
    executions: number;
    firstRequests: number;
    secondRequests: number;
  };
  /**
   * What keeping the per-day aggregates costs the night: the same scheduled run again
   * from a copy of the warehouse as the backfill left it, alternately with and without them,
   * `pairs` times; wall times in ms, and the median with / the median without.
   */
  rollups: RollupCost | null;
  /** The same at an API's latency (50 +/- 10 ms an answer, C=16), where the writes overlap the waits. */
  rollupsAtLatency: RollupCost | null;
  summary: { read: number; unchanged: number; status: string };
}

export interface RollupCost {
  withMs: number[];
  withoutMs: number[];
  /** Median with / median without. */
  ratio: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;

/** @param rollupPairs runs with and without the aggregates after the measured night (0: none) */
export async function runNightly(rollupPairs = 0): Promise<NightlyResult> {
  const sim = await startSimulator({
    seed: NIGHTLY.seed,
    days: NIGHTLY.days,
    executionsPerDay: NIGHTLY.executionsPerDay,
    apiKeys: ['bench-key'],
  });
  const tmp = tempDir('nightly');
  const file = join(tmp.dir, 'nightly.duckdb');
  const target = `duckdb:${file}`;
  const config = loadConfig({
    env: {},
    overrides: {
      baseUrl: sim.url,
      apiKey: 'bench-key',
      warehouse: target,
      concurrency: 16,
      requestsPerSecond: 100_000,
      lookbackDays: NIGHTLY.lookbackDays,
      logLevel: 'silent',
    },
  });
  const run = async (
    kind: RunKind,
    dates: string[],
    force: boolean,
    into = { target, keepRollups: true },
  ): Promise<[RunSummary, number]> => {
    const api = createApi(config, silentLogger);
    const warehouse = await openWarehouse(into.target, {
      logger: silentLogger,
      keepRollups: into.keepRollups,
      // As a run opens it (its DuckDB threads).
      duckdb: { threads: RUN_DUCKDB_THREADS },
    });
    try {
      await warehouse.migrate();
      const t0 = performance.now();
      const s = await runLocked(api, warehouse, config, silentLogger, {
        kind,
        dates,
        customers: [],
        force,
        args: { dates },
        waitForLockMs: 0,
      });
      const ms = performance.now() - t0;
      if (s.status !== 'success') throw new Error(`${kind} ${dates.join(',')}: ${s.status} ${s.error ?? ''}`);
      return [s, ms];
    } finally {
      await warehouse.close();
      await api.close();
    }
  };
  const split = () => {
    let exec = 0;
    let other = 0;
    for (const [endpoint, n] of Object.entries(sim.stats.byEndpoint)) {
      if (EXECUTION_ENDPOINT.test(endpoint.replace(/^GET |^POST /, ''))) exec += n;
      else other += n;
    }
    return { exec, other };
  };
  try {
    const dates = sim.world.dates().slice(-(NIGHTLY.lookbackDays + 1));
    const items = () =>
      dates.flatMap((d) =>
        sim.world.allPlatformTasks().flatMap((t) => [...sim.world.executions(t.task_id, d)]),
      );

    // First sync of the oldest day, then its re-sync (unchanged): resync_ratio.
    sim.stats.reset();
    const [first, firstMs] = await run('sync', [dates[0]!], false);
    const firstRequests = sim.stats.total;
    sim.stats.reset();
    const [, secondMs] = await run('sync', [dates[0]!], true);
    const secondRequests = sim.stats.total;
    // The rest of the window as a backfill; requests per execution of a full read from it.
    sim.stats.reset();
    const [backfill] = await run('backfill', dates.slice(1), false);
    const b = split();
    const backfillRead = Math.max(1, backfill.counters.executionsRead);
    const backfillRequestsPerExecution = b.exec / backfillRead;
    const at = (e: string) => sim.stats.byEndpoint[e] ?? 0;
    const backfillOtherPerExecution = (b.exec - at(PRODUCTS) - at(SCREENSHOT)) / backfillRead;

    // The night: ~15% of the window's executions change.
    const all = items();
    const m = sim.world.mutations;
    let changed = 0;
    /** What the ideal run asks of the changed executions besides their sources and legacy reads. */
    let screenshots = 0;
    let products = 0;
    const unsupportedTasks = new Set<number>();
    all.forEach((e, i) => {
      if ((i * 2654435761) % 1000 >= NIGHTLY.changedShare * 1000) return;
      const kind = changed % 3;
      let shot = e.screenshot_url !== null;
      if (kind === 0 && e.screenshot_url === null && m.takeScreenshot(e.prompt_task_id)) shot = true;
      else if (e.result_status === 'missing') m.setAnswer(e.prompt_task_id, `a late answer ${i}`);
      else m.setAnswer(e.prompt_task_id, `an answer saved again ${i}`);
      changed++;
      if (shot) screenshots++;
      const set = sim.world.products(e.prompt_task_id);
      if (set.supported) products += Math.max(1, Math.ceil(set.cards.length / 100));
      else unsupportedTasks.add(e.task_id);
    });
    products += unsupportedTasks.size;
    m.renameMonitoringTask(sim.world.allPlatformTasks()[0]!.project_id, 'Renamed overnight');

    // The warehouse as the night finds it (closed, so the file holds everything).
    const beforeNight = join(tmp.dir, 'before-night.duckdb');
    copyFileSync(file, beforeNight);
    sim.stats.reset();
    const [nightly] = await run('schedule', dates, false);
    const n = split();
    const requests = sim.stats.total;
    const crossChecks = at(PROMPTS);
    const ideal = n.other - crossChecks + changed * backfillOtherPerExecution + screenshots + products;

    // The same night again from the warehouse as it found it, with and without the aggregates.
    const rollupCost = async (latencyMs: number): Promise<RollupCost | null> => {
      if (rollupPairs === 0) return null;
      sim.setFaults(latencyMs ? { latencyMs, latencyJitterMs: 10 } : {});
      const cost: RollupCost = { withMs: [], withoutMs: [], ratio: 0 };
      for (let i = 0; i < rollupPairs; i++) {
        // Alternated, so the machine's drift falls on both sides alike.
        for (const keepRollups of i % 2 === 0 ? [true, false] : [false, true]) {
          const copy = join(tmp.dir, `night-${latencyMs}-${i}-${keepRollups}.duckdb`);
          copyFileSync(beforeNight, copy);
          const [, ms] = await run('schedule', dates, false, { target: `duckdb:${copy}`, keepRollups });
          (keepRollups ? cost.withMs : cost.withoutMs).push(ms);
          for (const f of [copy, `${copy}.wal`, `${copy}.lock`])
            if (existsSync(f)) rmSync(f, { force: true });
        }
      }
      sim.setFaults({});
      cost.ratio = median(cost.withMs) / median(cost.withoutMs);
      return cost;
    };
    const rollups = await rollupCost(0);
    const rollupsAtLatency = NIGHTLY.rollupsAtLatency ? await rollupCost(50) : null;
    return {
      executions: all.length,
      changed,
      requests,
      executionRequests: n.exec,
      nonExecutionRequests: n.other,
      backfillRequestsPerExecution,
      backfillOtherPerExecution,
      crossChecks,
      idealRequests: ideal,
      nightlyRequestsPerExecution: requests / all.length,
      nightlyRatio: requests / ideal,
      resync: {
        firstMs,
        secondMs,
        ratio: secondMs / firstMs,
        executions: first.counters.executionsRead,
        firstRequests,
        secondRequests,
      },
      rollups,
      rollupsAtLatency,
      summary: {
        read: nightly.counters.executionsRead,
        unchanged: nightly.counters.executionsUnchanged,
        status: nightly.status,
      },
    };
  } finally {
    await sim.close();
    tmp.remove();
  }
}
