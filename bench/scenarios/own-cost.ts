/**
 * Scenario 2, own cost: the full pipeline (extract, validate, transform, load) against a bare
 * undici loop fetching the same URLs at the same concurrency, simulator latency 0, into DuckDB
 * and PostgreSQL; with the bare loop's floors (parsing, then parsing and validating every body)
 * and the ceiling of any load-side change (the pipeline with its execution writes skipped).
 * Scenario 5, re-sync: a second sync of the unchanged day into the warehouse DuckDB's last run
 * filled, against the first.
 */
import { join } from 'node:path';
import { runBareLoop, type BareRun } from '../bare.ts';
import { tempDir } from '../paths.ts';
import { runPipeline, type PipelineRun } from '../pipeline.ts';
import { createDatabase } from '../postgres.ts';
import { int, met, ratio, seconds, type TableRow } from '../report.ts';
import type { SimulatorProcess } from '../simulator.ts';
import { C, OWN_COST } from '../sizes.ts';
import {
  bareFigures,
  best,
  busy,
  executionsOf,
  log,
  naRow,
  pipelineFigures,
  withSimulator,
  type Scenario,
} from './common.ts';

/** The pipeline's wall time against the bare loop's, best of the runs on each side. */
const OWN_COST_TARGET = 1.5;

interface OwnCostResult {
  pipelines: PipelineRun[];
  bares: BareRun[];
  /** The bare loop that also parses every body (the floor of any pipeline). */
  parses: BareRun[];
  /** The bare loop that also parses and validates every body with the client's decoders. */
  validates: BareRun[];
  /** The pipeline with its execution writes skipped (DuckDB's turn only: no warehouse is written). */
  noWrites: PipelineRun[];
  resync?: { first: PipelineRun; second: PipelineRun };
}

/** Pipeline and bare loop alternately, `pairs` times; each pipeline run into a fresh warehouse. */
async function ownCostDialect(
  sim: SimulatorProcess,
  date: string,
  dialect: 'duckdb' | 'postgres',
): Promise<OwnCostResult> {
  const pipelines: PipelineRun[] = [];
  const bares: BareRun[] = [];
  const parses: BareRun[] = [];
  const validates: BareRun[] = [];
  const noWrites: PipelineRun[] = [];
  let resync: OwnCostResult['resync'];
  for (let i = 0; i < OWN_COST.pairs; i++) {
    const last = i === OWN_COST.pairs - 1;
    const tmp = tempDir('own-cost');
    const db = dialect === 'postgres' ? await createDatabase('own_cost') : null;
    try {
      const warehouse = db ? db.url : `duckdb:${join(tmp.dir, 'own-cost.duckdb')}`;
      const run = () =>
        runPipeline({ baseUrl: sim.url, warehouse, date, concurrency: C, simulatorCpu: sim.cpuSeconds });
      const p = await run();
      pipelines.push(p);
      log(
        `  ${dialect} pipeline #${i + 1}: ${seconds(p.wallMs)}, ${p.requests} requests, ${int(p.rows)} rows; ${busy(p)}`,
      );
      if (pipelines[0]!.requests !== p.requests) {
        log(`  note: request count differs between runs (${pipelines[0]!.requests} vs ${p.requests})`);
      }
      const b = await runBareLoop(sim.url, pipelines[0]!.recorded, C, sim.cpuSeconds);
      bares.push(b);
      log(
        `  ${dialect} bare loop #${i + 1}: ${seconds(b.wallMs)}, ${b.requests} requests, ${b.non200} not 200; ${busy(b)}`,
      );
      const q = await runBareLoop(sim.url, pipelines[0]!.recorded, C, sim.cpuSeconds, { parse: true });
      parses.push(q);
      log(`  ${dialect} bare loop + JSON.parse #${i + 1}: ${seconds(q.wallMs)}; ${busy(q)}`);
      const v = await runBareLoop(sim.url, pipelines[0]!.recorded, C, sim.cpuSeconds, { validate: true });
      validates.push(v);
      log(`  ${dialect} bare loop + JSON.parse + zod decode #${i + 1}: ${seconds(v.wallMs)}; ${busy(v)}`);
      if (dialect === 'duckdb') {
        const w = await runPipeline({
          baseUrl: sim.url,
          warehouse: `duckdb:${join(tmp.dir, 'no-writes.duckdb')}`,
          date,
          concurrency: C,
          simulatorCpu: sim.cpuSeconds,
          skipWrites: true,
        });
        noWrites.push(w);
        log(
          `  pipeline, execution writes skipped #${i + 1}: ${seconds(w.wallMs)}, ${w.requests} requests; ${busy(w)}`,
        );
      }
      if (dialect === 'duckdb' && last) {
        // 5. Re-sync: the same day again into the warehouse the last run filled, unchanged, --force.
        const second = await run();
        resync = { first: p, second };
        log(`  duckdb re-sync: ${seconds(second.wallMs)} (first ${seconds(p.wallMs)})`);
      }
    } finally {
      tmp.remove();
      await db?.drop().catch(() => undefined);
    }
  }
  return { pipelines, bares, parses, validates, noWrites, ...(resync ? { resync } : {}) };
}

async function runOwnCost(
  rows: TableRow[],
  results: Record<string, unknown>,
  pgReason: string | null,
): Promise<void> {
  const { executionsPerDay, seed } = OWN_COST;
  log(`own cost: ${executionsPerDay} executions/day, latency 0, C=${C}, default enrichments (all on)`);
  await withSimulator({ seed, executionsPerDay }, async (sim, date) => {
    const own: Record<string, unknown> = {};
    results.own_cost = own;
    for (const dialect of ['duckdb', 'postgres'] as const) {
      const key = `own_cost_ratio_${dialect}`;
      const label = dialect === 'duckdb' ? 'DuckDB' : 'PostgreSQL';
      if (dialect === 'postgres' && pgReason) {
        results[key] = null;
        own[dialect] = { error: pgReason };
        rows.push(naRow(`2 own cost (${label})`, pgReason));
        continue;
      }
      const r = await ownCostDialect(sim, date, dialect);
      const p = best(r.pipelines);
      const b = best(r.bares);
      const x = p.wallMs / b.wallMs;
      results[key] = x;
      const f = best(r.parses);
      const floor = f.wallMs / b.wallMs;
      results[`own_cost_floor_ratio_${dialect}`] = floor;
      const vf = best(r.validates);
      const validationFloor = vf.wallMs / b.wallMs;
      results[`own_cost_validation_floor_ratio_${dialect}`] = validationFloor;
      // Steadier than wall time on a shared machine: the pipeline's JS-thread CPU against the bare
      // loop's whole process CPU, the least of the runs on each side (information, not the target).
      const jsCpu = Math.min(...r.pipelines.map((q) => q.mainThreadCpuSeconds ?? Number.NaN));
      const bareCpu = Math.min(...r.bares.map((q) => q.cpuSeconds));
      const cpuRatio = Number.isFinite(jsCpu) ? jsCpu / bareCpu : null;
      results[`own_cost_cpu_ratio_${dialect}`] = cpuRatio;
      const executions = executionsOf(p);
      own[dialect] = {
        ratio: x,
        executions,
        requests: p.requests,
        requests_per_execution: p.requests / Math.max(1, executions),
        pipeline_best: pipelineFigures(p),
        bare_best: bareFigures(b),
        pipeline_runs_s: r.pipelines.map((q) => q.wallMs / 1000),
        bare_runs_s: r.bares.map((q) => q.wallMs / 1000),
        floor_ratio: floor,
        floor_note: 'the bare loop parsing every body with JSON.parse, against the bare loop',
        bare_parse_best: bareFigures(f),
        bare_parse_runs_s: r.parses.map((q) => q.wallMs / 1000),
        validation_floor_ratio: validationFloor,
        validation_floor_note:
          "the bare loop parsing every body and decoding it with the client's own zod decoders (GET_DECODERS), against the bare loop",
        bare_validate_best: bareFigures(vf),
        bare_validate_runs_s: r.validates.map((q) => q.wallMs / 1000),
        pipeline_over_validation_floor: p.wallMs / vf.wallMs,
        cpu_ratio: cpuRatio,
        cpu_ratio_note:
          "least JS-thread CPU of the pipeline runs against the least process CPU of the bare loop's",
        enrichments: 'product defaults (all on)',
        concurrency: C,
        target: OWN_COST_TARGET,
        met: x <= OWN_COST_TARGET,
      };
      rows.push({
        scenario: `2 own cost (${label})`,
        size: `${int(executions)} exec, ${int(p.requests)} req, ${int(p.rows)} rows, latency 0, C=${C}; enrich all on`,
        figure: `${seconds(p.wallMs)} pipeline`,
        baseline: `${seconds(b.wallMs)} bare undici`,
        ratio: ratio(x),
        target: `<= ${OWN_COST_TARGET}`,
        met: met(x <= OWN_COST_TARGET),
      });
      // The bare loop's floors: what parsing, then parsing and validating, cost on their own.
      const floorRow = (name: string, size: string, run: BareRun, what: string, x: number): TableRow => ({
        scenario: `2 own cost ${name} (${label})`,
        size,
        figure: `${seconds(run.wallMs)} ${what}`,
        baseline: `${seconds(b.wallMs)} bare undici`,
        ratio: ratio(x),
        target: 'info',
        met: 'n/a',
      });
      rows.push({
        scenario: `2 own cost, CPU (${label})`,
        size: 'JS-thread CPU of the pipeline against the bare loop process CPU',
        figure: Number.isFinite(jsCpu) ? `${jsCpu.toFixed(2)} s JS thread` : 'n/a (not Linux)',
        baseline: `${bareCpu.toFixed(2)} s bare CPU`,
        ratio: ratio(cpuRatio),
        target: 'info',
        met: 'n/a',
      });
      rows.push(
        floorRow(
          'floor',
          'the same requests, bare loop + JSON.parse of every body',
          f,
          'bare + parse',
          floor,
        ),
      );
      rows.push(
        floorRow(
          'validation floor',
          "the same requests, bare loop + JSON.parse + the client's zod decoders",
          vf,
          'bare + validate',
          validationFloor,
        ),
      );
      if (r.noWrites.length > 0) {
        // The ceiling of any load-side change: the same sync with writeExecutionBatch and
        // completeUnit resolving at once. Measured in DuckDB's turn; it writes no warehouse.
        const w = best(r.noWrites);
        const xw = w.wallMs / b.wallMs;
        results.own_cost_ratio_no_writes = xw;
        results.own_cost_no_writes = {
          ratio: xw,
          note: 'the pipeline with the warehouse execution writes (writeExecutionBatch, completeUnit) skipped, against the bare loop',
          pipeline_best: pipelineFigures(w),
          runs_s: r.noWrites.map((q) => q.wallMs / 1000),
          js_thread_cpu_s: Math.min(...r.noWrites.map((q) => q.mainThreadCpuSeconds ?? Number.NaN)),
        };
        rows.push({
          scenario: '2 own cost, execution writes skipped',
          size: `same sync, ${int(w.requests)} req; writeExecutionBatch/completeUnit are no-ops`,
          figure: `${seconds(w.wallMs)} pipeline`,
          baseline: `${seconds(b.wallMs)} bare undici`,
          ratio: ratio(xw),
          target: 'info',
          met: 'n/a',
        });
      }
      if (r.resync) {
        const { first, second } = r.resync;
        const rr = second.wallMs / first.wallMs;
        results.resync_ratio = rr;
        results.resync = {
          ratio: rr,
          first: pipelineFigures(first),
          second: pipelineFigures(second),
          executions: executionsOf(first),
          warehouse: 'duckdb',
          note: 'second sync of the same unchanged day into the same warehouse, force: true',
        };
        rows.push({
          scenario: '5 re-sync (DuckDB)',
          size: `${int(executionsOf(first))} exec, unchanged day, --force`,
          figure: `${seconds(second.wallMs)} second`,
          baseline: `${seconds(first.wallMs)} first`,
          ratio: ratio(rr),
          target: 'report',
          met: 'n/a',
        });
      }
    }
  });
}

export const ownCost: Scenario = {
  name: 'own-cost',
  // resync_ratio: this scenario's re-sync; the nightly scenario fills it when this one did not run.
  figures: ['own_cost_ratio_duckdb', 'own_cost_ratio_postgres', 'resync_ratio'],
  // The ceiling of any load-side change.
  infoFigures: ['own_cost_ratio_no_writes'],
  targets: { own_cost_ratio: `<= ${OWN_COST_TARGET}` },
  run: ({ rows, results, pgReason }) => runOwnCost(rows, results, pgReason),
};
