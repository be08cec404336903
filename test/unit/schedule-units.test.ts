import { describe, expect, it } from 'vitest';
import { scheduleUnits } from '../../src/sync/run.ts';
import type { Unit } from '../../src/sync/planner.ts';

const units = (n: number): Unit[] =>
  Array.from({ length: n }, (_, i) => ({ task_id: i + 1, date: '2026-11-01' }));

/** A unit whose reading ends when the test says so. */
function controlled() {
  const started: number[] = [];
  const finish = new Map<number, () => void>();
  const read = (u: Unit) => {
    started.push(u.task_id);
    return new Promise<void>((resolve) => finish.set(u.task_id, resolve));
  };
  return { started, finish, read };
}

const tick = () => new Promise<void>((r) => setTimeout(r, 5));

describe('scheduleUnits', () => {
  it('starts the next unit as soon as the queue has headroom, not when a unit ends', async () => {
    const c = controlled();
    let open: () => void = () => undefined;
    const headroom = () => new Promise<void>((r) => (open = r));
    const done = scheduleUnits(units(3), { maxUnits: 8, headroom, aborted: () => false, read: c.read });
    await tick();
    expect(c.started).toEqual([1]); // the queue is full: unit 2 waits
    open();
    await tick();
    expect(c.started).toEqual([1, 2]); // headroom: unit 2 starts while unit 1 still reads
    open();
    await tick();
    expect(c.started).toEqual([1, 2, 3]);
    for (const f of c.finish.values()) f();
    await done;
  });

  it('never reads more than maxUnits at once', async () => {
    const c = controlled();
    const done = scheduleUnits(units(5), { maxUnits: 2, headroom: null, aborted: () => false, read: c.read });
    await tick();
    expect(c.started).toEqual([1, 2]);
    c.finish.get(1)!();
    await tick();
    expect(c.started).toEqual([1, 2, 3]);
    for (const id of [2, 3]) c.finish.get(id)!();
    await tick();
    for (const id of [4, 5]) c.finish.get(id)!();
    await done;
    expect(c.started).toEqual([1, 2, 3, 4, 5]);
  });

  it('starts nothing new after a unit fails fatally, lets the others finish, then throws', async () => {
    const started: number[] = [];
    let finished = 0;
    const read = async (u: Unit) => {
      started.push(u.task_id);
      await tick();
      if (u.task_id === 1) throw new Error('401 on the key');
      finished++;
    };
    await expect(
      scheduleUnits(units(10), { maxUnits: 2, headroom: null, aborted: () => false, read }),
    ).rejects.toThrow('401 on the key');
    expect(started).toEqual([1, 2]);
    expect(finished).toBe(1);
  });

  it('starts nothing once the run is aborted', async () => {
    const started: number[] = [];
    let aborted = false;
    const read = async (u: Unit) => {
      started.push(u.task_id);
      aborted = true;
    };
    await scheduleUnits(units(4), { maxUnits: 1, headroom: null, aborted: () => aborted, read });
    expect(started).toEqual([1]);
  });
});
