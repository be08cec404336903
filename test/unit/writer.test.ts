import { describe, expect, it } from 'vitest';
import type { UnitCompletion } from '../../src/load/warehouse.ts';
import { emptyBatch } from '../../src/sync/batch.ts';
import { GroupWriter } from '../../src/sync/writer.ts';
import type { ExecutionBatch, PromptExecutionRow } from '../../src/transform/rows.ts';

const exec = (id: number, task_id: number): PromptExecutionRow =>
  ({ prompt_task_id: id, task_id, date_time: '2026-11-20' }) as PromptExecutionRow;
const batchOf = (...rows: PromptExecutionRow[]): ExecutionBatch => ({ ...emptyBatch(), executions: rows });
const completion = (task_id: number): UnitCompletion => ({
  task_id,
  date: '2026-11-20',
  seenPromptTaskIds: [],
  checkpoint: { task_id, date: '2026-11-20', run_id: 'r', finished_at: '', executions: 0 },
});

/** A fake warehouse commit that records transactions and can be made to fail or to wait. */
function recorder() {
  const txs: { ids: number[]; units: number[] }[] = [];
  let failNext = false;
  let gate: Promise<void> | null = null;
  return {
    txs,
    failOnce: () => (failNext = true),
    hold: () => {
      let open!: () => void;
      gate = new Promise<void>((r) => (open = r));
      return () => {
        gate = null;
        open();
      };
    },
    commit: async (b: ExecutionBatch, cs: readonly UnitCompletion[]) => {
      if (gate) await gate;
      if (failNext) {
        failNext = false;
        throw new Error('connection lost');
      }
      txs.push({ ids: b.executions.map((e) => e.prompt_task_id), units: cs.map((c) => c.task_id) });
    },
  };
}

describe('GroupWriter', () => {
  it('a transaction of several parts carries every list of every part (kept, merged, fingerprints)', async () => {
    const seen: ExecutionBatch[] = [];
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const w = new GroupWriter(async (b) => {
      await gate;
      seen.push(b);
    }, 1000);
    await w.add(9, '2026-11-20', batchOf(exec(90, 9)));
    await w.add(1, '2026-11-20', {
      ...batchOf(exec(10, 1)),
      kept: [{ prompt_task_id: 10, child: 'products' }],
      sourcesMerged: [10],
      fingerprints: [{ prompt_task_id: 10, fingerprint: 'f10', children_complete: false }],
    });
    await w.add(2, '2026-11-20', {
      ...batchOf(exec(20, 2)),
      sourcesMerged: [20],
      fingerprints: [{ prompt_task_id: 20, fingerprint: 'f20', children_complete: true }],
    });
    open();
    await w.drain();
    const both = seen.find((b) => b.executions.length === 2)!;
    expect(both.executions.map((e) => e.prompt_task_id)).toEqual([10, 20]);
    expect(both.kept).toEqual([{ prompt_task_id: 10, child: 'products' }]);
    expect(both.sourcesMerged).toEqual([10, 20]);
    expect(both.fingerprints!.map((f) => f.prompt_task_id)).toEqual([10, 20]);
  });

  it('commits a unit checkpoint in the same transaction as its last rows, or after', async () => {
    const r = recorder();
    const w = new GroupWriter(r.commit, 1000);
    const release = r.hold();
    await w.add(1, '2026-11-20', batchOf(exec(10, 1)));
    await w.add(2, '2026-11-20', batchOf(exec(20, 2)));
    const done1 = w.complete(completion(1));
    await w.add(1, '2026-11-20', batchOf(exec(11, 1)));
    const done2 = w.complete(completion(2));
    release();
    await Promise.all([done1, done2]);
    await w.drain();
    // First transaction took what was pending when it started; the rest went in one more.
    expect(r.txs).toEqual([
      { ids: [10], units: [] },
      { ids: [20, 11], units: [1, 2] },
    ]);
    expect(w.rows.prompt_executions).toBe(3);
  });

  it('never writes the checkpoint of a unit whose rows failed to commit', async () => {
    const r = recorder();
    const w = new GroupWriter(r.commit, 1000);
    const release = r.hold();
    await w.add(1, '2026-11-20', batchOf(exec(10, 1)));
    r.failOnce();
    release();
    await w.drain();
    await w.add(2, '2026-11-20', batchOf(exec(20, 2)));
    await expect(w.complete(completion(1))).rejects.toThrow('connection lost');
    await w.complete(completion(2));
    expect(r.txs.flatMap((t) => t.units)).toEqual([2]);
  });

  it('applies backpressure: add waits while too many executions are pending', async () => {
    const r = recorder();
    const w = new GroupWriter(r.commit, 2);
    const release = r.hold();
    await w.add(1, '2026-11-20', batchOf(exec(1, 1))); // taken by the first (held) transaction
    await w.add(1, '2026-11-20', batchOf(exec(2, 1)));
    let returned = false;
    const third = w.add(1, '2026-11-20', batchOf(exec(3, 1))).then(() => (returned = true));
    await new Promise((res) => setImmediate(res));
    expect(returned).toBe(false);
    release();
    await third;
    await w.drain();
    expect(r.txs.map((t) => t.ids)).toEqual([[1], [2, 3]]);
  });

  it("takes whole unit batches up to its transaction bound; a checkpoint waits for its unit's queued rows", async () => {
    const r = recorder();
    const w = new GroupWriter(r.commit, 1000, {}, 2);
    const release = r.hold();
    await w.add(1, '2026-11-20', batchOf(exec(10, 1))); // taken by the first (held) transaction
    await w.add(1, '2026-11-20', batchOf(exec(11, 1)));
    await w.add(2, '2026-11-20', batchOf(exec(20, 2)));
    await w.add(1, '2026-11-20', batchOf(exec(12, 1), exec(13, 1), exec(14, 1)));
    const done1 = w.complete(completion(1));
    const done2 = w.complete(completion(2));
    release();
    await Promise.all([done1, done2]);
    await w.drain();
    expect(r.txs).toEqual([
      { ids: [10], units: [] },
      // Two executions: the bound. Unit 1 still has rows queued, so only unit 2's checkpoint goes.
      { ids: [11, 20], units: [2] },
      // A batch larger than the bound is never split: one unit's rows stay whole.
      { ids: [12, 13, 14], units: [1] },
    ]);
    expect(w.transactions).toBe(3);
    expect(w.rows.prompt_executions).toBe(6);
  });
});
