/**
 * verify's comparison: a value as the API sends it and as the warehouse stores it are equal when
 * only the text rule (load/text.ts: U+0000 dropped, lone surrogates as U+FFFD) tells them apart;
 * any other change is a difference.
 */
import { describe, expect, it } from 'vitest';
import { compareRows, formatVerify, verifyPassed, type VerifyResult } from '../../src/sync/verify.ts';

const sources = {
  table: 'execution_sources' as const,
  key: ['source_id'],
  columns: [
    { name: 'source_id', kind: 'bigint' },
    { name: 'title', kind: 'text' },
    { name: 'raw', kind: 'json' },
  ],
};

describe('verify: compareRows', () => {
  it.each([
    ['U+0000 dropped', 'a\u0000b', 'ab', { k: 'x\u0000' }, { k: 'x' }, 0],
    ['a lone surrogate stored as U+FFFD', 'cut \ud83d', 'cut \ufffd', { k: 1 }, { k: 1 }, 0],
    ['a changed title', 'old', 'new', { k: 1 }, { k: 1 }, 1],
    ['a changed JSON member', 't', 't', { k: 1 }, { k: 2 }, 1],
    // A JSON column holding a JSON string (both warehouses read JSON back parsed): compared as
    // the string it is, neither parsed (it used to throw) nor equal to the array it spells.
    ['a JSON string value', 't', 't', 'name,price', 'name,price', 0],
    ['a JSON string spelling an array', 't', 't', [1, 2], '[1,2]', 1],
  ])('%s', (_, apiTitle, storedTitle, apiRaw, storedRaw, differences) => {
    const stored = [{ source_id: 1, title: storedTitle, raw: storedRaw }];
    const api = [{ source_id: 1, title: apiTitle, raw: apiRaw }];
    expect(compareRows(sources, 7, stored, api)).toHaveLength(differences);
  });
});

describe('verify: what passes', () => {
  const result = (r: Partial<VerifyResult>): VerifyResult => ({
    sampled: 3,
    differences: [],
    goneUpstream: [],
    unread: [],
    failed: [],
    ...r,
  });
  it.each([
    ['three compared, no difference', result({}), true, 'verified 3 of 3 sampled'],
    ['nothing sampled', result({ sampled: 0 }), false, 'nothing verified: no stored execution'],
    [
      'every sampled one deleted upstream',
      result({ goneUpstream: [1, 2, 3] }),
      false,
      'verified 0 of 3 sampled',
    ],
    [
      'one not read',
      result({ failed: [{ prompt_task_id: 1, error: '503' }] }),
      false,
      'verified 2 of 3 sampled',
    ],
  ])('%s', (_, r, passed, line) => {
    expect(verifyPassed(r)).toBe(passed);
    expect(formatVerify(r)).toContain(line);
  });
});
