/**
 * Building blocks shared by the resource schemas.
 *
 * Decision on unknown fields: every resource object is a `z.looseObject`. Fields the
 * spec does not name are tolerated and kept on the parsed value, so the raw payload (quarantine,
 * product card JSON, diagnosis reports) loses nothing, while transforms read only named fields.
 * A real server adds fields over time; refusing them would turn every API addition into an outage.
 *
 * Decision on values: a schema accepts only what both warehouses store exactly, so a value one of
 * them would refuse or change (an integer past INTEGER, a day PostgreSQL has not, money NUMERIC
 * would round) fails its record here, where it is quarantined with a reason naming the field and
 * the value, instead of failing the write of its whole batch. The limits are the columns' (see
 * src/load/tables.ts): BIGINT IDs, INTEGER counts and statuses, DATE and TIMESTAMPTZ in the years
 * 0001-9999, NUMERIC(18,4) money, JSON without a number JSON cannot spell.
 */
import { z } from 'zod';
import { nonFiniteNumberAt } from '../../json-text.ts';
import { apiTimestampProblem, isStoredDay } from '../../time.ts';

/** INTEGER's range, on both warehouses: statuses, hours, counts, page numbers. */
export const INTEGER_MIN = -2_147_483_648;
export const INTEGER_MAX = 2_147_483_647;

/** A number as a reason shows it (`-0` included, which String() writes `0`). */
function shown(v: unknown): string {
  return Object.is(v, -0) ? '-0' : typeof v === 'number' ? String(v) : JSON.stringify(v);
}

/** A JSON integer from `min` to `max`; the reason names the value and the range it missed. */
function integerIn(min: number, max: number, what: (v: number) => string) {
  return z.number().superRefine((v, ctx) => {
    if (!Number.isInteger(v))
      ctx.addIssue({ code: 'custom', message: `${shown(v)} is not an integer`, input: v });
    else if (v < min || v > max) ctx.addIssue({ code: 'custom', message: what(v), input: v });
  });
}

/**
 * An API ID (BIGINT): a non-negative integer no larger than 2^53-1, the largest a JSON number
 * carries exactly (a larger one has already lost digits when it is parsed). JSON numbers only;
 * IDs are never derived or coerced. `-0` is 0.
 */
export const Id = integerIn(
  0,
  Number.MAX_SAFE_INTEGER,
  (v) => `${shown(v)} is not an ID: expected an integer from 0 to 2^53-1 (larger ones lose digits in JSON)`,
);

/** `customer_id` may be null for historical data not attached to a project (spec 1, rule 5). */
export const NullableCustomerId = Id.nullable();

/** An integer stored in an INTEGER column (a status, hours, a count). */
export const Int32 = integerIn(
  INTEGER_MIN,
  INTEGER_MAX,
  (v) => `${shown(v)} is beyond INTEGER (${INTEGER_MIN} to ${INTEGER_MAX})`,
);

/** A count stored in an INTEGER column (`task_count`, a page's `total`). */
export const Count = integerIn(0, INTEGER_MAX, (v) => `${shown(v)} is not a count from 0 to ${INTEGER_MAX}`);

/** `page` starts at 1; `per_page` ranges differ per endpoint (spec 8). At most INTEGER_MAX. */
export const PageNumber = integerIn(
  1,
  INTEGER_MAX,
  (v) => `${shown(v)} is not a page number from 1 to ${INTEGER_MAX}`,
);

/** `YYYY-MM-DD`, checked as a real calendar day of the years both warehouses store (0001-9999). */
export const Ymd = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'expected YYYY-MM-DD')
  .refine((s) => isCalendarDay(s), {
    error: (iss) => `not a calendar day of the years 0001-9999: ${JSON.stringify(iss.input)}`,
  });

/**
 * A timestamp: `YYYY-MM-DD HH:MM:SS` in Asia/Shanghai (spec 2.2, 2.10, 2.11), or ISO 8601 with a
 * zone (`Z`, `+hh:mm`) and fractions, as the diagnosis timestamps are (2.9). Anything that is not
 * a real instant, or one outside the years 0001-9999 in Shanghai, fails here, so its record is
 * quarantined instead of stored as text; the value stays the text received, and transforms turn
 * it into an instant with `apiTimestampToIso`.
 */
export const DateTimeText = z.string().superRefine((s, ctx) => {
  const problem = apiTimestampProblem(s);
  if (problem) ctx.addIssue({ code: 'custom', message: problem, input: s });
});

/**
 * The longest text stored as a key, in UTF-8 bytes: a PostgreSQL btree index entry (a primary
 * key) holds at most about 2,700 bytes, and a longer one fails the INSERT ("index row size
 * exceeds btree maximum"). An identifier is far shorter; this leaves room to spare.
 */
export const MAX_KEY_TEXT_BYTES = 1024;

/** Text stored as a key (`site_diagnoses.diagnosis_id`): at most MAX_KEY_TEXT_BYTES of UTF-8. */
export const KeyText = z.string().superRefine((s, ctx) => {
  const bytes = Buffer.byteLength(s, 'utf8');
  if (bytes > MAX_KEY_TEXT_BYTES)
    ctx.addIssue({
      code: 'custom',
      message: `a key of ${bytes} bytes (${JSON.stringify(s.slice(0, 40))}...): longer than the ${MAX_KEY_TEXT_BYTES} bytes a key is stored with`,
      input: s,
    });
});

/** NUMERIC(18,4) / DECIMAL(18,4): digits before the decimal point, and after it. */
export const MONEY_INTEGER_DIGITS = 14;
export const MONEY_SCALE = 4;

/**
 * Decimal digits a JSON number carries exactly: every decimal of up to 15 significant digits
 * survives the double a JSON parser makes of it; past that the parser may already have changed
 * the server's number (0.30000000000000004 is a double's neighbour of 0.3, not money).
 */
const EXACT_JSON_DIGITS = 15;

const DECIMAL_TEXT = /^-?\d+(\.\d+)?$/;

/**
 * Money: the spec says "number". Servers built on decimal columns often send strings ("12.50");
 * both are accepted and normalized to a decimal string so no float rounding reaches the warehouse.
 * Only money NUMERIC(18,4) holds exactly passes: at most 14 digits before the decimal point and 4
 * after it (trailing zeros aside: PostgreSQL would round a fifth silently), and a JSON number of
 * at most 15 significant digits. `-0` is 0.
 */
export const Decimal = z
  .union([z.number(), z.string().regex(DECIMAL_TEXT, 'expected a decimal number')])
  .transform((v, ctx) => {
    const problem = moneyProblem(v);
    if (problem) {
      ctx.addIssue({ code: 'custom', message: problem, input: v });
      return z.NEVER;
    }
    return typeof v === 'number' ? numberToDecimalText(v) : v;
  });

/** Why money cannot be stored exactly in NUMERIC(18,4), naming the value; null when it can. */
export function moneyProblem(v: number | string): string | null {
  const beyond = `${shown(v)} is beyond NUMERIC(18,4): at most ${MONEY_INTEGER_DIGITS} digits before the decimal point`;
  if (typeof v === 'number' && Math.abs(v) >= 10 ** MONEY_INTEGER_DIGITS) return beyond;
  const text = typeof v === 'number' ? numberToDecimalText(v) : v;
  const [whole = '', fraction = ''] = text.replace(/^-/, '').split('.');
  const integerDigits = whole.replace(/^0+/, '');
  const fractionDigits = fraction.replace(/0+$/, '');
  if (integerDigits.length > MONEY_INTEGER_DIGITS) return beyond;
  if (fractionDigits.length > MONEY_SCALE)
    return `${shown(v)} has more than ${MONEY_SCALE} decimal places: NUMERIC(18,4) would round it`;
  const significant = (integerDigits + fractionDigits).replace(/^0+/, '').length;
  if (typeof v === 'number' && significant > EXACT_JSON_DIGITS)
    return `${shown(v)} has more significant digits than a JSON number carries exactly (${EXACT_JSON_DIGITS}): money this precise must come as text`;
  return null;
}

/** Whether `YYYY-MM-DD` is a real day of the years both warehouses store (0001-9999). */
export function isCalendarDay(s: string): boolean {
  return isStoredDay(s);
}

/** Shortest exact decimal text of a JS number (no exponent for the magnitudes money takes). */
export function numberToDecimalText(n: number): string {
  if (Object.is(n, -0)) return '0';
  if (Number.isInteger(n)) return n.toString();
  const s = n.toString();
  if (!/e/i.test(s)) return s;
  return n.toFixed(20).replace(/0+$/, '').replace(/\.$/, '');
}

/**
 * A JSON value stored whole in a JSON column (a product card, a diagnosis member): any JSON but a
 * number JSON.parse read as Infinity (`1e400`, too large for a double), which JSON.stringify would
 * write as `null`. The reason names where it sits.
 */
export function storedJson<T extends z.ZodType>(schema: T) {
  return schema.superRefine((v, ctx) => {
    const at = nonFiniteNumberAt(v);
    if (at)
      ctx.addIssue({
        code: 'custom',
        path: at,
        message:
          'a number too large for a double (read as Infinity): a JSON column would store null, so the record is not stored',
        input: v,
      });
  });
}
