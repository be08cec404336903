/**
 * Request and reply plumbing shared by the route handlers: a small query-string parser and
 * typed parameter readers (no URL object, no regex per character: this runs on every request),
 * reply builders for the envelopes of spec 2.1, and the page object of 4.3.
 */

export interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** A parameter the server refuses: 422 on hierarchical endpoints, as Laravel-style validators do. */
export class ParamError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

function decode(s: string): string {
  if (s.indexOf('%') < 0 && s.indexOf('+') < 0) return s;
  try {
    return decodeURIComponent(s.replaceAll('+', ' '));
  } catch {
    return s;
  }
}

/** `a=1&b=x%20y` -> { a: '1', b: 'x y' }; the last value of a repeated key wins. */
export function parseQuery(qs: string): Record<string, string> {
  // No prototype: a `__proto__` or `constructor` parameter is just a key.
  const out = Object.create(null) as Record<string, string>;
  let i = 0;
  while (i < qs.length) {
    let amp = qs.indexOf('&', i);
    if (amp < 0) amp = qs.length;
    const eq = qs.indexOf('=', i);
    const hasValue = eq >= 0 && eq < amp;
    const key = decode(qs.slice(i, hasValue ? eq : amp));
    if (key !== '') out[key] = hasValue ? decode(qs.slice(eq + 1, amp)) : '';
    i = amp + 1;
  }
  return out;
}

const INT = /^-?\d{1,16}$/;
const YMD = /^\d{4}-\d{2}-\d{2}$/;

export interface IntRule {
  required?: boolean;
  min?: number;
  max?: number;
}

/** Typed readers over query parameters (or a JSON body's fields). */
export class Params {
  constructor(readonly raw: Readonly<Record<string, unknown>>) {}

  has(name: string): boolean {
    return this.raw[name] !== undefined;
  }

  int(name: string, rule: IntRule & { required: true }): number;
  int(name: string, rule?: IntRule): number | undefined;
  int(name: string, rule: IntRule = {}): number | undefined {
    const v = this.raw[name];
    if (v === undefined || v === '') {
      if (rule.required) throw new ParamError(name, `The ${name} field is required.`);
      return undefined;
    }
    let n: number;
    if (typeof v === 'number') n = v;
    else if (typeof v === 'string' && INT.test(v)) n = Number(v);
    else throw new ParamError(name, `The ${name} field must be an integer.`);
    if (!Number.isSafeInteger(n)) throw new ParamError(name, `The ${name} field must be an integer.`);
    if (rule.min !== undefined && rule.max !== undefined && (n < rule.min || n > rule.max))
      throw new ParamError(name, `The ${name} field must be between ${rule.min} and ${rule.max}.`);
    if (rule.min !== undefined && n < rule.min)
      throw new ParamError(name, `The ${name} field must be at least ${rule.min}.`);
    if (rule.max !== undefined && n > rule.max)
      throw new ParamError(name, `The ${name} field must not be greater than ${rule.max}.`);
    return n;
  }

  /** One of a fixed set of integers. */
  oneOf(name: string, allowed: readonly number[]): number | undefined {
    const n = this.int(name);
    if (n !== undefined && !allowed.includes(n))
      throw new ParamError(name, `The selected ${name} is invalid.`);
    return n;
  }

  /** `YYYY-MM-DD`, a real calendar day. */
  date(name: string): string | undefined {
    const v = this.raw[name];
    if (v === undefined || v === '') return undefined;
    if (typeof v !== 'string' || !YMD.test(v) || !isCalendarDay(v))
      throw new ParamError(name, `The ${name} field must match the format Y-m-d.`);
    return v;
  }
}

function isCalendarDay(s: string): boolean {
  const y = Number(s.slice(0, 4));
  const m = Number(s.slice(5, 7));
  const d = Number(s.slice(8, 10));
  const t = new Date(Date.UTC(y, m - 1, d));
  return t.getUTCFullYear() === y && t.getUTCMonth() === m - 1 && t.getUTCDate() === d;
}

// --- replies ---------------------------------------------------------------------------------

export function ok(data: unknown, extra?: Record<string, unknown>): Reply {
  return { status: 200, body: { success: true, ...extra, data } };
}

/** Hierarchical errors carry only `message` (spec 2.1, 7). */
export function fail(status: number, message: string): Reply {
  return { status, body: { message } };
}

/** Legacy errors carry `success: false` and `message` (spec 2.1). */
export function legacyFail(status: number, message: string): Reply {
  return { status, body: { success: false, message } };
}

/** 422 in the shape validation frameworks use: message plus per-field errors. */
export function invalid(e: ParamError, legacy = false): Reply {
  const body: Record<string, unknown> = { message: e.message, errors: { [e.field]: [e.message] } };
  return { status: 422, body: legacy ? { success: false, ...body } : body };
}

export interface PageObject<T> {
  current_page: number;
  data: T[];
  total: number;
  per_page: number;
  last_page: number;
}

/**
 * The page object. With `unstable`, `total` (and so last_page) grows by 0-2 depending on the
 * page, as on a live server where rows arrive while a client pages: the data never changes, so
 * a client that trusts only empty pages and its own counts still reads everything.
 */
export function pageObject<T>(
  items: T[],
  total: number,
  page: number,
  perPage: number,
  unstable: boolean,
): PageObject<T> {
  const shown = unstable ? total + (page % 3) : total;
  return {
    current_page: page,
    data: items,
    total: shown,
    per_page: perPage,
    last_page: Math.max(1, Math.ceil(shown / perPage)),
  };
}

/** Standard paging arguments. */
export function paging(
  p: Params,
  defaultPerPage: number,
  maxPerPage: number,
): { page: number; perPage: number; offset: number } {
  const page = p.int('page', { min: 1 }) ?? 1;
  const perPage = p.int('per_page', { min: 1, max: maxPerPage }) ?? defaultPerPage;
  return { page, perPage, offset: (page - 1) * perPage };
}
