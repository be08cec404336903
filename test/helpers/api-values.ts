/**
 * Hand-written fast-check arbitraries of what the API may send, field by field, written as the
 * JSON text a server sends (so `1e400`, `-0`, `3.0` and `1e3` arrive as a JSON parser meets them,
 * not as the JS numbers they already are here), with the edges of every type a column holds:
 * integers around INTEGER and 2^53, numbers a double cannot hold, exponent forms, full-width
 * digits, dashes; days around Feb 29 and the years 1 and 9999; instants a zone moves past them;
 * money NUMERIC(18,4) would round; texts with U+0000, lone surrogates, non-BMP characters and
 * past a btree entry's ~2,700 bytes. (zod-fast-check needs zod 3: these are written by hand.)
 */
import { fc } from '@fast-check/vitest';

/** A JSON number (or any JSON) written exactly as this text on the wire. */
export class RawJson {
  constructor(readonly text: string) {}
}

export type Wire = RawJson | undefined | null | boolean | number | string | Wire[] | { [k: string]: Wire };

/** The JSON text a server sends for `v`: RawJson verbatim, `undefined` members left out. */
export function wireText(v: Wire): string {
  if (v instanceof RawJson) return v.text;
  if (Array.isArray(v)) return `[${v.map((x) => (x === undefined ? 'null' : wireText(x))).join(',')}]`;
  if (v !== null && typeof v === 'object')
    return `{${Object.entries(v)
      .filter(([, x]) => x !== undefined)
      .map(([k, x]) => `${JSON.stringify(k)}:${wireText(x)}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

/** What a client's JSON parser makes of it. */
export function received(v: Wire): unknown {
  return JSON.parse(wireText(v)) as unknown;
}

const raw = (texts: readonly string[]) => fc.constantFrom(...texts).map((t) => new RawJson(t));

/** JSON number texts at the edges of every integer column and of a double. */
export const NUMBER_EDGES = [
  '0',
  '-0',
  '0.0',
  '1',
  '-1',
  '2147483647',
  '2147483648',
  '-2147483648',
  '-2147483649',
  '4294967296',
  '9007199254740991',
  '9007199254740992',
  '-9007199254740991',
  '-9007199254740993',
  '9223372036854775807',
  '9223372036854775808',
  '12345678901234567890',
  '1e3',
  '1E3',
  '2e9',
  '1e400',
  '-1e400',
  '1.5',
  '-2.5',
  '1e-3',
  '3.0',
  '1.0e2',
  '5e-324',
  '1.7976931348623157e308',
  '0.30000000000000004',
] as const;

/** A finite double as a JSON number (JSON.stringify's shortest text; `-0` is written `0`). */
const doubleText = fc
  .double({ noNaN: true, noDefaultInfinity: true })
  .map((d) => new RawJson(JSON.stringify(d)));

/**
 * Mostly `valid`, one time in `odds + 1` anything of `any`: a record has many fields, and one
 * refused value refuses it, so each field is at its edges only now and then (a record at all its
 * edges at once would be refused every time, and what is stored never tested).
 */
export function mostly<T, U>(valid: fc.Arbitrary<T>, any: fc.Arbitrary<U>, odds = 10): fc.Arbitrary<T | U> {
  return fc.oneof({ weight: odds, arbitrary: valid }, { weight: 1, arbitrary: any });
}

/** Any integer field (a status, hours, a count), at every edge. */
export const anyIntegerWire: fc.Arbitrary<Wire> = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: -1000, max: 1000 }) },
  { weight: 2, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.maxSafeInteger() },
  { weight: 3, arbitrary: raw(NUMBER_EDGES) },
  { weight: 1, arbitrary: doubleText },
);

/** An INTEGER column's values, the edges included, in the JSON spellings of an integer. */
const int32Valid: fc.Arbitrary<Wire> = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: -1000, max: 1000 }) },
  { weight: 2, arbitrary: fc.integer() },
  { weight: 1, arbitrary: raw(['0', '-0', '2147483647', '-2147483648', '1e3', '3.0', '1.0e2']) },
);

/** An integer field: INTEGER's values, now and then anything. */
export const integerWire: fc.Arbitrary<Wire> = mostly(int32Valid, anyIntegerWire);

/** A count (a total, task_count): 0 to INTEGER's largest, now and then anything. */
export const countWire: fc.Arbitrary<Wire> = mostly(
  fc.oneof(
    fc.integer({ min: 0, max: 50 }),
    fc.constantFrom<Wire>(2147483647, new RawJson('-0'), new RawJson('2.0')),
  ),
  anyIntegerWire,
);

/** An ID: mostly ordinary, now and then at 0 or 2^53-1, past 2^53, negative, or no integer. */
export const idWire: fc.Arbitrary<Wire> = mostly(
  fc.oneof(
    { weight: 12, arbitrary: fc.integer({ min: 0, max: 2_000_000_000 }) },
    { weight: 1, arbitrary: fc.constantFrom(0, Number.MAX_SAFE_INTEGER, 2 ** 31, 2 ** 32) },
    { weight: 1, arbitrary: raw(['-0', '9007199254740991', '1e3', '4.0']) },
  ),
  raw(NUMBER_EDGES),
);

/** Characters that change on the way into a warehouse, or that writers get wrong. */
const AWKWARD = fc.constantFrom(
  'a',
  ' ',
  '\t',
  '\n',
  '\r',
  '\\',
  '"',
  "'",
  ',',
  '=',
  '\u0000',
  '\uD800',
  '\uDFFF',
  '\uD83D',
  '😀',
  '𠀋',
  '石',
  '－',
  '３',
  'é',
  'e\u0301',
  '\u200B',
  '\uFEFF',
  '\uFFFD',
  '\\N',
  '\\u0000',
);

/** Free text: ordinary, any code point, awkward characters, or empty. */
export const textWire: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 16 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
  { weight: 3, arbitrary: fc.array(AWKWARD, { maxLength: 10 }).map((a) => a.join('')) },
  { weight: 1, arbitrary: fc.constantFrom('', ' ', 'null', '-') },
);

/**
 * Text past what a PostgreSQL btree entry holds (2,704 bytes), and incompressible (random
 * printable ASCII is compressed by less than the quarter TOAST asks for), so an index on it
 * sees the whole length.
 */
export const longTextWire: fc.Arbitrary<string> = fc
  .tuple(fc.integer({ min: 2720, max: 4000 }), fc.integer({ min: 1, max: 2 ** 31 - 1 }))
  .map(([n, seed]) => {
    let x = seed;
    let s = '';
    for (let i = 0; i < n; i++) {
      x = (x * 1103515245 + 12345) & 0x7fffffff;
      s += String.fromCharCode(33 + (x % 94));
    }
    return s;
  });

/** Text that is sometimes past the btree limit. */
export const textOrLongWire: fc.Arbitrary<string> = fc.oneof(
  { weight: 9, arbitrary: textWire },
  { weight: 1, arbitrary: longTextWire },
);

const pad = (n: number, width: number) => String(n).padStart(width, '0');

/** Any day of the years 1-9999 as `YYYY-MM-DD`. */
const anyDay = fc
  .date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true })
  .map((d) => d.toISOString().slice(0, 10));

/** Days at the edges: Feb 29 of leap and other years, years 0, 1, 99, 100, 9999, no days at all. */
export const DAY_EDGES = [
  '2024-02-29',
  '2000-02-29',
  '0004-02-29',
  '0048-02-29',
  '2023-02-29',
  '1900-02-29',
  '2100-02-29',
  '0050-02-29',
  '0001-02-29',
  '0000-01-01',
  '0000-02-29',
  '0001-01-01',
  '0099-12-31',
  '0100-01-01',
  '9999-12-31',
  '2026-02-30',
  '2026-04-31',
  '2026-13-01',
  '2026-00-10',
  '10000-01-01',
  '2026-1-1',
  '２０２６-０１-０１',
] as const;

/** Days: any of the years 1-9999 (Feb 29 of leap years, 0001-01-01, 9999-12-31 among them), now and then no day. */
export const dayWire: fc.Arbitrary<string> = mostly(
  fc.oneof(
    { weight: 3, arbitrary: anyDay },
    {
      weight: 1,
      arbitrary: fc.constantFrom('2024-02-29', '2000-02-29', '0004-02-29', '0001-01-01', '9999-12-31'),
    },
  ),
  fc.constantFrom(...DAY_EDGES),
);

/** A zone suffix: none (Shanghai wall time), Z, or an offset, as far as +-14:00 and past. */
const zone = fc.oneof(
  { weight: 3, arbitrary: fc.constant('') },
  { weight: 1, arbitrary: fc.constantFrom('Z', 'z') },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.constantFrom('+', '-'), fc.integer({ min: 0, max: 14 }), fc.constantFrom(0, 30, 45))
      .map(([s, h, m]) => `${s}${pad(h, 2)}:${pad(m, 2)}`),
  },
  {
    weight: 1,
    arbitrary: mostly(
      fc.constantFrom('+0800', '+08', '-1200', '+23:59'),
      fc.constantFrom('+24:00', '+08:60'),
    ),
  },
);

const time = fc
  .tuple(
    mostly(fc.integer({ min: 0, max: 23 }), fc.constant(24)),
    mostly(fc.integer({ min: 0, max: 59 }), fc.constant(60)),
    mostly(fc.integer({ min: 0, max: 59 }), fc.constant(60)),
    fc.option(fc.stringMatching(/^\d{1,9}$/), { nil: undefined }),
  )
  .map(([h, m, s, f]) => `${pad(h, 2)}:${pad(m, 2)}:${pad(s, 2)}${f === undefined ? '' : `.${f}`}`);

/** Instants at the edges: zones that move 9999-12-31 into 10000 or 0001-01-01 into year 0. */
export const TIMESTAMP_EDGES = [
  '9999-12-31 23:59:59.999999',
  '9999-12-31T23:59:59.9999999',
  '9999-12-31T23:00:00-05:00',
  '9999-12-31T16:00:00Z',
  '9999-12-31T15:59:59Z',
  '0001-01-01 00:00:00',
  '0001-01-01T00:00:00+14:00',
  '0001-01-01T00:00:00Z',
  '0000-12-31 23:59:59',
  '2024-02-29 12:00:00',
  '2023-02-29 12:00:00',
  '2026-01-01 24:00:00',
  '2026-01-01 23:59:60',
  'last tuesday',
  '',
] as const;

export const timestampWire: fc.Arbitrary<string> = mostly(
  fc.tuple(dayWire, fc.constantFrom(' ', 'T'), time, zone).map(([d, sep, t, z]) => `${d}${sep}${t}${z}`),
  fc.constantFrom(...TIMESTAMP_EDGES),
  6,
);

/** Money at every edge: decimal text of any length, any JSON number, NUMERIC(18,4)'s limits. */
const anyMoneyWire: fc.Arbitrary<Wire> = fc.oneof(
  { weight: 3, arbitrary: fc.stringMatching(/^-?\d{1,18}(\.\d{1,8})?$/) },
  { weight: 1, arbitrary: doubleText },
  {
    weight: 2,
    arbitrary: raw([
      '0.30000000000000004',
      '99999999999999.99',
      '100000000000000',
      '-0',
      '1e-7',
      '12345678901234.5',
      '123456789012345.6',
      '1e3',
      '0.1',
    ]),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '12.50',
      '1.00000',
      '1.23456',
      '-0',
      '-0.0000',
      '00012.5',
      '99999999999999.9999',
      '-99999999999999.9999',
      '100000000000000',
      '1e3',
      '+1',
      '.5',
      '１２',
      '',
    ),
  },
);

/** Money: mostly what NUMERIC(18,4) holds, now and then anything of anyMoneyWire. */
export const moneyWire: fc.Arbitrary<Wire> = mostly(
  fc.oneof(
    fc.stringMatching(/^-?\d{1,14}(\.\d{1,4})?$/),
    fc.integer({ min: -1e9, max: 1e9 }).map((n) => n / 100),
    fc.constantFrom('99999999999999.9999', '-0', '0.0000', '1.50000'),
  ),
  anyMoneyWire,
  4,
);

/** What a server may put in a rank's position, visibility or score (rank-number.ts). */
export const rankNumberWire: fc.Arbitrary<Wire> = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: -5, max: 120 }) },
  { weight: 2, arbitrary: raw(NUMBER_EDGES) },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      '',
      ' ',
      '\u3000',
      '-',
      '--',
      '—',
      '–',
      '－',
      '３',
      '＋３',
      '－３',
      '１ｅ３',
      '+3',
      '03',
      '3.0',
      '3.00',
      '3.5',
      '1e3',
      '1e-3',
      '1e400',
      '0x10',
      'Infinity',
      'NaN',
      'N/A',
      '2147483648',
      '9007199254740993',
    ),
  },
  { weight: 1, arbitrary: fc.integer().map(String) },
  { weight: 1, arbitrary: fc.constantFrom<Wire>(null, undefined, true, false, {}, [], [3], { v: 1 }) },
);

/** Any JSON value a server may nest in a card or a report, with number texts at their edges. */
export const jsonWire: fc.Arbitrary<Wire> = fc.letrec<{ value: Wire }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { weight: 4, arbitrary: fc.oneof(fc.constant(null), fc.boolean(), fc.integer(), textWire) },
    { weight: 1, arbitrary: raw(NUMBER_EDGES) },
    { weight: 1, arbitrary: doubleText },
    { weight: 1, arbitrary: fc.array(tie('value'), { maxLength: 4 }) },
    { weight: 1, arbitrary: fc.dictionary(textWire, tie('value'), { maxKeys: 4 }) },
  ),
})).value;

/** Sometimes null where a value may be null, sometimes left out. */
export function maybe<T extends Wire>(a: fc.Arbitrary<T>): fc.Arbitrary<T | null | undefined> {
  return fc.oneof({ weight: 6, arbitrary: a }, { weight: 1, arbitrary: fc.constantFrom(null, undefined) });
}
