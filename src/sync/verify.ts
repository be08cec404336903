/**
 * `geo-sync verify` (issue 21): re-reads the children of stored executions from the API and
 * compares them, field by field, with the rows the warehouse holds. Change detection assumes a
 * child changes only together with its listed item; a difference found here is a child that
 * changed behind an unchanged item (or any other drift), and `--reread` repairs it.
 */
import { fetchChildren, type BundleOptions, type ExecutionChildren } from '../extract/execution.ts';
import type { ApiPort } from '../extract/port.ts';
import {
  EXECUTION_PRODUCTS,
  EXECUTION_SCREENSHOTS,
  EXECUTION_SOURCES,
  PRODUCT_CARDS,
} from '../load/tables.ts';
import type { VerifiedTable, Warehouse } from '../load/warehouse.ts';
import { storedJson, storedText } from '../load/text.ts';
import type { Json } from '../transform/rows.ts';
import { childRows } from './batch.ts';
import { executionTimes } from '../transform/executions.ts';
import { isFatal, isForbidden } from './unit.ts';
import { canonicalJson } from './fingerprint.ts';

export interface Difference {
  prompt_task_id: number;
  table: VerifiedTable;
  /** The row's key, e.g. `source_id=12`. */
  key: string;
  /** The column, or `(row)` when the row exists on one side only. */
  column: string;
  stored: unknown;
  api: unknown;
}

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

type Row = Record<string, unknown>;

interface TableShape {
  table: VerifiedTable;
  key: readonly string[];
  columns: readonly { name: string; kind: string }[];
}

const shape = (spec: {
  table: string;
  key: readonly string[];
  columns: readonly { name: string; kind: string }[];
}): TableShape => ({ table: spec.table as VerifiedTable, key: spec.key, columns: spec.columns });

/** Only the times of prompt_executions come from an execution's own endpoint (legacy task/detail). */
const TIMES: TableShape = {
  table: 'prompt_executions',
  key: ['prompt_task_id'],
  columns: [
    { name: 'created_at', kind: 'timestamptz' },
    { name: 'updated_at', kind: 'timestamptz' },
  ],
};

/** One form for a value as stored and as transformed from the API, by column kind. */
function comparable(kind: string, v: unknown): string | null {
  if (v === null || v === undefined) return null;
  switch (kind) {
    case 'timestamptz': {
      const t = Date.parse(String(v));
      return Number.isNaN(t) ? String(v) : String(t);
    }
    case 'bigint':
    case 'integer':
    case 'double':
    case 'money':
      return String(Number(v));
    case 'boolean':
      return String(Boolean(v));
    // Both sides as the warehouse stores them (the text rule, load/text.ts): an API value holding
    // U+0000 or a lone surrogate is stored changed, and that is not drift.
    // Both warehouses read JSON columns back parsed: a string here is a JSON string value.
    case 'json':
      return canonicalJson(storedJson(v as Json));
    default:
      return storedText(String(v));
  }
}

function keyOf(t: TableShape, r: Row): string {
  return t.key.map((k) => `${k}=${String(comparable('bigint', r[k]))}`).join(',');
}

export function compareRows(
  t: TableShape,
  id: number,
  stored: readonly Row[],
  api: readonly Row[],
): Difference[] {
  const out: Difference[] = [];
  const s = new Map(stored.map((r) => [keyOf(t, r), r]));
  const a = new Map(api.map((r) => [keyOf(t, r), r]));
  for (const key of [...new Set([...s.keys(), ...a.keys()])].sort()) {
    const sr = s.get(key);
    const ar = a.get(key);
    if (!sr || !ar) {
      out.push({
        prompt_task_id: id,
        table: t.table,
        key,
        column: '(row)',
        stored: sr ? 'present' : 'absent',
        api: ar ? 'present' : 'absent',
      });
      continue;
    }
    for (const c of t.columns) {
      if (t.key.includes(c.name)) continue;
      if (comparable(c.kind, sr[c.name]) !== comparable(c.kind, ar[c.name]))
        out.push({
          prompt_task_id: id,
          table: t.table,
          key,
          column: c.name,
          stored: sr[c.name] ?? null,
          api: ar[c.name] ?? null,
        });
    }
  }
  return out;
}

/** The rows the warehouse would hold for these children (as the sync's batch writes them). */
function apiRows(id: number, c: ExecutionChildren): Record<VerifiedTable, Row[]> {
  const rows = childRows(id, c);
  return {
    prompt_executions: c.detail ? [{ prompt_task_id: id, ...executionTimes(c.detail) }] : [],
    execution_sources: rows.sources as unknown as Row[],
    execution_screenshots: rows.screenshots as unknown as Row[],
    execution_products: rows.products as unknown as Row[],
    product_cards: rows.cards as unknown as Row[],
  };
}

/** Which child each table's rows come from, to leave out what could not be read. */
const CHILD_OF: Record<VerifiedTable, string> = {
  prompt_executions: 'detail',
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
  const tables: TableShape[] = [
    ...(opts.executionTimes ? [TIMES] : []),
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
  const children = await Promise.allSettled(sample.map((s) => fetchChildren(api, s, opts)));
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
    const fromApi = apiRows(id, c);
    for (const t of tables) {
      if (unread.has(CHILD_OF[t.table])) continue;
      const mine = stored.get(t.table)?.get(id) ?? [];
      result.differences.push(...compareRows(t, id, mine, fromApi[t.table]));
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
