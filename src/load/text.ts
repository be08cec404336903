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

/** A container being walked by storedJson: its members, the next one, and its copy once one changed. */
type Frame =
  | { readonly array: readonly Json[]; i: number; out: Json[] | null }
  | {
      readonly object: Record<string, Json>;
      readonly keys: readonly string[];
      i: number;
      out: Record<string, Json> | null;
    };

function frameOf(v: Json[] | Record<string, Json>): Frame {
  return Array.isArray(v)
    ? { array: v, i: 0, out: null }
    : { object: v, keys: Object.keys(v), i: 0, out: null };
}

/**
 * Puts the stored form `s` of the member just walked (index `f.i - 1`) into the frame's copy, made
 * at the first change. A member whose name the rule changes into the name of a member of its own
 * is dropped: that one stays.
 */
function settle(f: Frame, s: Json): void {
  if ('array' in f) {
    const at = f.i - 1;
    if (s !== f.array[at]) (f.out ??= f.array.slice())[at] = s;
    return;
  }
  const key = f.keys[f.i - 1]!;
  const k = storedText(key);
  if (k === key && s === f.object[key]) return;
  f.out ??= { ...f.object };
  if (k !== key) {
    delete f.out[key];
    if (Object.hasOwn(f.object, k)) return;
  }
  // Defined, not assigned: a member the rule names `__proto__` stays a member (as JSON.parse
  // makes it), where an assignment would set the copy's prototype and lose it.
  Object.defineProperty(f.out, k, { value: s, writable: true, enumerable: true, configurable: true });
}

/**
 * A JSON value as stored: the rule applied to every string and member name; `v` itself when
 * nothing changes (and each unchanged container the same object). Walked with an explicit stack:
 * an unknown member nested thousands of levels deep must not exceed the call stack.
 */
export function storedJson(v: Json): Json {
  if (typeof v === 'string') return storedText(v);
  if (v === null || typeof v !== 'object') return v;
  const stack: Frame[] = [frameOf(v)];
  for (;;) {
    const f = stack[stack.length - 1]!;
    const length = 'array' in f ? f.array.length : f.keys.length;
    if (f.i < length) {
      const item = 'array' in f ? f.array[f.i++]! : f.object[f.keys[f.i++]!]!;
      if (item !== null && typeof item === 'object') stack.push(frameOf(item));
      else settle(f, typeof item === 'string' ? storedText(item) : item);
      continue;
    }
    stack.pop();
    const done: Json = f.out ?? ('array' in f ? (f.array as Json[]) : f.object);
    const parent = stack[stack.length - 1];
    if (!parent) return done;
    settle(parent, done);
  }
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
