/** The fingerprint of a listed item (canonical JSON, sha256) and the config switch. */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { jsonStringify, jsonText } from '../../src/json-text.ts';
import { canonicalJson, fingerprintOf } from '../../src/sync/fingerprint.ts';

describe('canonicalJson', () => {
  it.each([
    [{ b: 1, a: 2 }, '{"a":2,"b":1}'],
    [{ a: { d: [3, { f: 1, e: 2 }], c: null } }, '{"a":{"c":null,"d":[3,{"e":2,"f":1}]}}'],
    [{ a: undefined, b: 'x' }, '{"b":"x"}'],
    [[undefined, 1], '[null,1]'],
    ['é"', '"é\\""'],
    [null, 'null'],
  ])('%j -> %s', (value, text) => {
    expect(canonicalJson(value)).toBe(text);
  });
});

/** canonicalJson as every earlier version wrote it (recursive): the fingerprints stored by them. */
function recursiveCanonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value))
    return `[${value.map((v) => recursiveCanonicalJson(v === undefined ? null : v)).join(',')}]`;
  const members = Object.keys(value)
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${recursiveCanonicalJson((value as Record<string, unknown>)[k])}`);
  return `{${members.join(',')}}`;
}

/** A random JSON value (seeded): every kind of member, names and text that need escaping. */
function randomJson(seed: number): unknown {
  let s = seed;
  const next = () => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const texts = ['', 'a', 'é"\\', '品牌 🚀', '\u0000\ud800x', 'line\nbreak', '__proto__', 'Z', '10', 'b'];
  const scalars = [0, -0, 1.5, -3e-7, 1e21, 2 ** 53 + 2, true, false, null];
  const make = (depth: number): unknown => {
    const r = next();
    if (depth > 4 || r < 0.35)
      return r < 0.2
        ? texts[Math.floor(next() * texts.length)]
        : scalars[Math.floor(next() * scalars.length)];
    if (r < 0.6) return Array.from({ length: Math.floor(next() * 4) }, () => make(depth + 1));
    const o: Record<string, unknown> = {};
    for (let i = Math.floor(next() * 5); i > 0; i--) {
      const k = texts[Math.floor(next() * texts.length)]!;
      Object.defineProperty(o, k, {
        value: make(depth + 1),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return o;
  };
  return make(0);
}

/** `[[[...]]]` n levels deep, with `leaf` inside, built without recursion. */
function nested(n: number, leaf: unknown = 'bottom'): unknown {
  let v: unknown = [leaf];
  for (let i = 1; i < n; i++) v = [v];
  return v;
}

// An unknown member nested 4,000 arrays deep once failed its unit on every run.
describe('canonicalJson without recursion', () => {
  it('writes the text the recursive form wrote, for every kind of value', () => {
    for (let seed = 1; seed <= 500; seed++) {
      const v = randomJson(seed);
      expect(canonicalJson(v)).toBe(recursiveCanonicalJson(v));
      // And jsonText without sorting is JSON.stringify's text.
      expect(jsonText(v)).toBe(JSON.stringify(v));
    }
    const parsed = JSON.parse('{"__proto__":{"b":1,"a":[1,{"d":null,"c":"x"}]},"z":-0.0}') as unknown;
    expect(canonicalJson(parsed)).toBe(recursiveCanonicalJson(parsed));
  });

  it('fingerprints stored by earlier versions still match (pinned values)', () => {
    const item = {
      prompt_task_id: 9001,
      task_id: 77,
      answer: '品牌排名第一：华为 🚀 "quoted" \\ back\u0007',
      rank_details: [
        { brand: 'x', position: 1, extra: null },
        { position: '2', brand: 'y' },
      ],
      unknown: { z: [1, 2.5, -0, 1e21, true, false, null, { b: 'é', a: [] }], a: {} },
      screenshot_url: null,
    };
    // Computed with the recursive canonicalJson it replaced (stored fingerprints must not change).
    expect(fingerprintOf(item, { legacySources: true, executionTimes: true })).toBe(
      '205f60126933294d25a0730e0c00f1c608254da5c49d645c5275257d2e974e11',
    );
    expect(fingerprintOf(item, { legacySources: false, executionTimes: false })).toBe(
      '3c2f418d710d9a3ff94625a1371f7c2c4f3da095dc6b11663bcfe6f901185166',
    );
  });

  it('an unknown member nested 4,000 and 200,000 levels deep is fingerprinted, not a RangeError', () => {
    for (const depth of [4000, 200_000]) {
      const item = { prompt_task_id: 1, deep_unknown: nested(depth) };
      const text = canonicalJson(item);
      expect(text).toBe(
        `{"deep_unknown":${'['.repeat(depth)}"bottom"${']'.repeat(depth)},"prompt_task_id":1}`,
      );
      const changed = { prompt_task_id: 1, deep_unknown: nested(depth, 'other') };
      const reading = { legacySources: true, executionTimes: true };
      expect(fingerprintOf(changed, reading)).not.toBe(fingerprintOf(item, reading));
    }
    // Past JSON.stringify's own depth, warehouse values get the same text from the fallback.
    const deep = nested(200_000);
    expect(() => JSON.stringify(deep)).toThrow(RangeError);
    expect(jsonStringify(deep)).toBe(`${'['.repeat(200_000)}"bottom"${']'.repeat(200_000)}`);
  });
});

describe('fingerprintOf', () => {
  const reading = { legacySources: false, executionTimes: true };
  const item = {
    prompt_task_id: 1,
    answer: 'a',
    rank_details: [{ brand: 'x', position: 1 }],
    extra: { k: 1 },
  };
  it.each([
    [
      'member order',
      { extra: { k: 1 }, rank_details: [{ position: 1, brand: 'x' }], answer: 'a', prompt_task_id: 1 },
      true,
    ],
    ['another answer', { ...item, answer: 'b' }, false],
    ['an unknown member changed', { ...item, extra: { k: 2 } }, false],
    ['an unknown member added', { ...item, late: true }, false],
    ['a rank added', { ...item, rank_details: [...item.rank_details, { brand: 'y', position: 2 }] }, false],
  ])('%s: same fingerprint %s', (_name, other, same) => {
    expect(fingerprintOf(other, reading) === fingerprintOf(item, reading)).toBe(same);
    expect(fingerprintOf(item, reading)).toMatch(/^[0-9a-f]{64}$/);
  });

  it.each([
    ['legacy sources turned on', { ...reading, legacySources: true }],
    ['execution times turned off', { ...reading, executionTimes: false }],
  ])('the same item read another way (%s): another fingerprint', (_name, other) => {
    expect(fingerprintOf(item, other)).not.toBe(fingerprintOf(item, reading));
    expect(fingerprintOf(item, { ...other })).toBe(fingerprintOf(item, other));
  });
});

describe('changeDetection', () => {
  it.each([
    [{}, true],
    [{ GEO_CHANGE_DETECTION: 'off' }, false],
    [{ GEO_CHANGE_DETECTION: 'false' }, false],
    [{ GEO_CHANGE_DETECTION: 'on' }, true],
  ])('env %j -> %s', (env, on) => {
    expect(loadConfig({ env }).changeDetection).toBe(on);
  });
});
