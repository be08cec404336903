/**
 * An execution listed twice by its unit (offset paging that shifted while its
 * answer was saved again) is kept as ONE copy, whole: the one listed last. The earlier copy's
 * rows, kept children, merged sources and fingerprint never reach the warehouse beside the later
 * copy's, whether both copies meet in one unit's batch (addToBatch) or in one group-commit
 * transaction (merged). Across transactions the later write replaces the execution's children.
 */
import { describe, expect, it } from 'vitest';
import type { PromptResultItem } from '../../src/api/schemas/hierarchical.ts';
import type { ExecutionBundle } from '../../src/extract/execution.ts';
import { emptyProducts } from '../../src/extract/port.ts';
import { prepareBatch } from '../../src/load/batch.ts';
import { addToBatch, emptyBatch } from '../../src/sync/batch.ts';
import { merged } from '../../src/sync/writer.ts';

const rank = (brand: string, position: number) => ({
  brand,
  brand_short: brand,
  position,
  visibility: 50,
  score: 60,
});

/** The execution as listed: `ranks` brands, its answer, and one source. */
function bundle(
  id: number,
  answer: string,
  ranks: number,
  o: Partial<ExecutionBundle> = {},
): ExecutionBundle {
  const item = {
    customer_id: 1,
    project_id: 2,
    task_id: 3,
    prompt_task_id: id,
    prompt_name: 'q',
    date_time: '2026-11-20',
    hours: 9,
    status: 2,
    model: 'm',
    engine: 'e',
    brand_exposure: '1',
    screenshot_url: null,
    result_status: 'available',
    answer,
    think: null,
    rank_exposure: '1',
    rank_exposure_number: String(ranks),
    rank_details: ['A', 'B', 'C', 'D'].slice(0, ranks).map((b, i) => rank(b, i + 1)),
  } as PromptResultItem;
  const source = (sid: number) => ({
    customer_id: 1,
    project_id: 2,
    task_id: 3,
    prompt_task_id: id,
    source_id: sid,
    url: 'u',
    title: 't',
    domain: 'd',
    cite_index: '1',
    snippet: 's',
    upstream_task_id: 'x',
  });
  return {
    item,
    sources: [source(id * 10 + ranks)],
    legacySources: null,
    products: emptyProducts(),
    screenshot: null,
    detail: null,
    unread: [],
    partial: [],
    goneUpstream: false,
    ...o,
  };
}

/** What the warehouse would be given for execution 7 (after prepareBatch's per-key de-duplication). */
function written(batch: ReturnType<typeof emptyBatch>) {
  const p = prepareBatch(batch);
  const of7 = <R extends { prompt_task_id: number }>(rows: readonly R[]) =>
    rows.filter((r) => r.prompt_task_id === 7);
  return {
    answers: of7(p.executions).map((e) => e.answer),
    ranks: of7(p.ranks).map((r) => `${r.ordinal}:${r.brand}`),
    sources: of7(p.sources).map((s) => s.source_id),
    fingerprints: of7(p.fingerprints).map((f) => `${f.fingerprint}:${f.children_complete}`),
    kept: of7(p.kept),
    replacedSources: p.replaced.sources.filter((id) => id === 7),
  };
}

const later = {
  answers: ['saved again'],
  ranks: ['0:A', '1:B'],
  sources: [72],
  fingerprints: ['new:true'],
  kept: [],
  replacedSources: [7],
};

describe('an execution listed twice is written as its last copy, whole', () => {
  it('in one batch: the earlier copy leaves the batch before the later one joins', () => {
    const b = emptyBatch();
    addToBatch(b, bundle(8, 'other', 1), 'other');
    // The earlier copy had a third rank item, a child it could not read, and sources read short.
    addToBatch(
      b,
      bundle(7, 'first answer', 3, {
        unread: [{ child: 'screenshot', kind: 'not_found', error: new Error('404') as never }],
        partial: ['sources'],
      }),
      'old',
    );
    addToBatch(b, bundle(7, 'saved again', 2), 'new');
    expect(b.executions.map((e) => e.prompt_task_id)).toEqual([8, 7]);
    expect(written(b)).toEqual(later);
    // The other execution is untouched.
    expect(b.ranks.filter((r) => r.prompt_task_id === 8)).toHaveLength(1);
    expect(b.fingerprints!.map((f) => f.prompt_task_id)).toEqual([8, 7]);
  });

  it('in one transaction of several parts: the later part wins whole', () => {
    const first = emptyBatch();
    addToBatch(first, bundle(7, 'first answer', 3, { partial: ['sources'] }), 'old');
    addToBatch(first, bundle(9, 'stays', 1), 'nine');
    const second = emptyBatch();
    addToBatch(second, bundle(7, 'saved again', 2), 'new');
    const m = merged([{ batch: first }, { batch: second }]);
    expect(m.executions.map((e) => e.prompt_task_id)).toEqual([9, 7]);
    expect(m.sourcesMerged ?? []).toEqual([]);
    expect(written(m)).toEqual(later);
    expect(m.ranks.filter((r) => r.prompt_task_id === 9)).toHaveLength(1);
  });

  it('before the fix, de-duplicating by key merged the copies: the earlier extra rank row stayed', () => {
    // What the batch held when two copies were simply appended (the cause): prepareBatch keeps
    // the last row per (execution, ordinal), so ordinal 2 of the earlier copy survives.
    const b = emptyBatch();
    const appendOnly = (x: ExecutionBundle, f: string) => {
      const one = emptyBatch();
      addToBatch(one, x, f);
      for (const [k, list] of Object.entries(one))
        (b as unknown as Record<string, unknown[]>)[k]!.push(...(list ?? []));
    };
    b.fingerprints = [];
    b.kept = [];
    b.sourcesMerged = [];
    appendOnly(bundle(7, 'first answer', 3), 'old');
    appendOnly(bundle(7, 'saved again', 2), 'new');
    expect(written(b).ranks).toEqual(['0:A', '1:B', '2:C']);
    expect(written(b).answers).toEqual(['saved again']);
  });
});
