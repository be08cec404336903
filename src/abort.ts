/**
 * Interruption: one AbortSignal per process (the commands make it from SIGINT/SIGTERM) is handed
 * down to everything that waits, so every wait ends at once when the process is asked to stop.
 * No global state: whoever waits receives the signal as an argument.
 */

/** The reason a signal carries when the process was asked to stop (SIGINT/SIGTERM). */
export class InterruptedError extends Error {
  readonly code = 'INTERRUPTED' as const;
  constructor(readonly signalName: string) {
    super(`interrupted by ${signalName}`);
    this.name = 'InterruptedError';
  }
}

/** An error that only says the work was stopped: an InterruptedError or an AbortError. */
export function isInterruption(e: unknown): boolean {
  return e instanceof InterruptedError || (e instanceof Error && e.name === 'AbortError');
}

/** The error an aborted signal stands for: its reason, or an AbortError when it has none. */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

/**
 * Waits `ms`; with a signal, rejects with the signal's reason the moment it aborts (at once when
 * it already has), and leaves no timer behind.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (!signal) return new Promise((resolve) => setTimeout(resolve, ms));
  if (signal.aborted) return Promise.reject(abortReason(signal));
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * `work`, or the signal's reason the moment the signal aborts, whichever comes first: for a wait
 * that cannot itself be told to stop (a connection being opened). `work` goes on unobserved after
 * an abort; its outcome is dropped, so it must not hold anything the caller has to release (the
 * process exits once a command has stopped).
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.reject(abortReason(signal));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      work.catch(() => undefined);
      reject(abortReason(signal));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

/** Work a stop started that must end before the process exits (finishBeforeExit). */
const finishing = new Set<Promise<unknown>>();

/**
 * Registers work a stop started that must end before the process exits or closes what it ran on:
 * a cancel request in flight (load/postgres/cancel.ts), whose client PgBouncer 1.18 must not see
 * go first. The work bounds itself; its failure is its own (not reported here).
 */
export function finishBeforeExit(work: Promise<unknown>): void {
  finishing.add(work);
  const done = () => finishing.delete(work);
  work.then(done, done);
}

/** Resolves once every work registered by finishBeforeExit so far has ended, however. */
export async function stopWorkFinished(): Promise<void> {
  while (finishing.size > 0) await Promise.allSettled([...finishing]);
}
