/** A promise-chain mutex: `run` calls execute one at a time, in call order. */
export class Mutex {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.tail.then(fn, fn);
    // The chain continues whether `fn` resolved or threw; the caller sees the outcome.
    this.tail = result.catch(() => undefined);
    return result;
  }
}
