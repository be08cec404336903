/**
 * The run's window of executions in flight, shared by every unit being read: units start by the
 * request queue's headroom, and this bound keeps memory flat however many of them read at once.
 */
export class Slots {
  #free: number;
  #waiters: (() => void)[] = [];

  constructor(readonly size: number) {
    this.#free = size;
  }

  get free(): number {
    return this.#free;
  }

  tryAcquire(): boolean {
    if (this.#free === 0) return false;
    this.#free--;
    return true;
  }

  /** Resolves at the next release (the caller then tries again). */
  released(): Promise<void> {
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  release(n = 1): void {
    this.#free = Math.min(this.size, this.#free + n);
    for (const wake of this.#waiters.splice(0)) wake();
  }
}
