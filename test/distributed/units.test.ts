/** Pure parts of the distributed backfill: job ids, backfill identity, a worker's rate share. */
import { describe, expect, it } from 'vitest';
import { RequestQueue } from '../../src/api/request-queue.ts';
import { backfillId, unitJobId } from '../../src/distributed/enqueue.ts';
import { uuidV5 } from '../../src/distributed/queue.ts';

describe('deterministic ids', () => {
  it('uuidV5 follows RFC 4122 (the DNS namespace example)', () => {
    expect(uuidV5('www.example.com', '6ba7b810-9dad-11d1-80b4-00c04fd430c8')).toBe(
      '2ed6657d-e927-568b-95e1-2665a8aea6a2',
    );
  });

  it.each([
    {
      a: { dates: ['2026-01-01', '2026-01-02'], customers: [2, 1], force: false },
      b: { dates: ['2026-01-02', '2026-01-01'], customers: [1, 2], force: false },
      same: true,
    },
    {
      a: { dates: ['2026-01-01'], customers: [], force: false },
      b: { dates: ['2026-01-01'], customers: [], force: true },
      same: false,
    },
    {
      a: { dates: ['2026-01-01'], customers: [1], force: false },
      b: { dates: ['2026-01-01'], customers: [2], force: false },
      same: false,
    },
    {
      a: { dates: ['2026-01-01', '2026-01-02'], customers: [], force: false },
      b: { dates: ['2026-01-01'], customers: [], force: false },
      same: false,
    },
  ])('backfill identity: same=$same', ({ a, b, same }) => {
    expect(backfillId(a) === backfillId(b)).toBe(same);
  });

  it('one job id per (backfill, unit)', () => {
    const b = backfillId({ dates: ['2026-01-01'], customers: [], force: false });
    expect(unitJobId(b, { task_id: 1, date: '2026-01-01' })).toBe(
      unitJobId(b, { task_id: 1, date: '2026-01-01' }),
    );
    expect(unitJobId(b, { task_id: 1, date: '2026-01-01' })).not.toBe(
      unitJobId(b, { task_id: 2, date: '2026-01-01' }),
    );
  });
});

describe('RequestQueue.setShare', () => {
  it('sets the effective limits to the share, capped by the maxima, and AIMD climbs no higher', () => {
    const q = new RequestQueue({ concurrency: 12, requestsPerSecond: 30, successesPerIncrease: 1 });
    q.setShare({ concurrency: 4, requestsPerSecond: 10 });
    expect([q.concurrency, q.requestsPerSecond]).toEqual([4, 10]);
    for (let i = 0; i < 20; i++) q.reportSuccess();
    expect([q.concurrency, q.requestsPerSecond]).toEqual([4, 10]);
    q.reportRateLimited();
    expect([q.concurrency, q.requestsPerSecond]).toEqual([2, 5]);
    for (let i = 0; i < 20; i++) q.reportSuccess();
    expect([q.concurrency, q.requestsPerSecond]).toEqual([4, 10]);
    q.setShare({ concurrency: 100, requestsPerSecond: 100 });
    expect([q.concurrency, q.requestsPerSecond]).toEqual([12, 30]);
    q.setShare({ concurrency: 0.4, requestsPerSecond: 0 });
    expect(q.concurrency).toBe(1);
    expect(q.requestsPerSecond).toBeGreaterThan(0);
  });
});
