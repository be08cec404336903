/**
 * End to end over real sockets into both warehouses: an answer holding U+0000
 * and a lone surrogate (a truncated emoji), and a quarantined payload whose JSON member holds
 * U+0000, are stored the same on PostgreSQL and DuckDB; the run counts the values changed in
 * its summary and in geo.sync_runs.text_values_changed. (Brand names and the other columns:
 * test/load/warehouse.contract.test.ts, on both dialects.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.ts';
import { formatSummary } from '../../src/sync/summary.ts';
import { syncOnce, withWarehouse } from '../helpers/sync.ts';
import { warehouseTargets } from '../helpers/targets.ts';

for (const target of warehouseTargets('text-rule')) {
  describe.skipIf(target.skip)(`one text rule, into ${target.dialect}`, () => {
    let sim: RunningSimulator;
    let url: string;

    beforeAll(async () => {
      url = await target.create();
      sim = await startSimulator({ seed: 13, days: 1, executionsPerDay: 20 });
    });
    afterAll(async () => {
      await sim?.close();
      await target.drop();
    });

    it('drops U+0000, stores lone surrogates as U+FFFD, and counts the values changed', async () => {
      const day = sim.world.dates()[0]!;
      const [x, y] = sim.world
        .allPlatformTasks()
        .flatMap((t) => [...sim.world.executions(t.task_id, day)])
        .filter((e) => e.result_status === 'available');
      sim.world.mutations.setAnswer(x!.prompt_task_id, 'an\0swer, cut at \ud83d');
      // y is quarantined: its raw payload is JSON whose `answer` member holds U+0000.
      sim.world.mutations.setAnswer(y!.prompt_task_id, 'quarantined\0');
      sim.world.mutations.corruptExecution(y!.prompt_task_id);
      try {
        const s = await syncOnce({
          baseUrl: sim.url,
          target: url,
          dates: [day],
          config: { lookbackDays: 0 },
        });
        const q = (sql: string, params: (string | number)[]) =>
          withWarehouse(url, (w) => w.query(sql, params));
        const [stored] = await q('SELECT answer FROM geo.prompt_executions WHERE prompt_task_id = $1', [
          x!.prompt_task_id,
        ]);
        expect(stored!.answer).toBe('answer, cut at \ufffd');
        const raws = await q(
          `SELECT CAST(raw AS VARCHAR) AS raw FROM geo.sync_rejects WHERE run_id = $1 AND raw IS NOT NULL`,
          [s.runId],
        );
        const withAnswer = raws.map((r) => JSON.parse(String(r.raw))).filter((r) => 'answer' in r);
        expect(withAnswer.map((r) => r.answer)).toEqual(['quarantined']);

        // x's answer and y's quarantined payload.
        expect(s.counters.textValuesChanged).toBe(2);
        expect(formatSummary(s)).toContain('text: 2 values stored changed (U+0000 dropped');
        const [run] = await q('SELECT text_values_changed FROM geo.sync_runs WHERE run_id = $1', [s.runId]);
        expect(Number(run!.text_values_changed)).toBe(2);
      } finally {
        sim.world.mutations.reset();
      }
    });
  });
}
