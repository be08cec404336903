/**
 * Deterministic randomness with no state. Every entity of the simulated world is generated from
 * (seed, its IDs) through `hash32`, so any execution, source or card can be rebuilt from its ID
 * alone, in any order, by any request: nothing big is ever precomputed or stored.
 * `Rng` is a small sequence generator (sfc32) seeded from such a hash, for entities that need
 * several draws (an answer text, a list of sources).
 */

/** Finalizer of murmur3: spreads every input bit over the 32 output bits. */
function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * Hash of a few integers (any safe integer: the high part is folded in, since IDs exceed 2^32).
 * Order matters: hash32(1, 2) !== hash32(2, 1).
 */
export function hash32(...parts: number[]): number {
  let h = 0x2f6b9d1c;
  for (const p of parts) {
    const lo = p >>> 0;
    const hi = Math.floor(p / 4294967296) >>> 0;
    h = fmix32((h ^ lo) + 0x9e3779b9);
    h = fmix32((h ^ hi) + 0x7f4a7c15);
  }
  return h;
}

/** Two-argument fast path for hot loops (dayTotals walks 100k executions). */
export function hash2(a: number, b: number): number {
  return fmix32(Math.imul(a ^ 0x27d4eb2f, 0x165667b1) + fmix32(b + 0x9e3779b9));
}

/** Derive the n-th independent 32-bit value from one hash (cheap, no allocation). */
export function derive(h: number, n: number): number {
  return fmix32(h + Math.imul(n + 1, 0x9e3779b9));
}

/** A hash -> uniform float in [0, 1). */
export function unit(h: number): number {
  return h / 4294967296;
}

/** Stable numeric tag of a string (used to name hash "streams" such as 'sources'). */
export function tag(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** sfc32: tiny, fast, good enough for text and list generation. */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    this.a = 0x9e3779b9;
    this.b = 0x243f6a88;
    this.c = 0xb7e15162;
    this.d = seed >>> 0;
    for (let i = 0; i < 12; i++) this.next();
  }

  /** Seeded from (seed, ids): the same ids always give the same sequence. */
  static of(...parts: number[]): Rng {
    return new Rng(hash32(...parts));
  }

  /** Next 32-bit unsigned value. */
  next(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform float in [0, 1). */
  float(): number {
    return this.next() / 4294967296;
  }

  /** Integer in [min, max], both inclusive. */
  int(min: number, max: number): number {
    return min + Math.floor(this.float() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.float() < p;
  }

  pick<T>(items: readonly T[]): T {
    const x = items[Math.floor(this.float() * items.length)];
    if (x === undefined) throw new RangeError('pick from an empty list');
    return x;
  }

  /** `n` distinct items in random order (partial Fisher-Yates on a copy). */
  sample<T>(items: readonly T[], n: number): T[] {
    const copy = items.slice();
    const m = Math.min(n, copy.length);
    for (let i = 0; i < m; i++) {
      const j = i + Math.floor(this.float() * (copy.length - i));
      const t = copy[i] as T;
      copy[i] = copy[j] as T;
      copy[j] = t;
    }
    return copy.slice(0, m);
  }

  /** Lowercase hex string of `len` characters. */
  hex(len: number): string {
    let s = '';
    while (s.length < len) s += this.next().toString(16).padStart(8, '0');
    return s.slice(0, len);
  }
}
