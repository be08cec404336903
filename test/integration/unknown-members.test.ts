/**
 * Members the spec does not name never cost data. Under the simulator's
 * `unknownMembers` fault every JSON object it sends (envelopes, page objects, items, rank items,
 * product cards, the `field_labels` map, diagnosis reports) gains a number, a null and a nested
 * object. A 3-day backfill must still end `success` and store exactly what the same backfill
 * stores without them; JSON columns keep the added members (they are API data) and equal the
 * reference once those members are taken out.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UNKNOWN_MEMBERS } from '../../src/simulator/faults.ts';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.ts';
import { dumpData, rowCounts } from '../helpers/dump.ts';
import { syncOnce, withWarehouse } from '../helpers/sync.ts';
import { warehouseTargets } from '../helpers/targets.ts';

const ADDED = Object.keys(UNKNOWN_MEMBERS);

/**
 * Columns dumpData leaves out: JSON columns that hold API payloads as they came (compared as
 * parsed JSON), and the account data (deductions, diagnoses) read outside the daily walk.
 */
const MORE_COLUMNS: Record<string, { columns: string[]; json: string[]; order: string }> = {
  execution_products: { columns: [], json: ['field_order', 'field_labels'], order: 'prompt_task_id' },
  product_cards: { columns: [], json: ['card'], order: 'prompt_task_id, position' },
  site_diagnoses: {
    columns: [
      'diagnosis_id',
      'customer_id',
      'status',
      'result_ready',
      'composite_score',
      'progress_percent',
      'current_step',
      'url',
    ],
    json: ['error', 'summary_text', 'top_issues', 'modules_summary', 'platform_scores', 'result_json'],
    order: 'diagnosis_id',
  },
  deductions: {
    columns: ['id', 'user_id', 'prompt_task_id', 'diff_amount', 'after_amount', 'remark', 'created_at'],
    json: [],
    order: 'id',
  },
};

/** A JSON value with the simulator's added members taken out, at any depth. */
function withoutAdded(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutAdded);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(
    Object.entries(v)
      .filter(([k]) => !ADDED.includes(k))
      .map(([k, x]) => [k, withoutAdded(x)]),
  );
}

async function dumpMore(target: string): Promise<Record<string, unknown[]>> {
  return withWarehouse(target, async (w) => {
    const out: Record<string, unknown[]> = {};
    for (const [table, { columns, json, order }] of Object.entries(MORE_COLUMNS)) {
      const select = [...columns, ...json].map((c) => `CAST(${c} AS VARCHAR) AS ${c}`).join(', ');
      const rows = await w.query(`SELECT ${select} FROM geo.${table} ORDER BY ${order}`);
      out[table] = rows.map((r) =>
        Object.entries(r).map(([c, v]) =>
          json.includes(c) && typeof v === 'string' ? (JSON.parse(v) as unknown) : v,
        ),
      );
    }
    return out;
  });
}

for (const t of warehouseTargets('unknown-members')) {
  describe.skipIf(t.skip)(`unknown members on ${t.dialect}`, () => {
    let sim: RunningSimulator;
    let dates: string[];
    const drops: (() => Promise<void>)[] = [];

    async function fresh(name: string): Promise<string> {
      const target = warehouseTargets(`${name}-${t.dialect}`).find((x) => x.dialect === t.dialect)!;
      drops.push(() => target.drop());
      return target.create();
    }

    beforeAll(async () => {
      sim = await startSimulator({ seed: 23, days: 4, executionsPerDay: 30, diagnosisStepMs: 1 });
      dates = sim.world.dates().slice(0, 3);
    });

    afterAll(async () => {
      await sim?.close();
      for (const drop of drops) await drop();
    });

    it('a 3-day backfill with unknown members everywhere ends success with the same rows', async () => {
      const reference = await fresh('plain');
      const plain = await syncOnce({ baseUrl: sim.url, target: reference, dates, kind: 'backfill' });
      expect(plain.status).toBe('success');

      sim.setFaults({ unknownMembers: true });
      const target = await fresh('extra');
      let summary;
      try {
        summary = await syncOnce({ baseUrl: sim.url, target, dates, kind: 'backfill' });
      } finally {
        sim.setFaults({});
      }
      expect(summary.failedUnits).toEqual([]);
      expect(summary.counters.rejects).toBe(0);
      expect(summary.status).toBe('success');

      const want = await dumpData(reference);
      expect(rowCounts(want).prompt_executions).toBe(
        dates.reduce((n, d) => n + sim.world.dayTotals(d).executions, 0),
      );
      expect(rowCounts(want).product_cards).toBeGreaterThan(0);
      expect(await dumpData(target)).toEqual(want);

      // JSON columns keep what the server sent, added members included...
      const got = await dumpMore(target);
      const labels = got.execution_products!.map((r) => (r as unknown[])[1]).filter((l) => l !== null);
      expect(labels.length).toBeGreaterThan(0);
      for (const l of labels) expect(l).toMatchObject(UNKNOWN_MEMBERS);
      expect(got.site_diagnoses!.length).toBeGreaterThan(0);
      expect(got.deductions!.length).toBeGreaterThan(0);
      // ...and are the reference's once the added members are taken out.
      expect(withoutAdded(got)).toEqual(await dumpMore(reference));
    });
  });
}
