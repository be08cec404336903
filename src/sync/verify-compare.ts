/**
 * `verify`'s comparison of stored rows with the rows the API's answers give, field by field, as
 * the warehouse stores values (the text rule, load/text.ts; JSON read back parsed).
 */
import type { VerifiedTable } from '../load/warehouse.ts';
import { storedJson, storedText } from '../load/text.ts';
import type { Json } from '../transform/rows.ts';
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

export type Row = Record<string, unknown>;

export interface TableShape {
  table: VerifiedTable;
  key: readonly string[];
  columns: readonly { name: string; kind: string }[];
}

export const shape = (spec: {
  table: string;
  key: readonly string[];
  columns: readonly { name: string; kind: string }[];
}): TableShape => ({ table: spec.table as VerifiedTable, key: spec.key, columns: spec.columns });

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
    // Both drivers read a DATE back as its YYYY-MM-DD text, as the API sends it.
    case 'date':
      return String(v).slice(0, 10);
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
