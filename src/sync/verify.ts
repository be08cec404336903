/**
 * `geo-sync verify`: re-reads stored executions from the API (their own endpoints and
 * their children) and compares them, field by field, with the rows the warehouse holds in every
 * table built from an execution. Change detection assumes a child changes only together with its
 * listed item; a difference found here is a child that changed behind an unchanged item (or any
 * other drift, as rows two copies of one execution were merged into), and `--reread` repairs it.
 */
import { isGeoApiError } from '../api/errors.ts';
import type { PromptResultItem } from '../api/schemas/hierarchical.ts';
import { fetchChildren, type BundleOptions, type ExecutionChildren } from '../extract/execution.ts';
import type { ApiPort } from '../extract/port.ts';
import {
  EXECUTION_PRODUCTS,
  EXECUTION_RANKS,
  EXECUTION_SCREENSHOTS,
  EXECUTION_SOURCES,
  PRODUCT_CARDS,
  PROMPT_EXECUTIONS,
  PROMPT_EXECUTIONS_BUT_TIMES,
} from '../load/tables.ts';
import type { VerifiedTable, Warehouse } from '../load/warehouse.ts';
import { toExecutionRow, toRankRows } from '../transform/executions.ts';
import { childRows } from './batch.ts';
import { isFatal, isForbidden } from './unit.ts';
import { canonicalJson } from './fingerprint.ts';
import { compareRows, shape, type Difference, type Row, type TableShape } from './verify-compare.ts';

export { compareRows, type Difference } from './verify-compare.ts';

export interface VerifyResult {
  sampled: number;
  differences: Difference[];
  /** Executions that answer 404 on every own endpoint: deleted upstream since they were stored. */
  goneUpstream: number[];
  /** Children that could not be read (404 or invalid): not compared. */
  unread: { prompt_task_id: number; child: string }[];
  /** Executions whose reading failed after retries (5xx, timeouts, 403): not compared. */
  failed: { prompt_task_id: number; error: string }[];
}

/** prompt_executions' columns: all of them, or all but the times (legacy task/detail) when not read. */
const executionShape = (times: boolean) => shape(times ? PROMPT_EXECUTIONS : PROMPT_EXECUTIONS_BUT_TIMES);

/**
 * What the execution's own endpoints say of its listed item: prompt/detail (the 2.4 fields) and
 * prompt/result (the 2.5 fields, rank_details). A 404 or a permanent mismatch is reported as not
 * read (the execution's other tables are still compared); anything else fails the execution.
 */
async function fetchOwn(api: ApiPort, id: number): Promise<PromptResultItem | { unread: string }> {
  try {
    const [detail, result] = await Promise.all([api.promptDetail(id), api.promptResult(id)]);
    return { ...detail, ...result };
  } catch (e) {
    if (isGeoApiError(e) && (e.code === 'NOT_FOUND' || (e.code === 'INVALID_RESPONSE' && !e.retryable)))
      return { unread: e.code === 'NOT_FOUND' ? 'not found' : 'invalid' };
    throw e;
  }
}

/** The rows the warehouse would hold for this execution (as the sync's batch writes them). */
function apiRows(
  id: number,
  c: ExecutionChildren,
  own: PromptResultItem | null,
): Record<VerifiedTable, Row[]> {
  const rows = childRows(id, c);
  return {
    prompt_executions: own ? [toExecutionRow(own, c.detail) as unknown as Row] : [],
    execution_ranks: own ? (toRankRows(id, own.rank_details) as unknown as Row[]) : [],
    execution_sources: rows.sources as unknown as Row[],
    execution_screenshots: rows.screenshots as unknown as Row[],
    execution_products: rows.products as unknown as Row[],
    product_cards: rows.cards as unknown as Row[],
  };
}

/**
 * Which read each table's rows come from, to leave out what could not be read: the execution's
 * own endpoints (prompt/detail, prompt/result) or one of its children.
 */
const CHILD_OF: Record<VerifiedTable, string> = {
  prompt_executions: 'execution',
  execution_ranks: 'execution',
  execution_sources: 'sources',
  execution_screenshots: 'screenshot',
  execution_products: 'products',
  product_cards: 'products',
};

export async function verifyExecutions(
  api: ApiPort,
  warehouse: Warehouse,
  opts: BundleOptions & { sample: number; range?: { from: string; to: string } },
): Promise<VerifyResult> {
  const sample = await warehouse.sampleExecutions(opts.sample, opts.range);
  const ids = sample.map((s) => s.prompt_task_id);
  // Every table built from an execution. Its times only with the enrichment that reads them.
  const tables: TableShape[] = [
    executionShape(opts.executionTimes),
    shape(EXECUTION_RANKS),
    shape(EXECUTION_SOURCES),
    shape(EXECUTION_SCREENSHOTS),
    shape(EXECUTION_PRODUCTS),
    shape(PRODUCT_CARDS),
  ];
  // Each table's stored rows by execution, grouped once.
  const stored = new Map<VerifiedTable, Map<number, Row[]>>();
  for (const t of tables) {
    const byExecution = new Map<number, Row[]>();
    for (const r of await warehouse.executionRows(t.table, ids)) {
      const id = Number(r.prompt_task_id);
      const list = byExecution.get(id);
      if (list) list.push(r);
      else byExecution.set(id, [r]);
    }
    stored.set(t.table, byExecution);
  }
  const result: VerifyResult = {
    sampled: ids.length,
    differences: [],
    goneUpstream: [],
    unread: [],
    failed: [],
  };
  // One execution that cannot be read (after the client's retries) costs only itself; a key that
  // is refused stops verify as it stops a run (a 401; a 403 when auth/user refuses it too).
  const children = await Promise.allSettled(
    sample.map(async (s) => {
      const [c, own] = await Promise.all([fetchChildren(api, s, opts), fetchOwn(api, s.prompt_task_id)]);
      return { ...c, own };
    }),
  );
  const rejected = children.flatMap((c) => (c.status === 'rejected' ? [c.reason as unknown] : []));
  const fatal = rejected.find(isFatal);
  if (fatal !== undefined) throw fatal;
  if (rejected.some(isForbidden)) await api.checkKey();
  sample.forEach((s, i) => {
    const id = s.prompt_task_id;
    const settled = children[i]!;
    if (settled.status === 'rejected') {
      const e = settled.reason as unknown;
      result.failed.push({ prompt_task_id: id, error: e instanceof Error ? e.message : String(e) });
      return;
    }
    const c = settled.value;
    if (c.goneUpstream) {
      result.goneUpstream.push(id);
      return;
    }
    // Children not read, or read incompletely (an item quarantined, a list that shifted between
    // pages): what was read is no account of what is stored, so they are not compared.
    const table = (child: string) => (child === 'legacySources' ? 'sources' : child);
    const unread = new Set<string>([...c.unread.map((u) => table(u.child)), ...c.partial.map(table)]);
    for (const u of c.unread) result.unread.push({ prompt_task_id: id, child: u.child });
    for (const p of c.partial) result.unread.push({ prompt_task_id: id, child: `${p} (read incompletely)` });
    const own = 'unread' in c.own ? null : c.own;
    if (!own) {
      unread.add('execution');
      result.unread.push({
        prompt_task_id: id,
        child: `prompt/detail or prompt/result (${(c.own as { unread: string }).unread})`,
      });
    }
    const fromApi = apiRows(id, c, own);
    for (const t of tables) {
      if (unread.has(CHILD_OF[t.table])) continue;
      // Times not read this time (legacy task/detail): the execution's other columns still are.
      const compared = t.table === 'prompt_executions' && unread.has('detail') ? executionShape(false) : t;
      const mine = stored.get(t.table)?.get(id) ?? [];
      result.differences.push(...compareRows(compared, id, mine, fromApi[t.table]));
    }
  });
  return result;
}

const show = (v: unknown) => (typeof v === 'string' ? JSON.stringify(v) : canonicalJson(v ?? null));

export function formatVerify(r: VerifyResult): string {
  const lines: string[] = [];
  for (const d of r.differences)
    lines.push(
      `difference: execution ${d.prompt_task_id} ${d.table} ${d.key} ${d.column}: stored ${show(d.stored)} vs API ${show(d.api)}`,
    );
  for (const id of r.goneUpstream)
    lines.push(
      `execution ${id}: deleted upstream since it was stored (not a difference; the next run of its day removes it)`,
    );
  for (const u of r.unread)
    lines.push(`execution ${u.prompt_task_id}: ${u.child} could not be read, not compared`);
  for (const f of r.failed)
    lines.push(`execution ${f.prompt_task_id}: could not be read (${f.error}), not compared`);
  const compared = comparedCount(r);
  if (compared === 0)
    lines.push(
      r.sampled === 0
        ? 'nothing verified: no stored execution (with its children read completely) in the range'
        : 'nothing verified: no sampled execution could be compared',
    );
  const executions = new Set(r.differences.map((d) => d.prompt_task_id)).size;
  lines.push(
    `verified ${compared} of ${r.sampled} sampled stored executions: ${r.differences.length} differences in ${executions} executions, ${r.goneUpstream.length} deleted upstream` +
      (r.failed.length ? `, ${r.failed.length} not read` : '') +
      (r.differences.length
        ? '; `geo-sync sync --reread` (or backfill --reread) for their days repairs them'
        : ''),
  );
  return lines.join('\n');
}

/** Sampled executions that were read and compared (not deleted upstream, not failed). */
function comparedCount(r: VerifyResult): number {
  return r.sampled - r.goneUpstream.length - r.failed.length;
}

/** Whether verify vouches for the warehouse: something compared, nothing differs, nothing failed. */
export function verifyPassed(r: VerifyResult): boolean {
  return comparedCount(r) > 0 && r.differences.length === 0 && r.failed.length === 0;
}
