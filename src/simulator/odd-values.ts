/**
 * The `oddValues` fault: answers rewritten with values a real server sends and a client must
 * store exactly or quarantine, never fail on: rank numbers as dashes, full-width digits, fractions,
 * exponent forms and other JSON; integers past INTEGER and numbers past a double; instants a zone
 * moves past the year 9999; money NUMERIC(18,4) would round; cards and reports holding 1e400;
 * text past a btree entry. Which value goes where is decided per record and field from the seed
 * (never by request order), so every read of a record, on every endpoint that serves it, sees the
 * same value, and a second run the same answers as the first.
 *
 * Values JSON.stringify cannot write (`1e400`, `-0`, `3.0`) travel as RawNumber and are written
 * as their text (oddJsonText). Structural records (monitoring and platform tasks, page objects of
 * lists) keep valid values, at their edges: a refused monitoring task would hide the executions
 * below it, and the counts a test holds the sync to would no longer be those of the world. Brands
 * and domains are left as they are: the per-day aggregates' btree indexes refuse text past ~2,700
 * bytes on PostgreSQL (see test/integration/api-values.property.test.ts).
 */
import type { EndpointName } from '../api/endpoints.ts';
import { hash32, tag, unit } from './rng.ts';

/** A JSON number written exactly as `text`. */
export class RawNumber {
  constructor(readonly text: string) {}
}

const n = (text: string) => new RawNumber(text);

/**
 * What a rank's position, visibility or score becomes: the spec's integer in another spelling
 * (stored as that integer), or no integer of the column (stored NULL, the value kept raw).
 */
const RANK_VALUES: readonly unknown[] = [
  '-',
  '--',
  '—',
  '–',
  '－',
  '３',
  '＋３',
  '03',
  '+3',
  '3.0',
  '1e3',
  n('1e3'),
  n('3.0'),
  n('-0'),
  '3.5',
  n('3.5'),
  '1e-3',
  '1e400',
  n('1e400'),
  'N/A',
  '',
  ' ',
  null,
  true,
  {},
  [],
  n('2147483648'),
  n('9007199254740993'),
];

/** Text past what a PostgreSQL btree entry holds (incompressible: no repeats to compress). */
function longText(h: number): string {
  let s = '';
  let x = h || 1;
  for (let i = 0; i < 3000; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    s += String.fromCharCode(33 + (x % 94));
  }
  return s;
}

type Json = null | boolean | number | string | RawNumber | Json[] | { [k: string]: Json };
type Obj = { [k: string]: Json };

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

export class OddValues {
  constructor(private readonly seed: number) {}

  /** A float in [0, 1) for this record's field: the same for every read of it. */
  private draw(field: string, ...ids: number[]): number {
    return unit(hash32(this.seed, tag(field), ...ids));
  }

  private pick<T>(list: readonly T[], field: string, ...ids: number[]): T {
    return list[Math.floor(this.draw(`${field}#`, ...ids) * list.length)]!;
  }

  /**
   * The body with this endpoint's odd values; `body` itself is never changed. `query`: the
   * request's parameters (prompt/products names its execution only there).
   */
  rewrite(route: EndpointName, body: unknown, query: Readonly<Record<string, string>>): unknown {
    if (!isObj(body) || !('data' in body)) return body;
    const data = body.data;
    const out = (d: Json): unknown => ({ ...body, data: d });
    const items = (d: Json, each: (x: Obj) => Obj): Json =>
      isObj(d) && Array.isArray(d.data) ? { ...d, data: d.data.map((x) => (isObj(x) ? each(x) : x)) } : d;
    switch (route) {
      case 'taskResults':
        return out(items(data, (x) => this.execution(x, x.prompt_task_id)));
      case 'taskPrompts':
        return out(
          Array.isArray(data) ? data.map((x) => (isObj(x) ? this.execution(x, x.prompt_task_id) : x)) : data,
        );
      case 'promptDetail':
      case 'promptResult':
        return isObj(data) ? out(this.execution(data, data.prompt_task_id)) : body;
      case 'legacyTaskResult':
        // Legacy renames: its `task_id` is the execution.
        return isObj(data) ? out(this.ranksOf(data, data.task_id)) : body;
      case 'promptSearches':
        return out(items(data, (x) => this.source(x)));
      case 'promptProducts':
        return isObj(data) ? out(this.products(data, Number(query.prompt_task_id))) : body;
      case 'promptScreenshot':
        return isObj(data) ? out(this.screenshot(data)) : body;
      case 'legacyTaskDetail':
        return isObj(data) ? out(this.taskDetail(data)) : body;
      case 'legacyProjectDetail':
        return isObj(data) ? out(this.projectDetail(data)) : body;
      case 'customerProjects':
        return out(items(data, (x) => this.monitoringTask(x)));
      case 'deductionDetails':
        return out(items(data, (x) => this.deduction(x)));
      case 'balance':
        return isObj(data) ? out({ ...data, amount: n('12345678.5') }) : body;
      case 'getSiteDiagnosis':
      case 'startSiteDiagnosis':
        return isObj(data) ? out(this.diagnosis(data)) : body;
      default:
        return body;
    }
  }

  /**
   * An execution item (task/results, task/prompts, prompt/detail, prompt/result): its ranks, and
   * for one in 25 an `hours` past INTEGER, which refuses it on every endpoint that lists it.
   */
  private execution(x: Obj, id: Json | undefined): Obj {
    if (typeof id !== 'number') return x;
    let e = this.ranksOf(x, id);
    if ('hours' in e && this.draw('hours', id) < 0.04) e = { ...e, hours: n('2147483648') };
    return e;
  }

  /** One rank item in five has a number in another spelling, or no integer at all. */
  private ranksOf(x: Obj, id: Json | undefined): Obj {
    if (typeof id !== 'number' || !Array.isArray(x.rank_details)) return x;
    const ranks = x.rank_details.map((r, i) => {
      if (!isObj(r) || this.draw('rank', id, i) >= 0.2) return r;
      const field = this.pick(['position', 'visibility', 'score'] as const, 'rank-field', id, i);
      return { ...r, [field]: this.pick(RANK_VALUES, 'rank-value', id, i) as Json };
    });
    return { ...x, rank_details: ranks };
  }

  /** One source in ten has a snippet past a btree entry (no index holds it: stored whole). */
  private source(x: Obj): Obj {
    const id = x.source_id;
    if (typeof id !== 'number' || this.draw('snippet', id) >= 0.1) return x;
    return { ...x, snippet: longText(hash32(this.seed, id)) };
  }

  /**
   * Cards: one in twenty holds 1e400 (refused alone), others prices as JSON floats and integers
   * past 2^53 (stored as parsed). One execution in thirty answers a `total` past INTEGER (the
   * answer refused whole: its products are quarantined, the execution kept).
   */
  private products(d: Obj, id: number): Obj {
    const cards = Array.isArray(d.products) ? d.products : [];
    // A card's place in the whole list: the same card on whichever page it is served.
    const first =
      typeof d.current_page === 'number' && typeof d.per_page === 'number'
        ? (d.current_page - 1) * d.per_page
        : 0;
    const out: Obj = {
      ...d,
      products: cards.map((c, i) => {
        if (!isObj(c)) return c;
        const r = this.draw('card', id, first + i);
        if (r < 0.05) return { ...c, weight: n('1e400') };
        if (r < 0.15)
          return { ...c, price_value: n('0.30000000000000004'), sales: n('12345678901234567890') };
        return c;
      }),
    };
    if (this.draw('products-total', id) < 0.03) out.total = n('2147483648');
    return out;
  }

  /** One screenshot in thirty has a status past INTEGER: the answer is quarantined. */
  private screenshot(d: Obj): Obj {
    const id = d.prompt_task_id;
    if (typeof id !== 'number' || this.draw('screenshot', id) >= 0.03) return d;
    return { ...d, screenshot_status: n('2147483648') };
  }

  /** Legacy task detail: one in thirty updated in a zone that moves 9999-12-31 into 10000. */
  private taskDetail(d: Obj): Obj {
    const id = d.task_id;
    if (typeof id !== 'number' || this.draw('times', id) >= 0.03) return d;
    return { ...d, updated_at: '9999-12-31T23:00:00-05:00' };
  }

  /** A monitoring task's configuration: one in three with `week_restart` past INTEGER. */
  private projectDetail(d: Obj): Obj {
    const id = d.number_id;
    if (typeof id !== 'number' || this.draw('config', id) >= 0.34) return d;
    return { ...d, week_restart: n('4294967296') };
  }

  /** Monitoring tasks stay valid, at their edges: year 1, a count written `2.0`, a status `-0`. */
  private monitoringTask(x: Obj): Obj {
    const id = x.project_id;
    if (typeof id !== 'number' || this.draw('task', id) >= 0.5) return x;
    return {
      ...x,
      created_at: '0001-01-01 00:00:00',
      status: n('-0'),
      task_count: n(`${String(x.task_count)}.0`),
    };
  }

  /** Deductions: money NUMERIC(18,4) would round (refused), at its edges, and year 1. */
  private deduction(x: Obj): Obj {
    const id = x.id;
    if (typeof id !== 'number') return x;
    const r = this.draw('deduction', id);
    if (r < 0.1) return { ...x, diff_amount: n('0.30000000000000004') };
    if (r < 0.2) return { ...x, before_amount: '1.00005' };
    if (r < 0.3) return { ...x, after_amount: '99999999999999.9999', created_at: '0001-01-01 00:00:00' };
    if (r < 0.4) return { ...x, diff_amount: n('-0') };
    return x;
  }

  /**
   * Diagnoses: an error holding 1e400 (refused: a JSON column would store null), or a score past
   * 2^63 (a double, stored) and a percentage past a double (read as unknown).
   */
  private diagnosis(d: Obj): Obj {
    if (this.draw('diagnosis', tag(String(d.diagnosis_id))) < 0.3)
      return { ...d, error: { code: n('1e400') } };
    const result = isObj(d.result) ? { ...d.result, composite_score: n('1e300') } : d.result;
    return { ...d, progress_percent: '9'.repeat(400), ...(result === undefined ? {} : { result }) };
  }
}

/** JSON text of a body that may hold RawNumber: written as their text, the rest as JSON.stringify. */
export function oddJsonText(value: unknown): string {
  if (value instanceof RawNumber) return value.text;
  if (Array.isArray(value))
    return `[${value.map((v) => (v === undefined ? 'null' : oddJsonText(v))).join(',')}]`;
  if (isObj(value)) {
    const members = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${JSON.stringify(k)}:${oddJsonText(v)}`);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
