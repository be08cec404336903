/**
 * One rule for every text and JSON value either warehouse stores
 * (src/load/text.ts): U+0000 dropped, a lone UTF-16 surrogate replaced by U+FFFD, every other
 * character kept; each value changed counted once.
 */
import { describe, expect, it } from 'vitest';
import { storedJson, storedRows, storedText } from '../../src/load/text.ts';
import { PRODUCT_CARDS, PROMPT_EXECUTIONS } from '../../src/load/tables.ts';
import type { Json } from '../../src/transform/rows.ts';
import { card, execution } from './fixtures.ts';

describe('storedText', () => {
  it.each([
    ['plain text', 'plain text'],
    ['', ''],
    ['a\0b', 'ab'],
    ['\0\0', ''],
    ['tab\tnewline\nbackslash\\', 'tab\tnewline\nbackslash\\'],
    ['emoji 😀 kept', 'emoji 😀 kept'],
    ['中文\0品牌', '中文品牌'],
    ['truncated \ud83d', 'truncated \ufffd'],
    ['\ude00 low first', '\ufffd low first'],
    ['reversed \ude00\ud83d', 'reversed \ufffd\ufffd'],
    ['both \0\ud83d', 'both \ufffd'],
    ['the escape \\u0000 as text', 'the escape \\u0000 as text'],
  ])('%j -> %j', (input, output) => {
    expect(storedText(input)).toBe(output);
  });

  it('returns the same string when nothing changes', () => {
    const s = 'unchanged 😀';
    expect(storedText(s)).toBe(s);
  });
});

describe('storedJson', () => {
  it.each<[Json, Json]>([
    [null, null],
    [1.5, 1.5],
    [true, true],
    ['x\0', 'x'],
    [
      ['a\0', ['\ud800'], 3],
      ['a', ['\ufffd'], 3],
    ],
    [
      { 'ke\0y': 'v\0', nested: { deep: ['\0'] } },
      { key: 'v', nested: { deep: [''] } },
    ],
  ])('%j -> %j', (input, output) => {
    expect(storedJson(input)).toEqual(output);
  });

  it('keeps a member the rule names __proto__ as a member, as JSON.parse does', () => {
    const input = JSON.parse('{"__proto__\\u0000": {"x": 1}, "y": "\\u0000"}') as Json;
    const out = storedJson(input) as Record<string, Json>;
    expect(Object.keys(out)).toEqual(['y', '__proto__']);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(JSON.stringify(out)).toBe('{"y":"","__proto__":{"x":1}}');
    expect(out).toEqual(JSON.parse('{"__proto__": {"x": 1}, "y": ""}'));
  });

  it('a member the rule renames onto the name of another keeps that other one', () => {
    for (const text of ['{"a": 2, "a\\u0000": 1}', '{"a\\u0000": 1, "a": 2}']) {
      expect(storedJson(JSON.parse(text) as Json)).toEqual({ a: 2 });
    }
  });

  it('returns the same value when nothing changes (no copy)', () => {
    const v: Json = { a: ['b', { c: 'd' }], e: 1 };
    expect(storedJson(v)).toBe(v);
  });

  it('copies only the containers on the way to a change; the others stay the same objects', () => {
    const kept: Json = { c: ['d'] };
    const v: Json = { a: ['b\0', kept], e: { f: 1 } };
    const out = storedJson(v) as { a: Json[]; e: Json };
    expect(out).toEqual({ a: ['b', { c: ['d'] }], e: { f: 1 } });
    expect(out).not.toBe(v);
    expect(out.a[1]).toBe(kept);
    expect(out.e).toBe((v as { e: Json }).e);
  });

  // An unknown member thousands of levels deep must not blow the stack.
  it('walks a value 200,000 levels deep, changing what the rule changes at the bottom', () => {
    const depth = 200_000;
    let v: Json = { 'k\0': 'v\0' };
    for (let i = 0; i < depth; i++) v = [v];
    const out = storedJson(v);
    let inner: Json = out;
    for (let i = 0; i < depth; i++) inner = (inner as Json[])[0]!;
    expect(inner).toEqual({ k: 'v' });
    let same: Json = 'plain';
    for (let i = 0; i < depth; i++) same = { a: same };
    expect(storedJson(same)).toBe(same);
  });
});

describe('storedRows', () => {
  it('changes text and JSON columns only and counts each value changed once', () => {
    const clean = execution(1);
    const dirty = execution(2, { answer: 'an\0swer', think: 'cut \ud83d', prompt_name: 'q\0' });
    const { rows, changed } = storedRows(PROMPT_EXECUTIONS, [clean, dirty]);
    expect(changed).toBe(3);
    expect(rows[0]).toBe(clean);
    expect(rows[1]).toEqual({ ...dirty, answer: 'answer', think: 'cut \ufffd', prompt_name: 'q' });
    // The caller's row is not modified.
    expect(dirty.answer).toBe('an\0swer');
  });

  it('a JSON value with several members changed counts once', () => {
    const c = card(1, 1, { card: { name: 'p\0', shop: '\0s', list: ['\0'] }, product_name: 'p\0' });
    const { rows, changed } = storedRows(PRODUCT_CARDS, [c]);
    expect(changed).toBe(2);
    expect(rows[0]).toMatchObject({ card: { name: 'p', shop: 's', list: [''] }, product_name: 'p' });
  });

  it('rows without anything to change come back as the same array', () => {
    const input = [execution(1), execution(2)];
    const out = storedRows(PROMPT_EXECUTIONS, input);
    expect(out).toEqual({ rows: input, changed: 0 });
    expect(out.rows).toBe(input);
  });
});
