/** Issue 21: the fingerprint of a listed item (canonical JSON, sha256) and the config switch. */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
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
