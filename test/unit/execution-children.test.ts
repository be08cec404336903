/**
 * fetchChildren's account of what it read: a child list is partial when fewer distinct items came
 * than its total says (an item quarantined, or a list that shifted between pages and repeated one
 * item where it skipped another), complete otherwise.
 */
import { describe, expect, it } from 'vitest';
import { fetchChildren } from '../../src/extract/execution.ts';
import type { ApiPort } from '../../src/extract/port.ts';

const src = (source_id: number) => ({ source_id }) as never;

function port(sources: { items: unknown[]; total: number | null }): ApiPort {
  return {
    sources: async () => sources,
    products: async () => ({ cards: [], total: 0 }),
    screenshot: async () => ({ screenshot_url: '' }),
  } as unknown as ApiPort;
}

describe('fetchChildren: partial lists', () => {
  it.each([
    ['every item read', [1, 2, 3], 3, []],
    ['one item quarantined', [1, 3], 3, ['sources']],
    ['shifted between pages: 2 repeated, 3 skipped', [1, 2, 2], 3, ['sources']],
    ['no total given', [1, 2], null, []],
  ])('%s', async (_, ids, total, partial) => {
    const c = await fetchChildren(
      port({ items: ids.map(src), total }),
      { prompt_task_id: 7, screenshot_url: null },
      { legacySources: false, executionTimes: false },
    );
    expect(c.partial).toEqual(partial);
  });
});
