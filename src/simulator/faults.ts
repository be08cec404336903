/**
 * Fault injection. Each request draws its fate from one seeded sequence (the same seed and the
 * same request order give the same faults); rate limiting is decided per token with a sliding
 * one-second window kept as a ring of the last `limit` accepted request times.
 */
import { Rng, tag } from './rng.ts';

export interface FaultOptions {
  /** Mean added latency per response (ms). */
  latencyMs?: number;
  /** Uniform +/- jitter around the mean (ms). */
  latencyJitterMs?: number;
  /** Per API key/token; beyond it answer 429 with Retry-After. */
  rateLimitPerSecond?: number;
  /**
   * Every n-th request the server receives (counted across tokens) is answered 429, whatever the
   * rate: a gateway quota that trips on a count. Unlike rateLimitPerSecond it does not depend on
   * how fast the client is, so a test can count on seeing 429s on a slow machine.
   */
  rateLimitEvery?: number;
  /** Value sent in Retry-After (seconds), default 1. */
  retryAfterSeconds?: number;
  /** 0..1 share of requests answered 500/502/503. */
  errorRate?: number;
  /** 0..1 share of requests whose socket is destroyed without a response. */
  resetRate?: number;
  /** 0..1 share answered 200 with a truncated / non-JSON body. */
  malformedRate?: number;
  /** 0..1 share delayed by slowMs. */
  slowRate?: number;
  slowMs?: number;
  /**
   * task/results serves at most this many items per page whatever `per_page` asks (a real server
   * may cap below the spec's 100); `per_page` and `last_page` of the answer say so.
   */
  resultsPerPageCap?: number;
  /**
   * Add members the spec does not name (a number, a null, a nested object) to every JSON object
   * sent, maps included: what a server that gained fields looks like to a client.
   */
  unknownMembers?: boolean;
  /**
   * Rewrite answers with values a client must store exactly or quarantine, never fail on (rank
   * numbers as "-", "３", 3.5, 1e400; integers past INTEGER; instants past 9999; money NUMERIC(18,4)
   * would round; JSON holding 1e400; text past a btree entry), decided per record from the seed:
   * see odd-values.ts.
   */
  oddValues?: boolean;
  /**
   * Platform tasks the key sees listed but may not read: `task/results`, `task/prompts` and
   * `task/info` with one of these `task_id`s answer 403.
   */
  forbiddenTaskIds?: number[];
}

export type Fate =
  | { kind: 'ok' }
  | { kind: 'reset' }
  | { kind: 'error'; status: 500 | 502 | 503 }
  | { kind: 'malformed'; truncate: boolean };

export interface Decision {
  fate: Fate;
  delayMs: number;
  slow: boolean;
}

const OK: Fate = { kind: 'ok' };
const NO_FAULT: Decision = { fate: OK, delayMs: 0, slow: false };
const ERROR_STATUSES = [500, 502, 503] as const;

class Window {
  readonly times: Float64Array;
  head = 0;
  size = 0;
  constructor(limit: number) {
    this.times = new Float64Array(limit);
  }
}

export class FaultInjector {
  private opts: FaultOptions = {};
  private readonly rng: Rng;
  private windows = new Map<string, Window>();
  private active = false;
  private forbidden: ReadonlySet<number> = new Set();
  private received = 0;

  constructor(seed: number, opts: FaultOptions = {}) {
    this.rng = Rng.of(seed, tag('faults'));
    this.set(opts);
  }

  set(opts: FaultOptions): void {
    this.opts = { ...opts };
    this.windows = new Map();
    this.received = 0;
    this.forbidden = new Set(opts.forbiddenTaskIds ?? []);
    const o = this.opts;
    this.active = Boolean(
      o.latencyMs ||
      o.latencyJitterMs ||
      o.errorRate ||
      o.resetRate ||
      o.malformedRate ||
      (o.slowRate && o.slowMs),
    );
  }

  get resultsPerPageCap(): number | undefined {
    return this.opts.resultsPerPageCap;
  }

  get unknownMembers(): boolean {
    return this.opts.unknownMembers ?? false;
  }

  get oddValues(): boolean {
    return this.opts.oddValues ?? false;
  }

  get retryAfterSeconds(): number {
    return this.opts.retryAfterSeconds ?? 1;
  }

  /**
   * true when this request is refused with 429: it is an n-th one (rateLimitEvery), or `key`
   * already made `rateLimitPerSecond` requests within the last second.
   */
  rateLimited(key: string, nowMs: number): boolean {
    const every = this.opts.rateLimitEvery;
    if (every && ++this.received % every === 0) return true;
    const limit = this.opts.rateLimitPerSecond;
    if (!limit || limit <= 0) return false;
    let w = this.windows.get(key);
    if (!w) {
      w = new Window(Math.ceil(limit));
      this.windows.set(key, w);
    }
    const cap = w.times.length;
    if (w.size === cap) {
      // The oldest of the last `cap` accepted requests is still inside the window: refuse.
      if (nowMs - (w.times[w.head] as number) < 1000) return true;
      w.times[w.head] = nowMs;
      w.head = (w.head + 1) % cap;
      return false;
    }
    w.times[(w.head + w.size) % cap] = nowMs;
    w.size++;
    return false;
  }

  /** Whether a request with this `task_id` is refused with 403 (see forbiddenTaskIds). */
  forbidsTask(taskId: string | undefined): boolean {
    return this.forbidden.size > 0 && taskId !== undefined && this.forbidden.has(Number(taskId));
  }

  decide(): Decision {
    if (!this.active) return NO_FAULT;
    const o = this.opts;
    let fate: Fate = OK;
    if (o.resetRate && this.rng.float() < o.resetRate) fate = { kind: 'reset' };
    else if (o.errorRate && this.rng.float() < o.errorRate)
      fate = { kind: 'error', status: ERROR_STATUSES[this.rng.int(0, 2)] as 500 | 502 | 503 };
    else if (o.malformedRate && this.rng.float() < o.malformedRate)
      fate = { kind: 'malformed', truncate: this.rng.chance(0.5) };
    let delay = o.latencyMs ?? 0;
    const jitter = o.latencyJitterMs ?? 0;
    if (jitter > 0) delay += (this.rng.float() * 2 - 1) * jitter;
    const slow = Boolean(o.slowRate && o.slowMs && this.rng.float() < o.slowRate);
    if (slow) delay += o.slowMs ?? 0;
    return { fate, delayMs: Math.max(0, delay), slow };
  }
}

/**
 * The members `unknownMembers` adds. Their names are not in the spec, so a client that keeps
 * payloads as JSON keeps them, and one that reads named fields never sees them.
 */
export const UNKNOWN_MEMBERS: Readonly<Record<string, unknown>> = Object.freeze({
  sim_extra_number: 3,
  sim_extra_null: null,
  sim_extra_nested: { level: 1, list: [1, 'two', null, { deep: true }], empty: {} },
});

/** A copy of a JSON value with UNKNOWN_MEMBERS added to every object in it, at any depth. */
export function withUnknownMembers(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withUnknownMembers);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = withUnknownMembers(v);
  // structuredClone: a client that mutates what it parsed cannot change the next response.
  return Object.assign(out, structuredClone(UNKNOWN_MEMBERS));
}
