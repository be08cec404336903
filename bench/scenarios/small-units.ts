/**
 * Scenario 1b, extraction over many small units: the shape the single-day scenario hides. The
 * simulator's account has a fixed few dozen platform tasks, so ~400 units are a backfill over
 * enough days; each day spreads `tasks x 6` executions over the tasks with weights in [0.5, 1.5),
 * i.e. 3-9 executions per unit. Default enrichments on, as a user runs it. Held to the same bound
 * as scenario 1.
 */
import { join } from 'node:path';
import { Catalog } from '../../src/simulator/catalog.ts';
import { addDays } from '../../src/transform/time.ts';
import { tempDir } from '../paths.ts';
import { runPipeline } from '../pipeline.ts';
import { int } from '../report.ts';
import { C, SMALL_UNITS } from '../sizes.ts';
import { executionsOf, log, withSimulator, type Scenario } from './common.ts';
import { againstBound, SMALL_UNITS_TARGET } from './extraction.ts';

export const smallUnits: Scenario = {
  name: 'small-units',
  figures: ['extraction_ratio_small_units'],
  infoFigures: ['extraction_small_units_cpu_s_per_request'],
  targets: { extraction_ratio_small_units: `<= ${SMALL_UNITS_TARGET}` },
  async run({ rows, results }) {
    const { units, meanExecutions, latencyMs, jitterMs, seed } = SMALL_UNITS;
    const tasks = new Catalog({ seed, email: 'bench@example.com' }).executing.length;
    const days = Math.max(1, Math.round(units / tasks));
    const executionsPerDay = tasks * meanExecutions;
    log(
      `small units: ${tasks} platform tasks x ${days} days, ${executionsPerDay} executions/day, latency ${latencyMs} +/- ${jitterMs} ms, C=${C}, enrichments on`,
    );
    await withSimulator(
      { seed, executionsPerDay, latencyMs, latencyJitterMs: jitterMs, days: days + 1 },
      async (sim, last) => {
        const tmp = tempDir('small-units');
        try {
          const dates = Array.from({ length: days }, (_, i) => addDays(last, i - days + 1));
          const run = await runPipeline({
            baseUrl: sim.url,
            warehouse: `duckdb:${join(tmp.dir, 'small-units.duckdb')}`,
            date: last,
            dates,
            concurrency: C,
            simulatorCpu: sim.cpuSeconds,
          });
          const b = againstBound(run, latencyMs, jitterMs, SMALL_UNITS_TARGET);
          const executions = executionsOf(run);
          const unitCount = run.summary.counters.unitsDone;
          results.extraction_ratio_small_units = b.r;
          results.extraction_small_units_cpu_s_per_request = run.cpuSeconds / Math.max(1, run.requests);
          results.extraction_small_units = {
            ...b.figures,
            executions,
            units: unitCount,
            executions_per_unit: executions / Math.max(1, unitCount),
            days,
            platform_tasks: tasks,
            enrichments: 'product defaults (all on)',
          };
          rows.push({
            scenario: '1 extraction, small units (DuckDB)',
            size: `${int(unitCount)} units, ${int(executions)} exec, ${int(run.requests)} req, ${int(run.rows)} rows, 50±10 ms, C=${C}; enrich all on; ${((run.cpuSeconds / Math.max(1, run.requests)) * 1000).toFixed(2)} ms CPU/req`,
            ...b.row,
          });
        } finally {
          tmp.remove();
        }
      },
    );
  },
};
