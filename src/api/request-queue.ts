/**
 * One rate-controlled request queue per process. Rate limits belong to the API key, not to a
 * client object or an endpoint, so every request of the process should pass through the same
 * queue: share one instance between clients.
 *
 * Three limits apply to the start of each request:
 * 1. p-queue's `concurrency`: requests in flight at once (changed at runtime by AIMD and by a
 *    worker's share). p-queue counts the tasks it let in, and a task it let in may still wait at
 *    the gate (3): so the gate also starts a task only while fewer than `concurrency` have started
 *    and not settled. Otherwise tasks let in before the concurrency was lowered (a worker resuming
 *    with its share lapsed, then given one slot) would all start, above the new value.
 * 2. p-queue's `intervalCap`/`interval` in strict (sliding window) mode: at most the configured
 *    `requestsPerSecond` starts in any rolling interval. This is the hard ceiling.
 * 3. An AIMD gate below that ceiling: p-queue 9 cannot change `intervalCap` after construction,
 *    so the lowered rate after a 429 is enforced here, by the same sliding-window count, and the
 *    gate also holds requests while the queue is paused for a `Retry-After`.
 *
 * The gate's window is as long as the rate needs, so any rate is kept exactly, below 1 per second
 * too: `n = max(1, round(rate * intervalMs / 1000))` starts in any window of `n * 1000 / rate` ms
 * (0.4 requests/s: 1 start per 2.5 s; 1.4: 1 per 714 ms; 20: 20 per second).
 *
 * AIMD (additive increase, multiplicative decrease, as TCP does): a 429 halves the effective
 * concurrency (floor 1) and rate (floor 5% of the ceiling: 1 request/s at the default 20); each run of `successesPerIncrease` successes raises them by
 * one step back towards the configured maxima. Rate limits are unknown (spec 8), so the defaults
 * are polite and the queue finds the real limit by itself.
 */
import PQueue from 'p-queue';
import { abortReason, sleep } from '../abort.ts';

export interface RequestQueueOptions {
  /**
   * Requests in flight at once, at most. AIMD lowers the effective value after a 429 and brings
   * it back to this maximum.
   * @default 8
   * @example new RequestQueue({ concurrency: 16 })
   */
  readonly concurrency?: number;
  /**
   * Requests started per second, at most (a sliding window: never more than this many starts in
   * any rolling second). AIMD lowers the effective value after a 429.
   * @default 20
   * @example new RequestQueue({ requestsPerSecond: 50 })
   */
  readonly requestsPerSecond?: number;
  /**
   * The length of the rate window, ms; `requestsPerSecond` is scaled to it
   * (`max(1, round(requestsPerSecond * intervalMs / 1000))` starts per window). A shorter window
   * spreads starts more evenly; tests use it to measure rates quickly.
   * @default 1000
   */
  readonly intervalMs?: number;
  /**
   * Factor applied to the effective concurrency and rate on a 429.
   * @default 0.5
   */
  readonly decreaseFactor?: number;
  /**
   * After a decrease, further 429s within this many ms do not decrease again: the requests that
   * were already in flight when the limit hit all report it, and that is one signal, not many.
   * @default intervalMs
   */
  readonly decreaseCooldownMs?: number;
  /**
   * Successes (since the last change) that earn one additive step back towards the maxima: +1
   * concurrency and +max(1, requestsPerSecond / 10) rate.
   * @default 10
   */
  readonly successesPerIncrease?: number;
  /**
   * The longest pause a `Retry-After` can impose on the whole queue, ms: a server asking for more
   * gets this much (the request that asked fails instead of waiting, see executor.ts).
   * @default 300000 (GEO_MAX_RETRY_AFTER_SECONDS)
   */
  readonly maxPauseMs?: number;
}

export interface RequestQueueStats {
  /** Effective concurrency now (AIMD), at most `maxConcurrency`. */
  concurrency: number;
  /** Effective requests per second now (AIMD), at most `maxRequestsPerSecond`. */
  requestsPerSecond: number;
  maxConcurrency: number;
  maxRequestsPerSecond: number;
  /** Times the whole queue was paused for a `Retry-After`. */
  pauses: number;
  /** 429s reported to the queue. */
  rateLimitSignals: number;
  /** Multiplicative decreases applied (429s inside the cooldown do not count). */
  decreases: number;
  /** Additive increases applied. */
  increases: number;
  /** Tasks started (passed every limit) so far. */
  started: number;
  /** Tasks the queue let in: started, or waiting at the rate gate, a pause or a lapsed share. */
  running: number;
  /** Tasks started (passed every limit) and not yet settled: the requests in flight. */
  inFlight: number;
  /**
   * The most requests that can be in flight before the share or the concurrency is changed:
   * those in flight, or the concurrency while the share lets requests start. What a distributed
   * worker must hold slots for (a task let in and waiting at the rate gate may start any moment).
   */
  inFlightCeiling: number;
  /** Tasks waiting for a slot. */
  waiting: number;
  /** Epoch ms until which the queue is paused, or 0. */
  pausedUntil: number;
}

export interface RunOptions {
  /** Higher runs first among waiting tasks; the client gives retries 1 so they are not starved. */
  readonly priority?: number;
  readonly signal?: AbortSignal;
}

const DEFAULTS = {
  concurrency: 8,
  requestsPerSecond: 20,
  intervalMs: 1000,
  decreaseFactor: 0.5,
  successesPerIncrease: 10,
  maxPauseMs: 300_000,
} as const;

export class RequestQueue {
  readonly maxConcurrency: number;
  readonly maxRequestsPerSecond: number;
  readonly intervalMs: number;
  readonly maxPauseMs: number;
  readonly #queue: PQueue;
  readonly #decreaseFactor: number;
  readonly #decreaseCooldownMs: number;
  readonly #successesPerIncrease: number;
  readonly #rateStep: number;
  #rate: number;
  /**
   * The latest start times, oldest first: the AIMD gate's sliding window needs only the last
   * `cap` of them (a start is allowed when the cap-th latest left the window). Trimmed to the
   * largest cap in one copy once it is twice that long.
   */
  #starts: number[] = [];
  readonly #keepStarts: number;
  #pausedUntil = 0;
  #resumeTimer: NodeJS.Timeout | undefined;
  #lastDecreaseAt = Number.NEGATIVE_INFINITY;
  #successesSinceChange = 0;
  /** This process's share of the key's limits (setShare); the maxima until one is set. */
  #shareConcurrency = Number.POSITIVE_INFINITY;
  #shareRate = Number.POSITIVE_INFINITY;
  /** Date.now() after which the share no longer holds: no start until the next setShare. */
  #shareExpiresAt = Number.POSITIVE_INFINITY;
  #counters = { pauses: 0, rateLimitSignals: 0, decreases: 0, increases: 0, started: 0 };
  /** Tasks that passed the gate and have not settled. */
  #inFlight = 0;
  /** Tasks waiting at the gate for one in flight to settle (or the concurrency to rise). */
  #slotWaiters: (() => void)[] = [];
  readonly #settled = (): void => {
    this.#inFlight--;
    this.#wakeSlotWaiters();
  };

  constructor(opts: RequestQueueOptions = {}) {
    this.maxConcurrency = positiveInt('concurrency', opts.concurrency ?? DEFAULTS.concurrency);
    this.maxRequestsPerSecond = positiveNumber(
      'requestsPerSecond',
      opts.requestsPerSecond ?? DEFAULTS.requestsPerSecond,
    );
    this.intervalMs = positiveNumber('intervalMs', opts.intervalMs ?? DEFAULTS.intervalMs);
    this.#decreaseFactor = opts.decreaseFactor ?? DEFAULTS.decreaseFactor;
    if (!(this.#decreaseFactor > 0 && this.#decreaseFactor < 1)) {
      throw new RangeError(`decreaseFactor: expected a number between 0 and 1, got ${this.#decreaseFactor}`);
    }
    this.#decreaseCooldownMs = opts.decreaseCooldownMs ?? this.intervalMs;
    this.#successesPerIncrease = positiveInt(
      'successesPerIncrease',
      opts.successesPerIncrease ?? DEFAULTS.successesPerIncrease,
    );
    this.maxPauseMs = positiveNumber('maxPauseMs', opts.maxPauseMs ?? DEFAULTS.maxPauseMs);
    this.#rateStep = Math.max(1, this.maxRequestsPerSecond / 10);
    this.#keepStarts = this.#gate(this.maxRequestsPerSecond).cap;
    this.#rate = this.maxRequestsPerSecond;
    this.#queue = new PQueue({
      concurrency: this.maxConcurrency,
      intervalCap: this.#capFor(this.maxRequestsPerSecond),
      interval: this.intervalMs,
      strict: true,
    });
  }

  /** Effective concurrency now. */
  get concurrency(): number {
    return this.#queue.concurrency;
  }

  /** Effective requests per second now. */
  get requestsPerSecond(): number {
    return this.#rate;
  }

  get stats(): RequestQueueStats {
    return {
      concurrency: this.concurrency,
      requestsPerSecond: this.#rate,
      maxConcurrency: this.maxConcurrency,
      maxRequestsPerSecond: this.maxRequestsPerSecond,
      ...this.#counters,
      running: this.#queue.pending,
      inFlight: this.#inFlight,
      inFlightCeiling: Math.max(this.#inFlight, this.#shareLets(Date.now()) ? this.#queue.concurrency : 0),
      waiting: this.#queue.size,
      pausedUntil: this.#pausedUntil > Date.now() ? this.#pausedUntil : 0,
    };
  }

  /**
   * Resolves once fewer requests wait than the queue runs at once: the moment new work (the next
   * unit) keeps every slot busy instead of lengthening the line.
   */
  whenHeadroom(): Promise<void> {
    return this.#queue.onSizeLessThan(Math.max(1, this.#queue.concurrency));
  }

  /**
   * Runs `task` once every limit allows it to start; resolves or rejects with its result. With a
   * `signal`, an abort rejects at once with its reason, whether the task waits in the queue, in
   * a pause or in the AIMD gate, or runs (the task itself should stop on the same signal).
   */
  run<T>(task: () => Promise<T>, opts: RunOptions = {}): Promise<T> {
    return this.#queue.add(
      // Not async: when the gate is open (the usual case) the task starts in this very tick and
      // its own promise is returned, without two more promises and their microtasks per request
      // (one `then` counts it settled).
      () => {
        const start = () => {
          this.#counters.started++;
          let p: Promise<T>;
          try {
            // (A native promise comes back as it is; a plain value or a thenable settles once.)
            p = Promise.resolve(task());
          } catch (e) {
            this.#settled();
            throw e;
          }
          p.then(this.#settled, this.#settled);
          return p;
        };
        return this.#tryStart(Date.now()) ? start() : this.#waitForStartSlot(opts.signal).then(start);
      },
      { priority: opts.priority ?? 0, ...(opts.signal ? { signal: opts.signal } : {}) },
    );
  }

  /**
   * Sets this process's share of the key's limits at run time (distributed workers: the totals
   * divided among the live workers, lowered after a 429 seen by any of them). The effective
   * values become the share; local AIMD keeps working below it. Capped by the maxima.
   */
  setShare(
    share: { concurrency: number; requestsPerSecond: number },
    opts: {
      /**
       * How long the share holds without a newer one. A worker's slots are taken over by the
       * others once its heartbeat is stale: a worker that stalled past that (SIGSTOP, a frozen
       * VM) must not start requests on resuming until its next tick has said what it holds.
       */
      validForMs?: number;
    } = {},
  ): void {
    this.#shareExpiresAt =
      opts.validForMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + Math.max(0, opts.validForMs);
    // A share of 0 requests in flight holds every start (p-queue needs a concurrency of 1 or more:
    // the gate holds them). The rate share is kept as it is, fractions included, above a floor
    // that keeps the window finite.
    this.#shareConcurrency = Math.min(this.maxConcurrency, Math.max(0, Math.floor(share.concurrency)));
    this.#shareRate = Math.min(this.maxRequestsPerSecond, Math.max(0.001, share.requestsPerSecond));
    this.#queue.concurrency = Math.max(1, this.#shareConcurrency);
    this.#rate = this.#shareRate;
    this.#successesSinceChange = 0;
    this.#wakeSlotWaiters();
  }

  /** A request succeeded: one step closer to the next additive increase. */
  reportSuccess(): void {
    const maxConcurrency = Math.max(1, Math.min(this.maxConcurrency, this.#shareConcurrency));
    const maxRate = Math.min(this.maxRequestsPerSecond, this.#shareRate);
    if (this.concurrency >= maxConcurrency && this.#rate >= maxRate) return;
    this.#successesSinceChange++;
    if (this.#successesSinceChange < this.#successesPerIncrease) return;
    this.#successesSinceChange = 0;
    this.#queue.concurrency = Math.min(maxConcurrency, this.concurrency + 1);
    this.#rate = Math.min(maxRate, this.#rate + this.#rateStep);
    this.#counters.increases++;
    this.#wakeSlotWaiters();
  }

  /**
   * A request got 429. With a `Retry-After`, the whole queue pauses until then (the limit is the
   * key's, so every request would get the same answer). Either way the effective concurrency and
   * rate are decreased, once per cooldown.
   */
  reportRateLimited(retryAfterMs?: number): void {
    this.#counters.rateLimitSignals++;
    const now = Date.now();
    if (retryAfterMs !== undefined && retryAfterMs > 0) this.pauseFor(retryAfterMs);
    if (now - this.#lastDecreaseAt < this.#decreaseCooldownMs) return;
    this.#lastDecreaseAt = now;
    this.#successesSinceChange = 0;
    this.#queue.concurrency = Math.max(1, Math.floor(this.concurrency * this.#decreaseFactor));
    // The floor is 5% of this process's ceiling (its share, when it has one), never above what
    // the rate was: a worker whose share is 0.4 requests/s is not raised to 1 by a 429.
    const floor = Math.min(this.maxRequestsPerSecond, this.#shareRate) * 0.05;
    this.#rate = Math.max(Math.min(floor, this.#rate), this.#rate * this.#decreaseFactor);
    this.#counters.decreases++;
  }

  /**
   * Stops starting requests for `ms`, at most `maxPauseMs` (extends, never shortens, a pause in
   * force).
   */
  pauseFor(ms: number): void {
    const now = Date.now();
    const until = now + Math.min(ms, this.maxPauseMs);
    if (until <= this.#pausedUntil) return;
    if (this.#pausedUntil <= now) this.#counters.pauses++;
    this.#pausedUntil = until;
    this.#queue.pause();
    if (this.#resumeTimer) clearTimeout(this.#resumeTimer);
    this.#resumeTimer = setTimeout(() => {
      this.#resumeTimer = undefined;
      this.#queue.start();
    }, until - now);
    // A pause alone must not keep the process alive: with nothing else to do it may exit.
    this.#resumeTimer.unref();
  }

  /** Resolves when nothing is waiting or running. */
  onIdle(): Promise<void> {
    return this.#queue.onIdle();
  }

  #capFor(rate: number): number {
    return Math.max(1, Math.round((rate * this.intervalMs) / 1000));
  }

  /** The AIMD gate at `rate`: at most `cap` starts in any `windowMs` (see the file comment). */
  #gate(rate: number): { cap: number; windowMs: number } {
    const cap = this.#capFor(rate);
    return { cap, windowMs: (cap * 1000) / rate };
  }

  /**
   * Waits until the queue is not paused and the effective (AIMD) rate allows one more start in the
   * sliding window, then records the start (`#tryStart`, which `run` calls first and alone when
   * the gate is open). The check and the record are synchronous, so tasks waiting here
   * concurrently can never overshoot the count.
   */
  async #waitForStartSlot(signal: AbortSignal | undefined): Promise<void> {
    for (;;) {
      const now = Date.now();
      if (this.#tryStart(now)) return;
      if (now < this.#pausedUntil) {
        await sleep(this.#pausedUntil - now, signal);
        continue;
      }
      if (!this.#shareLets(now)) {
        // No request in flight allowed until the next share: look again shortly.
        await sleep(100, signal);
        continue;
      }
      if (this.#inFlight >= this.#queue.concurrency) {
        await this.#slotFreed(signal);
        continue;
      }
      // The start that must leave the window before one more fits.
      const { cap, windowMs } = this.#gate(this.#rate);
      const oldest = this.#starts[this.#starts.length - cap] as number;
      await sleep(Math.max(1, Math.ceil(oldest + windowMs - now)), signal);
    }
  }

  /** Whether this process's share lets requests start at `now`: not a share of 0, not lapsed. */
  #shareLets(now: number): boolean {
    return this.#shareConcurrency > 0 && now < this.#shareExpiresAt;
  }

  /** Resolves when a request in flight settles or the share changes; rejects when `signal` aborts. */
  #slotFreed(signal: AbortSignal | undefined): Promise<void> {
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.#slotWaiters = this.#slotWaiters.filter((w) => w !== wake);
        reject(abortReason(signal!));
      };
      const wake = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      this.#slotWaiters.push(wake);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  #wakeSlotWaiters(): void {
    if (this.#slotWaiters.length === 0) return;
    const waiters = this.#slotWaiters;
    this.#slotWaiters = [];
    for (const wake of waiters) wake();
  }

  /**
   * Records a start at `now` if no pause, no zero or expired share, no rate limit and no full
   * concurrency (tasks let in before it was lowered) forbids it.
   */
  #tryStart(now: number): boolean {
    if (now < this.#pausedUntil || !this.#shareLets(now)) return false;
    if (this.#inFlight >= this.#queue.concurrency) return false;
    const { cap, windowMs } = this.#gate(this.#rate);
    const n = this.#starts.length;
    if (n >= cap && (this.#starts[n - cap] as number) > now - windowMs) return false;
    this.#starts.push(now);
    // Counted here, with the check: a task that passed waits a microtask before it starts.
    this.#inFlight++;
    if (this.#starts.length > 2 * this.#keepStarts) this.#starts = this.#starts.slice(-this.#keepStarts);
    return true;
  }
}

function positiveInt(name: string, v: number): number {
  if (!Number.isInteger(v) || v < 1) throw new RangeError(`${name}: expected a positive integer, got ${v}`);
  return v;
}

function positiveNumber(name: string, v: number): number {
  if (!Number.isFinite(v) || v <= 0) throw new RangeError(`${name}: expected a positive number, got ${v}`);
  return v;
}

/** The limits `queueOptionsFromEnv` accepts, the same as the config layer's. */
const ENV_LIMITS = {
  GEO_CONCURRENCY: { option: 'concurrency', max: 256 },
  GEO_REQUESTS_PER_SECOND: { option: 'requestsPerSecond', max: 100_000 },
} as const;

/**
 * Reads `GEO_CONCURRENCY` and `GEO_REQUESTS_PER_SECOND` (unset or empty: the default applies).
 * Throws one error listing every bad variable by name, with the value it got.
 */
export function queueOptionsFromEnv(
  env: Readonly<Record<string, string | undefined>> = process.env,
): Pick<RequestQueueOptions, 'concurrency' | 'requestsPerSecond'> {
  const out: { concurrency?: number; requestsPerSecond?: number } = {};
  const problems: string[] = [];
  for (const [name, { option, max }] of Object.entries(ENV_LIMITS)) {
    const text = env[name]?.trim();
    if (text === undefined || text === '') continue;
    const n = /^\d+$/.test(text) ? Number(text) : Number.NaN;
    if (!Number.isSafeInteger(n) || n < 1 || n > max) {
      problems.push(`${name}: expected an integer from 1 to ${max}, got ${JSON.stringify(text)}`);
    } else {
      out[option] = n;
    }
  }
  if (problems.length > 0) throw new RangeError(problems.join('\n'));
  return out;
}
