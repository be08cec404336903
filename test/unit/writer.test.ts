import { describe, expect, it, vi } from 'vitest';
import type { UnitCompletion } from '../../src/load/warehouse.ts';
import { emptyBatch } from '../../src/sync/batch.ts';
import { GroupWriter, type Isolation, type NotStored } from '../../src/sync/writer.ts';
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

/** A failure the rows' values caused, as the fake warehouse below tells it. */
class ValueRefused extends Error {}

/**
 * A fake warehouse commit whose transaction fails, whole, with a data error when it holds an
 * execution of `badRows` or the completion of a unit of `badCompletions`, and with `lost` (no
 * data error) from its `lostAt`th call on. `hold()` makes it wait until released.
 */
function refusing(o: { badRows?: number[]; badCompletions?: number[]; lost?: Error; lostAt?: number }) {
  const calls: { ids: number[]; units: number[]; ok: boolean }[] = [];
  const quarantined: NotStored[] = [];
  const isolation: Isolation = {
    dataError: (e) => (e instanceof ValueRefused ? e.message : null),
    quarantine: (x) => void quarantined.push(x),
  };
  let gate: Promise<void> | null = null;
  const hold = () => {
    let open!: () => void;
    gate = new Promise<void>((res) => (open = res));
    return () => {
      gate = null;
      open();
    };
  };
  const commit = async (b: ExecutionBatch, cs: readonly UnitCompletion[]) => {
    if (gate) await gate;
    const ids = b.executions.map((e) => e.prompt_task_id);
    const units = cs.map((c) => c.task_id);
    const call = { ids, units, ok: false };
    calls.push(call);
    if (o.lost && calls.length >= (o.lostAt ?? 1)) throw o.lost;
    const row = ids.find((id) => o.badRows?.includes(id));
    if (row !== undefined) throw new ValueRefused(`invalid input syntax for type bigint: "NaN" (row ${row})`);
    const unit = units.find((u) => o.badCompletions?.includes(u));
    if (unit !== undefined) throw new ValueRefused(`checkpoint of ${unit} refused`);
    call.ok = true;
  };
  return { calls, quarantined, isolation, commit, hold };
}

/**
 * Units 1..3 with 3, 3 and 2 executions and their completions, in one transaction: they queue
 * while a first transaction (unit 9's execution 90, not among the calls returned) is held.
 * Resolves to each unit's outcome, `done` or its error's message.
 */
async function threeUnits(w: GroupWriter, r: ReturnType<typeof refusing>): Promise<string[]> {
  const release = r.hold();
  await w.add(9, '2026-11-20', batchOf(exec(90, 9)));
  await w.add(1, '2026-11-20', batchOf(exec(10, 1), exec(11, 1), exec(12, 1)));
  await w.add(2, '2026-11-20', batchOf(exec(20, 2), exec(21, 2), exec(22, 2)));
  await w.add(3, '2026-11-20', batchOf(exec(30, 3), exec(31, 3)));
  const outcomes = [1, 2, 3].map((u) =>
    w.complete(completion(u)).then(
      () => 'done',
      (e: Error) => e.message,
    ),
  );
  release();
  await w.drain();
  const held = r.calls.shift();
  expect(held?.ids).toEqual([90]);
  return Promise.all(outcomes);
}

describe('GroupWriter: a transaction that fails because of one row', () => {
  it('quarantines the execution whose rows fail alone, stores the others in halves, then commits every checkpoint', async () => {
    const r = refusing({ badRows: [21] });
    const w = new GroupWriter(r.commit, 1000, {}, 1000, r.isolation);
    expect(await threeUnits(w, r)).toEqual(['done', 'done', 'done']);
    expect(r.quarantined).toEqual([
      expect.objectContaining({
        task_id: 2,
        date: '2026-11-20',
        prompt_task_id: 21,
        reason: expect.stringContaining('NaN'),
      }),
    ]);
    expect(r.quarantined[0]!.rows.executions.map((e) => e.prompt_task_id)).toEqual([21]);
    // 8 executions, one bad: the failed transaction; its rows alone (it held checkpoints too);
    // 2 halves on each of 3 levels (depth first); then the checkpoints, after every row stored.
    expect(r.calls).toEqual([
      { ids: [10, 11, 12, 20, 21, 22, 30, 31], units: [1, 2, 3], ok: false },
      { ids: [10, 11, 12, 20, 21, 22, 30, 31], units: [], ok: false },
      { ids: [10, 11, 12, 20], units: [], ok: true },
      { ids: [21, 22, 30, 31], units: [], ok: false },
      { ids: [21, 22], units: [], ok: false },
      { ids: [21], units: [], ok: false },
      { ids: [22], units: [], ok: true },
      { ids: [30, 31], units: [], ok: true },
      { ids: [], units: [1, 2, 3], ok: true },
    ]);
    expect(w.transactions).toBe(1 + 4);
    expect(w.rows.prompt_executions).toBe(1 + 7);
  });

  it('a checkpoint that fails alone fails its unit only; the rows of the transaction are stored', async () => {
    const r = refusing({ badCompletions: [3] });
    const w = new GroupWriter(r.commit, 1000, {}, 1000, r.isolation);
    expect(await threeUnits(w, r)).toEqual(['done', 'done', 'checkpoint of 3 refused']);
    expect(r.quarantined).toEqual([]);
    expect(r.calls).toEqual([
      { ids: [10, 11, 12, 20, 21, 22, 30, 31], units: [1, 2, 3], ok: false },
      { ids: [10, 11, 12, 20, 21, 22, 30, 31], units: [], ok: true },
      { ids: [], units: [1, 2, 3], ok: false },
      { ids: [], units: [1, 2], ok: true },
      { ids: [], units: [3], ok: false },
    ]);
    expect(w.rows.prompt_executions).toBe(1 + 8);
    // Unit 3's later rows and completion are refused, as after any failure of its own.
    await w.add(3, '2026-11-20', batchOf(exec(32, 3)));
    await expect(w.complete(completion(3))).rejects.toThrow('checkpoint of 3 refused');
  });

  it('a failure that is not a data error is never retried: every unit of the transaction fails, as without isolation', async () => {
    const lost = 'write refused: this process no longer owns the warehouse lock';
    const r = refusing({ badRows: [21], lost: new Error(lost), lostAt: 2 });
    const w = new GroupWriter(r.commit, 1000, {}, 1000, r.isolation);
    expect(await threeUnits(w, r)).toEqual([lost, lost, lost]);
    expect(r.calls).toHaveLength(1);
    expect(r.quarantined).toEqual([]);
  });

  it('a failure that is not a data error while isolating stops it: every unit of the transaction fails', async () => {
    const lost = 'Connection terminated unexpectedly';
    const r = refusing({ badRows: [21], lost: new Error(lost), lostAt: 5 });
    const w = new GroupWriter(r.commit, 1000, {}, 1000, r.isolation);
    expect(await threeUnits(w, r)).toEqual([lost, lost, lost]);
    // The failed transaction, its rows alone, the first half stored, then the connection lost.
    expect(r.calls.map((c) => c.ok)).toEqual([false, false, true, false]);
    expect(r.quarantined).toEqual([]);
  });

  it('without isolation a data error fails every unit of the transaction', async () => {
    const r = refusing({ badRows: [21] });
    const w = new GroupWriter(r.commit, 1000);
    expect((await threeUnits(w, r)).every((o) => o.includes('NaN'))).toBe(true);
    expect(r.calls).toHaveLength(1);
  });

  it('keeps backpressure while it isolates: add waits for the isolating transaction', async () => {
    const r = refusing({ badRows: [2] });
    const w = new GroupWriter(r.commit, 2, {}, 2, r.isolation);
    const release = r.hold();
    await w.add(1, '2026-11-20', batchOf(exec(1, 1), exec(2, 1))); // taken by the first (held) transaction
    let returned = false;
    const next = w.add(1, '2026-11-20', batchOf(exec(3, 1), exec(4, 1))).then(() => (returned = true));
    await new Promise((res) => setImmediate(res));
    expect(returned).toBe(false);
    release();
    await next;
    await w.drain();
    expect(r.quarantined.map((q) => q.prompt_task_id)).toEqual([2]);
    expect(r.calls.filter((c) => c.ok).map((c) => c.ids)).toEqual([[1], [3, 4]]);
  });
});

describe('GroupWriter lingering (a transaction of fewer than fullTransaction executions waits for more)', () => {
  const linger = { ms: 1000, fullTransaction: 4 };
  const settle = () => new Promise<void>((res) => setImmediate(res));
  const lingering = () => {
    const r = recorder();
    return { r, w: new GroupWriter(r.commit, 100, {}, 100, undefined, linger) };
  };
  const withFakeTime = async (fn: () => Promise<void>) => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    try {
      await fn();
    } finally {
      vi.useRealTimers();
    }
  };

  it('commits what trickles in as one transaction once the oldest has waited linger.ms', () =>
    withFakeTime(async () => {
      const { r, w } = lingering();
      await w.add(1, '2026-11-20', batchOf(exec(1, 1)));
      await vi.advanceTimersByTimeAsync(400);
      await w.add(2, '2026-11-20', batchOf(exec(2, 2)));
      const done = w.complete(completion(1));
      await vi.advanceTimersByTimeAsync(599);
      expect(r.txs).toEqual([]);
      await vi.advanceTimersByTimeAsync(1);
      await done;
      expect(r.txs).toEqual([{ ids: [1, 2], units: [1] }]);
    }));

  it.each([
    [
      'a full transaction pending',
      async (w: GroupWriter) => w.add(3, '2026-11-20', batchOf(exec(3, 3), exec(4, 3), exec(5, 3))),
      [1, 3, 4, 5],
    ],
    ['a drain', async (w: GroupWriter) => w.drain(), [1]],
  ])('commits at once on %s', (_name, trigger, ids) =>
    withFakeTime(async () => {
      const { r, w } = lingering();
      await w.add(1, '2026-11-20', batchOf(exec(1, 1)));
      await vi.advanceTimersByTimeAsync(10);
      expect(r.txs).toEqual([]);
      await trigger(w);
      await settle();
      await vi.advanceTimersByTimeAsync(0);
      expect(r.txs).toEqual([{ ids, units: [] }]);
    }),
  );

  it('lingers again after a drain', () =>
    withFakeTime(async () => {
      const { r, w } = lingering();
      await w.add(1, '2026-11-20', batchOf(exec(1, 1)));
      await w.drain();
      await w.add(2, '2026-11-20', batchOf(exec(2, 2)));
      await vi.advanceTimersByTimeAsync(999);
      expect(r.txs).toEqual([{ ids: [1], units: [] }]);
      await vi.advanceTimersByTimeAsync(1);
      expect(r.txs).toEqual([
        { ids: [1], units: [] },
        { ids: [2], units: [] },
      ]);
    }));

  // A unit held by backpressure waits for the writer to be idle: a small tail that came while
  // the transaction holding its rows ran must not keep it waiting linger.ms more.
  it('a unit held by backpressure ends the wait', () =>
    withFakeTime(async () => {
      const r = recorder();
      const w = new GroupWriter(r.commit, 4, {}, 4, undefined, linger);
      const releaseFirst = r.hold();
      // A full transaction: committed at once, and held by the warehouse.
      await w.add(1, '2026-11-20', batchOf(exec(1, 1), exec(2, 1), exec(3, 1), exec(4, 1)));
      let returned = false;
      const held = w
        .add(2, '2026-11-20', batchOf(exec(5, 2), exec(6, 2), exec(7, 2), exec(8, 2)))
        .then(() => (returned = true));
      await settle();
      expect(returned).toBe(false);
      // The next transaction takes unit 2's rows, and is held too.
      releaseFirst();
      const releaseSecond = r.hold();
      await settle();
      // A tail of one execution, and a completion, come meanwhile.
      await w.add(3, '2026-11-20', batchOf(exec(9, 3)));
      const done = w.complete(completion(3));
      releaseSecond();
      await vi.advanceTimersByTimeAsync(0);
      // No time passed: the tail was committed without lingering, and unit 2 goes on.
      expect(returned).toBe(true);
      await held;
      await done;
      expect(r.txs).toEqual([
        { ids: [1, 2, 3, 4], units: [] },
        { ids: [5, 6, 7, 8], units: [] },
        { ids: [9], units: [3] },
      ]);
    }));

  it('a completion alone waits too, and a drain under way ends the wait', () =>
    withFakeTime(async () => {
      const { r, w } = lingering();
      let committed = false;
      const done = w.complete(completion(7)).then(() => (committed = true));
      await vi.advanceTimersByTimeAsync(500);
      expect(committed).toBe(false);
      await w.drain();
      await done;
      expect(r.txs).toEqual([{ ids: [], units: [7] }]);
    }));

  it('without linger (ms 0) each transaction starts as soon as anything is pending', async () => {
    const r = recorder();
    const w = new GroupWriter(r.commit, 100, {}, 100, undefined, { ms: 0, fullTransaction: 4 });
    await w.add(1, '2026-11-20', batchOf(exec(1, 1)));
    await settle();
    expect(r.txs).toEqual([{ ids: [1], units: [] }]);
  });
});
