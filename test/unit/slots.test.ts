import { describe, expect, it } from 'vitest';
import { Slots } from '../../src/sync/slots.ts';

describe('Slots', () => {
  it('hands out at most its size and wakes waiters on release', async () => {
    const s = new Slots(2);
    expect([s.tryAcquire(), s.tryAcquire(), s.tryAcquire()]).toEqual([true, true, false]);
    let woke = false;
    const waiting = s.released().then(() => (woke = true));
    expect(woke).toBe(false);
    s.release();
    await waiting;
    expect(woke).toBe(true);
    expect(s.tryAcquire()).toBe(true);
    expect(s.free).toBe(0);
  });

  it('never grows past its size, whatever is released', () => {
    const s = new Slots(3);
    s.release(10);
    expect(s.free).toBe(3);
  });
});
