/**
 * One rule for every text and JSON value either warehouse stores, so a sync stores (and exports)
 * the same values on PostgreSQL and DuckDB:
 *
 * - U+0000 is dropped. PostgreSQL's TEXT cannot hold it nor its JSONB the `\u0000` escape;
 *   DuckDB can, so without the rule the same answer differed between the two.
 * - A lone UTF-16 surrogate (half of an emoji cut by a truncation) becomes U+FFFD, as UTF-8,
 *   which both warehouses store, can only spell it.
 *
 * Applied by the warehouse core (core/) to every row of a text or JSON column before any
 * dialect sees it (JSON member names too); each value changed is counted once, and the count
 * reaches the run summary and `geo.sync_runs.text_values_changed`.
 */
import type { Json } from '../transform/rows.ts';
import type { TableSpec } from './tables.ts';

/** Anything the rule may change: U+0000 or a surrogate code unit (paired ones are kept). */
const SUSPECT = /[\0\uD800-\uDFFF]/;
const CHANGE = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** `s` as stored: U+0000 dropped, lone surrogates as U+FFFD; `s` itself when nothing changes. */
export function storedText(s: string): string {
  if (!SUSPECT.test(s)) return s;
  return s.replace(CHANGE, (c) => (c === '\0' ? '' : '\uFFFD'));
}

/** A JSON value as stored: the rule applied to every string and member name; `v` itself when nothing changes. */
export function storedJson(v: Json): Json {
  if (typeof v === 'string') return storedText(v);
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) {
    let out: Json[] | null = null;
    for (let i = 0; i < v.length; i++) {
      const item = v[i] as Json;
      const s = storedJson(item);
      if (s !== item) (out ??= v.slice())[i] = s;
    }
    return out ?? v;
  }
  let out: Record<string, Json> | null = null;
  const obj = v as Record<string, Json>;
  for (const key of Object.keys(obj)) {
    const item = obj[key] as Json;
    const k = storedText(key);
    const s = storedJson(item);
    if (k === key && s === item) continue;
    out ??= { ...obj };
    if (k !== key) {
      delete out[key];
      // The name the rule gives it is taken by a member of its own: that one stays.
      if (Object.hasOwn(obj, k)) continue;
    }
    // Defined, not assigned: a member the rule names `__proto__` stays a member (as JSON.parse
    // makes it), where an assignment would set the copy's prototype and lose it.
    Object.defineProperty(out, k, { value: s, writable: true, enumerable: true, configurable: true });
  }
  return out ?? v;
}

/** The spec's text and JSON columns (the only ones the rule touches), computed once per spec. */
const textColumns = new WeakMap<object, { text: string[]; json: string[] }>();

function columnsOf<R>(spec: TableSpec<R>): { text: string[]; json: string[] } {
  let cols = textColumns.get(spec);
  if (!cols) {
    cols = {
      text: spec.columns.filter((c) => c.kind === 'text').map((c) => c.name),
      json: spec.columns.filter((c) => c.kind === 'json').map((c) => c.name),
    };
    textColumns.set(spec, cols);
  }
  return cols;
}

/**
 * `rows` as stored, and how many values the rule changed. A row with nothing to change is
 * passed through, and `rows` itself when no row changes; the caller's rows are never modified.
 */
export function storedRows<R>(
  spec: TableSpec<R>,
  rows: readonly R[],
): { rows: readonly R[]; changed: number } {
  const { text, json } = columnsOf(spec);
  let changed = 0;
  let out: R[] | null = null;
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    let copy: Record<string, unknown> | null = null;
    for (const name of text) {
      const v = (row as Record<string, unknown>)[name];
      if (typeof v !== 'string') continue;
      const s = storedText(v);
      if (s === v) continue;
      (copy ??= { ...(row as Record<string, unknown>) })[name] = s;
      changed++;
    }
    for (const name of json) {
      const v = (row as Record<string, unknown>)[name] as Json | undefined;
      if (v === undefined || v === null) continue;
      const s = storedJson(v);
      if (s === v) continue;
      (copy ??= { ...(row as Record<string, unknown>) })[name] = s;
      changed++;
    }
    if (copy) (out ??= rows.slice())[i] = copy as R;
  }
  return { rows: out ?? rows, changed };
}
