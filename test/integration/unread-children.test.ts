/**
 * Over real sockets into both warehouses: a child of a listed execution that answers a
 * permanent mismatch or 404 costs one quarantined record, never
 * the execution, its other children, its stored rows or the unit's checkpoint.
 *
 * A listed execution deleted upstream (every read 404, prompt/detail too) is
 * counted and logged, its stored rows kept, and is no reason for a PARTIAL run: the user cannot
 * change it, and the day would alert every night of the look-back window.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startSimulator,
  type RunningSimulator,
  type WirePromptResultItem,
} from '../../src/simulator/index.ts';
import { formatSummary } from '../../src/sync/summary.ts';
import { syncOnce, withWarehouse } from '../helpers/sync.ts';
import { warehouseTargets } from '../helpers/targets.ts';

for (const target of warehouseTargets('unread-children')) {
  describe.skipIf(target.skip)(`children that cannot be read, into ${target.dialect}`, () => {
    let sim: RunningSimulator;
    let url: string;
    /** The older of two days: outside a look-back window of 0 days. */
    let day: string;
    let all: WirePromptResultItem[];

    beforeAll(async () => {
      url = await target.create();
      sim = await startSimulator({ seed: 11, days: 2, executionsPerDay: 120 });
      day = sim.world.dates()[0]!;
      all = sim.world.allPlatformTasks().flatMap((t) => [...sim.world.executions(t.task_id, day)]);
      const first = await sync();
      expect(first.status).toBe('success');
    });
    afterAll(async () => {
      await sim?.close();
      await target.drop();
    });

    // These changes are to children behind unchanged listed items: only a run that re-reads every
    // child sees them (change detection off, as `--reread` does).
    const sync = (force = false) =>
      syncOnce({
        baseUrl: sim.url,
        target: url,
        dates: [day],
        force,
        config: { lookbackDays: 0, changeDetection: false },
      });
    const q = (sql: string, params: (string | number)[] = []) =>
      withWarehouse(url, (w) => w.query(sql, params));
    const countOf = async (table: string, id: number) =>
      Number((await q(`SELECT COUNT(*) AS n FROM geo.${table} WHERE prompt_task_id = $1`, [id]))[0]!.n);
    const rejectsOf = (runId: string) =>
      q(
        `SELECT endpoint, CAST(params AS VARCHAR) AS params, reason, CAST(raw AS VARCHAR) AS raw
         FROM geo.sync_rejects WHERE run_id = $1 ORDER BY endpoint`,
        [runId],
      );
    const withCards = () =>
      all.find(
        (e) =>
          sim.world.sources(e.prompt_task_id).length > 0 &&
          sim.world.products(e.prompt_task_id).cards.length > 0 &&
          e.screenshot_url !== null,
      )!;

    it('an invalid child is quarantined; the execution, its other children and stored rows are kept; the unit is checkpointed', async () => {
      const x = withCards();
      const y = all.find((e) => e.screenshot_url !== null && e.prompt_task_id !== x.prompt_task_id)!;
      const sources = sim.world.sources(x.prompt_task_id).length;
      const cards = sim.world.products(x.prompt_task_id).cards.length;
      expect(await countOf('execution_sources', x.prompt_task_id)).toBe(sources);
      sim.world.mutations.corruptChild(x.prompt_task_id, 'sources');
      sim.world.mutations.corruptChild(x.prompt_task_id, 'products');
      sim.world.mutations.corruptChild(y.prompt_task_id, 'screenshot');
      try {
        const s = await sync(true);
        expect(s.status).toBe('partial');
        expect(s.counters.unitsFailed).toBe(0);
        expect(s.counters.childrenInvalid).toBe(3);
        expect(formatSummary(s)).toContain('0 not found (404, reason child_not_found), 3 invalid');

        const rejects = await rejectsOf(s.runId);
        expect(rejects.map((r) => r.endpoint)).toEqual([
          'GET /api/v2/geo/prompt/products',
          'GET /api/v2/geo/prompt/screenshot',
          'GET /api/v2/geo/prompt/searches',
        ]);
        for (const r of rejects) {
          expect(String(r.reason)).toMatch(
            /^invalid_child: invalid response \(data\.(total|screenshot_status): /,
          );
          expect(JSON.parse(String(r.params)).prompt_task_id).toBe(
            String(r.endpoint).endsWith('screenshot') ? y.prompt_task_id : x.prompt_task_id,
          );
        }
        expect(String(rejects[1]!.raw)).toContain('"done"');
        expect(String(rejects[2]!.raw)).toContain('"many"');

        // Executions and every child row stay as they were.
        expect(await countOf('prompt_executions', x.prompt_task_id)).toBe(1);
        expect(await countOf('execution_sources', x.prompt_task_id)).toBe(sources);
        expect(await countOf('product_cards', x.prompt_task_id)).toBe(cards);
        expect(await countOf('execution_products', x.prompt_task_id)).toBe(1);
        expect(await countOf('execution_screenshots', x.prompt_task_id)).toBe(1);
        expect(await countOf('execution_screenshots', y.prompt_task_id)).toBe(1);
        const counts = await withWarehouse(url, (w) => w.counts());
        const totals = sim.world.dayTotals(day);
        expect(counts.prompt_executions).toBe(totals.executions);
        expect(counts.execution_sources).toBe(totals.sources);
        expect(counts.product_cards).toBe(totals.productCards);

        // The unit is checkpointed by this run: the next run, outside the look-back, skips it.
        const [cp] = await q(
          'SELECT run_id FROM geo.sync_checkpoints WHERE task_id = $1 AND CAST(date AS VARCHAR) = $2',
          [x.task_id, day],
        );
        expect(cp!.run_id).toBe(s.runId);
        const next = await sync();
        expect(next.status).toBe('success');
        expect(next.counters.unitsDone).toBe(0);
        expect(next.counters.unitsSkipped).toBe(sim.world.dayTotals(day).platformTasks);
        expect(await rejectsOf(next.runId)).toEqual([]);
      } finally {
        sim.world.mutations.reset();
      }
    });

    it('a listed execution whose reads answer 404 is kept with its stored children; each child is a child_not_found reject', async () => {
      const x = withCards();
      // z: every single-execution endpoint answers 404 (prompt/detail too), yet task/results lists it.
      const z = all.find(
        (e) =>
          e.prompt_task_id !== x.prompt_task_id &&
          e.screenshot_url !== null &&
          sim.world.sources(e.prompt_task_id).length > 0,
      )!;
      const xSources = sim.world.sources(x.prompt_task_id).length;
      const zSources = sim.world.sources(z.prompt_task_id).length;
      sim.world.mutations.hideChild(x.prompt_task_id, 'sources');
      for (const c of ['detail', 'result', 'sources', 'screenshot', 'products'] as const)
        sim.world.mutations.hideChild(z.prompt_task_id, c);
      try {
        const s = await sync(true);
        // x still exists upstream: its unread children make the run partial.
        expect(s.status).toBe('partial');
        expect(s.counters.unitsFailed).toBe(0);
        // x: prompt/searches and legacy task/searches. z is gone upstream: counted, not quarantined.
        expect(s.counters.childrenNotFound).toBe(2);
        expect(s.counters.goneExecutions).toBe(1);
        expect(formatSummary(s)).toContain('unread children: 2 not found (404, reason child_not_found)');

        const rejects = await rejectsOf(s.runId);
        expect(rejects).toHaveLength(2);
        for (const r of rejects) expect(r.reason).toBe('child_not_found');
        const byExecution = (id: number) =>
          rejects
            .filter((r) =>
              [JSON.parse(String(r.params)).prompt_task_id, JSON.parse(String(r.params)).task_id].includes(
                id,
              ),
            )
            .map((r) => r.endpoint)
            .sort();
        expect(byExecution(x.prompt_task_id)).toEqual([
          'GET /api/v2/geo/prompt/searches',
          'GET /api/v2/geo/task/searches',
        ]);
        expect(byExecution(z.prompt_task_id)).toEqual([]);

        expect(await countOf('prompt_executions', x.prompt_task_id)).toBe(1);
        expect(await countOf('execution_sources', x.prompt_task_id)).toBe(xSources);
        expect(await countOf('prompt_executions', z.prompt_task_id)).toBe(1);
        expect(await countOf('execution_sources', z.prompt_task_id)).toBe(zSources);
        expect(await countOf('execution_screenshots', z.prompt_task_id)).toBe(1);
        expect(await countOf('execution_ranks', z.prompt_task_id)).toBe(z.rank_details.length);
        const counts = await withWarehouse(url, (w) => w.counts());
        expect(counts.prompt_executions).toBe(sim.world.dayTotals(day).executions);
        expect(counts.execution_sources).toBe(sim.world.dayTotals(day).sources);
      } finally {
        sim.world.mutations.reset();
      }
    });

    it('an execution deleted upstream, still listed, is counted and its rows kept; the run ends success, night after night', async () => {
      // z: every single-execution endpoint answers 404 (prompt/detail too), yet task/results lists it.
      const z = withCards();
      const stored = {
        prompt_executions: 1,
        execution_sources: sim.world.sources(z.prompt_task_id).length,
        product_cards: sim.world.products(z.prompt_task_id).cards.length,
        execution_products: 1,
        execution_screenshots: 1,
        execution_ranks: z.rank_details.length,
      };
      for (const c of ['detail', 'result', 'sources', 'screenshot', 'products'] as const)
        sim.world.mutations.hideChild(z.prompt_task_id, c);
      try {
        // Two nights in the look-back window: the same answer each time.
        for (let night = 0; night < 2; night++) {
          const s = await sync(true);
          expect(s.status).toBe('success');
          expect(s.counters.goneExecutions).toBe(1);
          expect(s.counters.rejects).toBe(0);
          expect(s.counters.childrenNotFound).toBe(0);
          expect(formatSummary(s)).toContain(
            '0 quarantined in geo.sync_rejects; 1 executions deleted upstream',
          );
          expect(await rejectsOf(s.runId)).toEqual([]);
          for (const [table, n] of Object.entries(stored))
            expect(await countOf(table, z.prompt_task_id)).toBe(n);
        }
      } finally {
        sim.world.mutations.reset();
      }
    });

    it('a listed execution whose children answer 404 while prompt/detail still reads it stays partial', async () => {
      const x = withCards();
      for (const c of ['sources', 'screenshot', 'products'] as const)
        sim.world.mutations.hideChild(x.prompt_task_id, c);
      try {
        const s = await sync(true);
        expect(s.status).toBe('partial');
        expect(s.counters.goneExecutions).toBe(0);
        // prompt/searches, task/searches, prompt/screenshot, prompt/products.
        expect(s.counters.childrenNotFound).toBe(4);
        expect(await rejectsOf(s.runId)).toHaveLength(4);
      } finally {
        sim.world.mutations.reset();
      }
    });

    it('legacy task/detail answering 404 keeps the stored created_at/updated_at; the row is rewritten otherwise', async () => {
      const e = all[5]!;
      const read = async () =>
        (
          await q(
            `SELECT CAST(created_at AS VARCHAR) AS created_at, CAST(updated_at AS VARCHAR) AS updated_at,
                    CAST(synced_at AS VARCHAR) AS synced_at, answer
             FROM geo.prompt_executions WHERE prompt_task_id = $1`,
            [e.prompt_task_id],
          )
        )[0]!;
      const before = await read();
      expect(before.created_at).not.toBeNull();
      sim.world.mutations.hideChild(e.prompt_task_id, 'detail');
      try {
        const s = await sync(true);
        expect(s.status).toBe('partial');
        expect(s.counters.childrenNotFound).toBe(1);
        const rejects = await rejectsOf(s.runId);
        expect(rejects.map((r) => [r.endpoint, r.reason])).toEqual([
          ['GET /api/v2/geo/task/detail', 'child_not_found'],
        ]);
        const after = await read();
        expect(after).toMatchObject({
          created_at: before.created_at,
          updated_at: before.updated_at,
          answer: before.answer,
        });
        expect(after.synced_at).not.toBe(before.synced_at);
      } finally {
        sim.world.mutations.reset();
      }
    });

    it('an execution no longer listed still leaves the warehouse', async () => {
      const gone = all[3]!;
      sim.world.mutations.deleteExecution(gone.prompt_task_id);
      try {
        const s = await sync(true);
        expect(s.status).toBe('success');
        expect(await countOf('prompt_executions', gone.prompt_task_id)).toBe(0);
        expect(await countOf('execution_sources', gone.prompt_task_id)).toBe(0);
      } finally {
        sim.world.mutations.reset();
      }
    });
  });
}
