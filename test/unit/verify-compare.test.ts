/**
 * verify's comparison: a value as the API sends it and as the warehouse stores it are equal when
 * only the text rule (load/text.ts: U+0000 dropped, lone surrogates as U+FFFD) tells them apart;
 * any other change is a difference.
 */
import { describe, expect, it } from 'vitest';
import { compareRows } from '../../src/sync/verify.ts';

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
  ])('%s', (_, apiTitle, storedTitle, apiRaw, storedRaw, differences) => {
    const stored = [{ source_id: 1, title: storedTitle, raw: storedRaw }];
    const api = [{ source_id: 1, title: apiTitle, raw: apiRaw }];
    expect(compareRows(sources, 7, stored, api)).toHaveLength(differences);
  });
});
