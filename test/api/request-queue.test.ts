import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { queueOptionsFromEnv, RequestQueue } from '../../src/api/request-queue.ts';

/**
 * Fake timers drive p-queue's interval, the AIMD gate and the Retry-After pause together, so the
 * tests count starts per window exactly instead of measuring wall-clock time.
 */
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
  vi.setSystemTime(0);
});
afterEach(() => {
  vi.useRealTimers();
});

/** Adds `n` tasks that record their start time and hold their slot for `holdMs`. */
function addTasks(q: RequestQueue, n: number, holdMs = 0) {
  const starts: number[] = [];
  let running = 0;
  let maxRunning = 0;
  const done = Array.from({ length: n }, () =>
    q.run(async () => {
      starts.push(Date.now());
      running++;
      maxRunning = Math.max(maxRunning, running);
      await new Promise((r) => setTimeout(r, holdMs));
      running--;
    }),
  );
  return { starts, done: Promise.all(done), maxRunning: () => maxRunning };
}

/** Starts per window [k * size, (k + 1) * size). */
function perWindow(starts: number[], size: number): number[] {
  const out: number[] = [];
  for (const t of starts) {
    const k = Math.floor(t / size);
    while (out.length <= k) out.push(0);
    out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}

/** The most starts inside any half-open window [t, t + size) that begins at a start. */
function maxInAnyWindow(starts: number[], size: number): number {
  return Math.max(...starts.map((t) => starts.filter((s) => s >= t && s < t + size).length));
}

describe('RequestQueue limits', () => {
  it('defaults are polite: concurrency 8, 20 requests/s', () => {
    const q = new RequestQueue();
    expect(q.stats).toMatchObject({
      concurrency: 8,
      requestsPerSecond: 20,
      maxConcurrency: 8,
      maxRequestsPerSecond: 20,
    });
  });

  it('never runs more than `concurrency` at once', async () => {
    const q = new RequestQueue({ concurrency: 3, requestsPerSecond: 1000 });
    const t = addTasks(q, 20, 100);
    await vi.advanceTimersByTimeAsync(5000);
    await t.done;
    expect(t.starts).toHaveLength(20);
    expect(t.maxRunning()).toBe(3);
  });

  it('starts at most `requestsPerSecond` per second (counted per window)', async () => {
    const q = new RequestQueue({ concurrency: 50, requestsPerSecond: 5 });
    const t = addTasks(q, 12);
    await vi.advanceTimersByTimeAsync(5000);
    await t.done;
    expect(perWindow(t.starts, 1000)).toEqual([5, 5, 2]);
    expect(maxInAnyWindow(t.starts, 1000)).toBe(5);
  });

  it('scales the rate to a shorter window', async () => {
    const q = new RequestQueue({ concurrency: 50, requestsPerSecond: 100, intervalMs: 50 });
    const t = addTasks(q, 23);
    await vi.advanceTimersByTimeAsync(1000);
    await t.done;
    expect(perWindow(t.starts, 50)).toEqual([5, 5, 5, 5, 3]);
  });

  it('changing concurrency at runtime applies to the next starts', async () => {
    const q = new RequestQueue({ concurrency: 6, requestsPerSecond: 1000, decreaseCooldownMs: 0 });
    q.reportRateLimited(); // 6 -> 3
    q.reportRateLimited(); // 3 -> 1
    expect(q.concurrency).toBe(1);
    const t = addTasks(q, 5, 10);
    await vi.advanceTimersByTimeAsync(1000);
    await t.done;
    expect(t.maxRunning()).toBe(1);
  });
});

describe('shares below one request per second (distributed workers)', () => {
  it.each([
    [0.4, 20_000, 8],
    [1.4, 10_000, 14],
    [2.5, 8_400, 21], // 3 starts per 1.2 s window: 7 windows
  ])('a share of %s requests/s sends exactly that over %s ms', async (rate, ms, expected) => {
    const q = new RequestQueue({ concurrency: 4, requestsPerSecond: 20 });
    q.setShare({ concurrency: 4, requestsPerSecond: rate });
    const t = addTasks(q, 200);
    await vi.advanceTimersByTimeAsync(ms - 1);
    expect(t.starts).toHaveLength(expected);
    // Evenly: never two starts closer than one request's share of time, where the rate is below 1.
    if (rate < 1) {
      for (let i = 1; i < t.starts.length; i++)
        expect(t.starts[i]! - t.starts[i - 1]!).toBeGreaterThanOrEqual(1000 / rate);
    }
  });

  it('a 429 halves a fractional share; the floor is 5% of the share, never 1 request/s', async () => {
    const q = new RequestQueue({ concurrency: 4, requestsPerSecond: 20, decreaseCooldownMs: 0 });
    q.setShare({ concurrency: 1, requestsPerSecond: 0.4 });
    q.reportRateLimited();
    expect(q.requestsPerSecond).toBeCloseTo(0.2);
    for (let i = 0; i < 10; i++) q.reportRateLimited();
    expect(q.requestsPerSecond).toBeCloseTo(0.02);
  });

  it('a share of 0 requests in flight starts nothing until a share allows it', async () => {
    const q = new RequestQueue({ concurrency: 4, requestsPerSecond: 20 });
    q.setShare({ concurrency: 0, requestsPerSecond: 1 });
    const t = addTasks(q, 3);
    await vi.advanceTimersByTimeAsync(5000);
    expect(t.starts).toHaveLength(0);
    q.setShare({ concurrency: 1, requestsPerSecond: 20 });
    await vi.advanceTimersByTimeAsync(1000);
    await t.done;
    expect(t.starts).toHaveLength(3);
  });
  it('a share lowered while requests wait at the gate: no more of them start than the new share (a worker that resumed)', async () => {
    const q = new RequestQueue({ concurrency: 4, requestsPerSecond: 1000 });
    // Its share lapsed while it was frozen: the queue has let 4 tasks in, and all wait at the gate.
    q.setShare({ concurrency: 4, requestsPerSecond: 1000 }, { validForMs: 0 });
    const t = addTasks(q, 6, 500);
    await vi.advanceTimersByTimeAsync(1000);
    expect(t.starts).toHaveLength(0);
    // Its next tick finds the others took its slots but one.
    q.setShare({ concurrency: 1, requestsPerSecond: 1000 });
    await vi.advanceTimersByTimeAsync(1200);
    expect(t.maxRunning()).toBe(1);
    expect(t.starts).toHaveLength(3);
    expect(q.stats.inFlight).toBe(1);
    await vi.advanceTimersByTimeAsync(2000);
    await t.done;
    expect(t.starts).toHaveLength(6);
    expect(t.maxRunning()).toBe(1);
    expect(q.stats.inFlight).toBe(0);
  });

  it('a waiter for a slot starts as soon as AIMD raises the concurrency again, not at the next settle', async () => {
    const q = new RequestQueue({ concurrency: 2, requestsPerSecond: 1000, successesPerIncrease: 1 });
    q.pauseFor(100); // both tasks let in, held at the gate
    const t = addTasks(q, 2, 10_000);
    q.reportRateLimited(); // concurrency 2 -> 1 while they wait
    await vi.advanceTimersByTimeAsync(200);
    expect(t.starts).toHaveLength(1);
    q.reportSuccess(); // 1 -> 2
    await vi.advanceTimersByTimeAsync(10);
    expect(t.starts).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(10_000);
    await t.done;
  });

  it('inFlightCeiling: what may be in flight before the next share, waiting tasks included, none under a share of 0', async () => {
    const q = new RequestQueue({ concurrency: 4, requestsPerSecond: 1000 });
    q.setShare({ concurrency: 3, requestsPerSecond: 1000 });
    expect(q.stats.inFlightCeiling).toBe(3);
    const t = addTasks(q, 2, 1000);
    await vi.advanceTimersByTimeAsync(10);
    expect([q.stats.inFlight, q.stats.inFlightCeiling]).toEqual([2, 3]);
    // Ranked out of slots: only what is in flight still needs them.
    q.setShare({ concurrency: 0, requestsPerSecond: 1000 });
    expect(q.stats.inFlightCeiling).toBe(2);
    await vi.advanceTimersByTimeAsync(1000);
    await t.done;
    expect(q.stats.inFlightCeiling).toBe(0);
    // A lapsed share starts nothing either.
    q.setShare({ concurrency: 3, requestsPerSecond: 1000 }, { validForMs: 0 });
    expect(q.stats.inFlightCeiling).toBe(0);
  });

  it('a share expires: past validForMs nothing starts until the next share (a worker that stalled)', async () => {
    const q = new RequestQueue({ concurrency: 4, requestsPerSecond: 1000 });
    q.setShare({ concurrency: 4, requestsPerSecond: 1000 }, { validForMs: 2500 });
    const early = addTasks(q, 2);
    await vi.advanceTimersByTimeAsync(10);
    await early.done;
    expect(early.starts).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(3000); // as if the process had been frozen past it
    const late = addTasks(q, 3);
    await vi.advanceTimersByTimeAsync(5000);
    expect(late.starts).toHaveLength(0);
    q.setShare({ concurrency: 4, requestsPerSecond: 1000 }, { validForMs: 2500 });
    await vi.advanceTimersByTimeAsync(200);
    await late.done;
    expect(late.starts).toHaveLength(3);
    // Without validForMs a share holds until replaced.
    q.setShare({ concurrency: 4, requestsPerSecond: 1000 });
    await vi.advanceTimersByTimeAsync(60_000);
    const later = addTasks(q, 1);
    await vi.advanceTimersByTimeAsync(10);
    await later.done;
    expect(later.starts).toHaveLength(1);
  });
});

describe('what a task returns', () => {
  it('a plain value, a thenable or a synchronous throw settles its slot exactly once', async () => {
    const q = new RequestQueue({ concurrency: 1, requestsPerSecond: 1000 });
    const plain = (() => 42) as unknown as () => Promise<number>;
    await expect(q.run(plain)).resolves.toBe(42);
    let calls = 0;
    const thenable = (() => ({
      then(ok: (v: string) => void, fail: (e: unknown) => void) {
        calls++;
        ok('once');
        fail(new Error('ignored'));
      },
    })) as unknown as () => Promise<string>;
    await expect(q.run(thenable)).resolves.toBe('once');
    const thrower = (() => {
      throw new Error('at once');
    }) as unknown as () => Promise<void>;
    await expect(q.run(thrower)).rejects.toThrow('at once');
    expect(calls).toBe(1);
    expect(q.stats.inFlight).toBe(0);
    await expect(q.run(async () => 'next')).resolves.toBe('next');
  });
});

describe('Retry-After pauses the whole queue', () => {
  it('no task starts until the pause ends, then all do', async () => {
    const q = new RequestQueue({ concurrency: 4, requestsPerSecond: 1000 });
    q.reportRateLimited(2000);
    const t = addTasks(q, 6);
    await vi.advanceTimersByTimeAsync(1999);
    expect(t.starts).toHaveLength(0);
    expect(q.stats.pauses).toBe(1);
    expect(q.stats.pausedUntil).toBe(2000);
    await vi.advanceTimersByTimeAsync(1000);
    await t.done;
    expect(t.starts).toHaveLength(6);
    expect(Math.min(...t.starts)).toBeGreaterThanOrEqual(2000);
  });

  it('holds tasks already taken from the queue too, and a longer pause extends a shorter one', async () => {
    const q = new RequestQueue({ concurrency: 2, requestsPerSecond: 1000 });
    const first = addTasks(q, 2, 500); // running when the 429 arrives
    await vi.advanceTimersByTimeAsync(10);
    expect(first.starts).toHaveLength(2);
    q.reportRateLimited(1000); // paused until 1010
    q.reportRateLimited(3000); // extended to 3010: one pause, not two
    q.reportRateLimited(500); // shorter: ignored
    const later = addTasks(q, 3);
    await vi.advanceTimersByTimeAsync(2990);
    expect(later.starts).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(100);
    await Promise.all([first.done, later.done]);
    expect(later.starts).toHaveLength(3);
    expect(Math.min(...later.starts)).toBeGreaterThanOrEqual(3010);
    expect(q.stats.pauses).toBe(1);
    expect(q.stats.rateLimitSignals).toBe(3);
  });
});

describe('the pause cap', () => {
  it('a Retry-After above maxPauseMs pauses the queue for maxPauseMs, never longer', async () => {
    const q = new RequestQueue({ concurrency: 2, requestsPerSecond: 1000, maxPauseMs: 1500 });
    q.reportRateLimited(60_000);
    expect(q.stats.pausedUntil).toBe(1500);
    const t = addTasks(q, 3);
    await vi.advanceTimersByTimeAsync(1499);
    expect(t.starts).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(100);
    await t.done;
    expect(t.starts).toHaveLength(3);
    expect(Math.max(...t.starts)).toBeLessThan(1600);
  });

  it('defaults to 300 s', () => {
    const q = new RequestQueue();
    expect(q.maxPauseMs).toBe(300_000);
    q.pauseFor(3_600_000);
    expect(q.stats.pausedUntil).toBe(300_000);
  });
});

describe('the stop signal', () => {
  it('ends a pause at once: a waiting task rejects with the signal reason, nothing starts', async () => {
    const q = new RequestQueue({ concurrency: 2, requestsPerSecond: 1000 });
    q.reportRateLimited(60_000);
    const controller = new AbortController();
    const started: number[] = [];
    const runs = [0, 1, 2].map((i) =>
      q
        .run(async () => void started.push(i), { signal: controller.signal })
        .then(
          () => 'done',
          (e: unknown) => e,
        ),
    );
    await vi.advanceTimersByTimeAsync(1000);
    const reason = new Error('interrupted by SIGTERM');
    controller.abort(reason);
    await vi.advanceTimersByTimeAsync(0);
    expect(await Promise.all(runs)).toEqual([reason, reason, reason]);
    expect(started).toEqual([]);
  });

  it('ends the AIMD gate wait at once', async () => {
    // p-queue's own window lets 2 start per second; the gate, lowered by a 429, only 1.
    const q = new RequestQueue({ concurrency: 4, requestsPerSecond: 2 });
    q.reportRateLimited();
    const controller = new AbortController();
    const first = q.run(async () => 'first', { signal: controller.signal });
    const second = q.run(async () => 'second', { signal: controller.signal }).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(10);
    expect(await first).toBe('first');
    const reason = new Error('stop');
    controller.abort(reason);
    await vi.advanceTimersByTimeAsync(0);
    expect(await second).toBe(reason);
  });
});

describe('AIMD', () => {
  it('halves concurrency and rate on a 429 (once per cooldown), floors at 1', async () => {
    const q = new RequestQueue({ concurrency: 8, requestsPerSecond: 20 });
    q.reportRateLimited();
    expect([q.concurrency, q.requestsPerSecond]).toEqual([4, 10]);
    q.reportRateLimited(); // same burst of 429s: one signal
    expect([q.concurrency, q.requestsPerSecond]).toEqual([4, 10]);
    for (const expected of [
      [2, 5],
      [1, 2.5],
      [1, 1.25],
      [1, 1],
      [1, 1],
    ]) {
      await vi.advanceTimersByTimeAsync(1000);
      q.reportRateLimited();
      expect([q.concurrency, q.requestsPerSecond]).toEqual(expected);
    }
    expect(q.stats.decreases).toBe(6);
  });

  it('recovers additively after runs of successes, up to the configured maxima', () => {
    const q = new RequestQueue({ concurrency: 8, requestsPerSecond: 20, successesPerIncrease: 5 });
    q.reportRateLimited();
    expect([q.concurrency, q.requestsPerSecond]).toEqual([4, 10]);
    const seen: number[][] = [];
    for (let i = 0; i < 60; i++) {
      q.reportSuccess();
      if ((i + 1) % 5 === 0) seen.push([q.concurrency, q.requestsPerSecond]);
    }
    expect(seen.slice(0, 6)).toEqual([
      [5, 12],
      [6, 14],
      [7, 16],
      [8, 18],
      [8, 20],
      [8, 20],
    ]);
    expect(q.stats.increases).toBe(5);
  });

  it('the lowered rate is enforced, not just reported', async () => {
    const q = new RequestQueue({ concurrency: 50, requestsPerSecond: 10 });
    q.reportRateLimited(); // 10/s -> 5/s
    const t = addTasks(q, 12);
    await vi.advanceTimersByTimeAsync(5000);
    await t.done;
    expect(maxInAnyWindow(t.starts, 1000)).toBe(5);
    expect(perWindow(t.starts, 1000)).toEqual([5, 5, 2]);
  });

  it('a window of more than a thousand starts slides without ever letting more through (the AIMD gate)', async () => {
    // 1,200/s: the gate's window holds more than a thousand start times and drops the expired
    // ones in bulk; after a 429 halves the rate, no rolling second may hold more than 600 starts.
    const q = new RequestQueue({ concurrency: 2000, requestsPerSecond: 1200, decreaseCooldownMs: 60_000 });
    const first = addTasks(q, 1200);
    await vi.advanceTimersByTimeAsync(10);
    await first.done;
    q.reportRateLimited();
    const t = addTasks(q, 1500);
    await vi.advanceTimersByTimeAsync(3000);
    await t.done;
    expect(maxInAnyWindow(t.starts, 1000)).toBe(600);
    expect(maxInAnyWindow([...first.starts, ...t.starts], 1000)).toBe(1200);
    expect(q.stats.started).toBe(2700);
  });
});

describe('queueOptionsFromEnv', () => {
  it('reads both variables', () => {
    expect(queueOptionsFromEnv({ GEO_CONCURRENCY: '16', GEO_REQUESTS_PER_SECOND: ' 50 ' })).toEqual({
      concurrency: 16,
      requestsPerSecond: 50,
    });
  });

  it('leaves unset and empty variables to the defaults', () => {
    expect(queueOptionsFromEnv({ GEO_CONCURRENCY: '' })).toEqual({});
  });

  it.each([
    ['GEO_CONCURRENCY', 'abc'],
    ['GEO_CONCURRENCY', '0'],
    ['GEO_CONCURRENCY', '257'],
    ['GEO_CONCURRENCY', '2.5'],
    ['GEO_REQUESTS_PER_SECOND', '-3'],
    ['GEO_REQUESTS_PER_SECOND', '1e3'],
  ])('%s=%s is refused with an error naming the variable', (name, value) => {
    expect(() => queueOptionsFromEnv({ [name]: value })).toThrow(new RegExp(`^${name}: .*"${value}"`));
  });

  it('lists every bad variable at once', () => {
    expect(() => queueOptionsFromEnv({ GEO_CONCURRENCY: 'x', GEO_REQUESTS_PER_SECOND: 'y' })).toThrow(
      /GEO_CONCURRENCY[\s\S]*GEO_REQUESTS_PER_SECOND/,
    );
  });
});
