/**
 * Scenario 1, extraction efficiency: wall time of a sync over a simulator with 50 +/- 10 ms
 * latency, against the Little's-law bound `requests x 50 ms / concurrency`: one day of few large
 * units, per-execution legacy enrichments off.
 */
import { join } from 'node:path';
import { tempDir } from '../paths.ts';
import { runPipeline, type PipelineRun } from '../pipeline.ts';
import { int, met, ratio, seconds } from '../report.ts';
import { C, EXTRACTION } from '../sizes.ts';
import { busy, executionsOf, log, pipelineFigures, withSimulator, type Scenario } from './common.ts';

/**
 * A sync's wall time against `requests x latency / C`: few large units 1.10 (the aggregates'
 * issue tightened it from 1.15), many small units 1.15.
 */
export const EXTRACTION_TARGET = 1.1;
export const SMALL_UNITS_TARGET = 1.15;

/**
 * A run against the Little's-law bound `requests x latency / C`: logged, and the figures both
 * extraction scenarios report (results fields and the table row's bound, ratio, target, met).
 */
export function againstBound(run: PipelineRun, latencyMs: number, jitterMs: number, target: number) {
  const boundMs = (run.requests * latencyMs) / C;
  const r = run.wallMs / boundMs;
  log(`  ${seconds(run.wallMs)} for ${run.requests} requests; bound ${seconds(boundMs)}; ratio ${ratio(r)}`);
  log(`  ${busy(run)}`);
  return {
    r,
    figures: {
      ...pipelineFigures(run),
      latency_ms: latencyMs,
      latency_jitter_ms: jitterMs,
      concurrency: C,
      bound_s: boundMs / 1000,
      target,
      met: r <= target,
    },
    row: {
      figure: seconds(run.wallMs),
      baseline: `${seconds(boundMs)} = req x ${latencyMs} ms / ${C}`,
      ratio: ratio(r),
      target: `<= ${target}`,
      met: met(r <= target),
    },
  };
}

export const extraction: Scenario = {
  name: 'extraction',
  figures: ['extraction_ratio'],
  infoFigures: ['extraction_cpu_s_per_request'],
  targets: { extraction_ratio: `<= ${EXTRACTION_TARGET}` },
  async run({ rows, results }) {
    const { executionsPerDay, latencyMs, jitterMs, seed } = EXTRACTION;
    log(`extraction: ${executionsPerDay} executions/day, latency ${latencyMs} +/- ${jitterMs} ms, C=${C}`);
    await withSimulator(
      { seed, executionsPerDay, latencyMs, latencyJitterMs: jitterMs },
      async (sim, date) => {
        const tmp = tempDir('extraction');
        try {
          const run = await runPipeline({
            baseUrl: sim.url,
            warehouse: `duckdb:${join(tmp.dir, 'extraction.duckdb')}`,
            date,
            concurrency: C,
            enrich: { legacySources: false, executionTimes: false },
            simulatorCpu: sim.cpuSeconds,
          });
          const b = againstBound(run, latencyMs, jitterMs, EXTRACTION_TARGET);
          const executions = executionsOf(run);
          const perExecution = run.requests / Math.max(1, executions);
          results.extraction_ratio = b.r;
          results.extraction_cpu_s_per_request = run.cpuSeconds / Math.max(1, run.requests);
          results.extraction = {
            ...b.figures,
            executions,
            requests_per_execution: perExecution,
            enrichments: 'defaults except legacySources=false, executionTimes=false',
          };
          rows.push({
            scenario: '1 extraction (DuckDB)',
            size: `${int(executions)} exec, ${int(run.requests)} req (${perExecution.toFixed(2)}/exec), 50±10 ms, C=${C}; per-exec legacy enrich off; ${((run.cpuSeconds / Math.max(1, run.requests)) * 1000).toFixed(2)} ms CPU/req`,
            ...b.row,
          });
        } finally {
          tmp.remove();
        }
      },
    );
  },
};
