/**
 * FingerprintReader: units asking while a read is in flight share the next query; each unit gets
 * its own map, from a read that began after it asked; a failed read fails only its units.
 */
import { describe, expect, it } from 'vitest';
import { FingerprintReader } from '../../src/sync/fingerprint-reader.ts';

type Unit = { task_id: number; date: string };

/** A warehouse whose reads wait until released; it records the units of each query. */
function fakeWarehouse(fail?: (units: readonly Unit[]) => boolean) {
  const queries: Unit[][] = [];
  const gates: (() => void)[] = [];
  let version = 0;
  return {
    queries,
    release: () => gates.shift()?.(),
    bump: () => version++,
    completeFingerprints: async (units: readonly Unit[]) => {
      queries.push([...units]);
      const seen = version;
      await new Promise<void>((r) => gates.push(r));
      if (fail?.(units)) throw new Error('read failed');
      return new Map(units.map((u) => [`${u.task_id}|${u.date}`, new Map([[u.task_id * 10, `v${seen}`]])]));
    },
  };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('FingerprintReader', () => {
  it('serves the units that ask while a read is in flight with one next read', async () => {
    const w = fakeWarehouse();
    const r = new FingerprintReader(w);
    const a = r.read(1, '2026-11-20');
    await tick();
    expect(w.queries).toEqual([[{ task_id: 1, date: '2026-11-20' }]]);
    // Three more ask while the first read is in flight.
    const rest = [r.read(2, '2026-11-20'), r.read(3, '2026-11-20'), r.read(4, '2026-11-21')];
    w.bump();
    w.release();
    expect(await a).toEqual(new Map([[10, 'v0']]));
    await tick();
    expect(w.queries).toHaveLength(2);
    expect(w.queries[1]!.map((u) => u.task_id)).toEqual([2, 3, 4]);
    w.release();
    // Each gets its own unit's map, from the read that began after it asked.
    expect(await Promise.all(rest)).toEqual([
      new Map([[20, 'v1']]),
      new Map([[30, 'v1']]),
      new Map([[40, 'v1']]),
    ]);
  });

  it('bounds the units of one query', async () => {
    const w = fakeWarehouse();
    const r = new FingerprintReader(w, 2);
    const all = [1, 2, 3, 4, 5].map((t) => r.read(t, '2026-11-20'));
    for (let i = 0; i < 3; i++) {
      await tick();
      w.release();
    }
    await Promise.all(all);
    expect(w.queries.map((q) => q.map((u) => u.task_id))).toEqual([[1, 2], [3, 4], [5]]);
  });

  it('a failed read rejects its own units only, and the next read goes on', async () => {
    const w = fakeWarehouse((units) => units.some((u) => u.task_id === 1));
    const r = new FingerprintReader(w);
    const a = r.read(1, '2026-11-20');
    await tick();
    const b = r.read(2, '2026-11-20');
    w.release();
    await expect(a).rejects.toThrow('read failed');
    await tick();
    w.release();
    expect(await b).toEqual(new Map([[20, 'v0']]));
  });
});
