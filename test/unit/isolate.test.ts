/**
 * The bisection that finds the records a write fails on (src/sync/isolate.ts), against a fake
 * write that fails, as one transaction, whenever it holds a bad record: which records are given
 * up, that every other record is written exactly once, and how many writes it costs.
 */
import { describe, expect, it } from 'vitest';
import { isolateFailures, type DataFailure } from '../../src/sync/isolate.ts';

class DataError extends Error {}
const dataError = (e: unknown) => (e instanceof DataError ? e.message : null);

/** A write of numbered records that fails when `fails(records)` names a reason. */
function store(fails: (records: readonly number[]) => string | null) {
  const written: number[] = [];
  const writes: number[][] = [];
  return {
    written,
    writes,
    write: async (records: readonly number[]) => {
      writes.push([...records]);
      const reason = fails(records);
      if (reason !== null) throw new DataError(reason);
      written.push(...records);
    },
  };
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);
const badAmong = (bad: ReadonlySet<number>) => (records: readonly number[]) => {
  const b = records.find((r) => bad.has(r));
  return b === undefined ? null : `bad ${b}`;
};

/** Runs the bisection of `records` after their write together failed with a known data error. */
async function isolate(records: number[], s: ReturnType<typeof store>, failedAlone = true) {
  const failed: [number, string][] = [];
  const failure: DataFailure = { error: new DataError('first'), reason: 'first' };
  await isolateFailures(records, {
    write: s.write,
    dataError,
    failed: (r, f) => void failed.push([r, f.reason]),
    ...(failedAlone ? { failure } : {}),
  });
  return failed;
}

describe('isolateFailures', () => {
  it('finds one bad record among n with two writes a level, ceil(log2 n) levels, and writes every other record once', async () => {
    for (let n = 1; n <= 33; n++) {
      const levels = Math.ceil(Math.log2(n));
      for (let bad = 0; bad < n; bad++) {
        const s = store(badAmong(new Set([bad])));
        const failed = await isolate(range(n), s);
        expect(failed).toEqual([[bad, n === 1 ? 'first' : `bad ${bad}`]]);
        expect([...s.written].sort((a, b) => a - b)).toEqual(range(n).filter((r) => r !== bad));
        // Every level tries both halves of the part that failed; the bad record's own half is
        // the one split again, down to the bad record written alone (unless it was alone already).
        expect(s.writes.length).toBeLessThanOrEqual(2 * levels);
        if (Number.isInteger(Math.log2(n))) expect(s.writes.length).toBe(2 * levels);
        if (n > 1) expect(s.writes).toContainEqual([bad]);
      }
    }
  });

  it('8 records and one bad: 6 writes after the failure (3 of them fail), depth first', async () => {
    const s = store(badAmong(new Set([5])));
    await isolate(range(8), s);
    // Depth first: the half that failed is narrowed down before the next half is tried.
    expect(s.writes).toEqual([[0, 1, 2, 3], [4, 5, 6, 7], [4, 5], [4], [5], [6, 7]]);
  });

  it('finds every bad record when there are several, all of them too', async () => {
    for (const bad of [[0, 7], [2, 3, 11], range(12)]) {
      const s = store(badAmong(new Set(bad)));
      const failed = await isolate(range(12), s);
      expect(failed.map(([r]) => r)).toEqual(bad);
      expect(s.written.sort((a, b) => a - b)).toEqual(range(12).filter((r) => !bad.includes(r)));
    }
    // All twelve bad: every part of the split is tried, 2n - 2 writes.
    const s = store(() => 'bad');
    await isolate(range(12), s);
    expect(s.writes).toHaveLength(22);
  });

  it('gives a record up only after it failed alone: values that fail only together are all written', async () => {
    // 3 and 4 fail only in one transaction (say, their sum overflows an aggregate).
    const s = store((records) => (records.includes(3) && records.includes(4) ? 'together' : null));
    const failed = await isolate(range(8), s);
    expect(failed).toEqual([]);
    expect(s.written.sort((a, b) => a - b)).toEqual(range(8));
  });

  it('without the failure of their own write, writes the records together first (their transaction held more)', async () => {
    const fine = store(() => null);
    expect(await isolate(range(8), fine, false)).toEqual([]);
    expect(fine.writes).toEqual([range(8)]);
    const single = store(() => 'bad');
    expect(await isolate([9], single, false)).toEqual([[9, 'bad']]);
    expect(single.writes).toEqual([[9]]);
    // Known to fail alone: given up without another write.
    const known = store(() => 'bad');
    expect(await isolate([9], known)).toEqual([[9, 'first']]);
    expect(known.writes).toEqual([]);
  });

  it('stops at the first failure that is not a data error and throws it: nothing more is written or given up', async () => {
    const lost = new Error('Connection terminated unexpectedly');
    const s = store(badAmong(new Set([6])));
    const write = async (records: readonly number[]) => {
      if (records.length === 2 && records[0] === 4) throw lost;
      await s.write(records);
    };
    const failed: number[] = [];
    await expect(
      isolateFailures(range(8), {
        write,
        dataError,
        failed: (r) => void failed.push(r),
        failure: { error: new DataError('x'), reason: 'x' },
      }),
    ).rejects.toBe(lost);
    expect(failed).toEqual([]);
    expect(s.writes).toEqual([
      [0, 1, 2, 3],
      [4, 5, 6, 7],
    ]);
  });

  it('writes nothing for no records', async () => {
    const s = store(() => 'bad');
    expect(await isolate([], s)).toEqual([]);
    expect(s.writes).toEqual([]);
  });
});
