/**
 * Building blocks shared by the resource schemas.
 *
 * Decision on unknown fields (issue 2): every resource object is a `z.looseObject`. Fields the
 * spec does not name are tolerated and kept on the parsed value, so the raw payload (quarantine,
 * product card JSON, diagnosis reports) loses nothing, while transforms read only named fields.
 * A real server adds fields over time; refusing them would turn every API addition into an outage.
 */
import { z } from 'zod';
import { apiTimestampToIso } from '../../time.ts';

/** An API ID: a non-negative integer. JSON numbers only; IDs are never derived or coerced. */
export const Id = z.number().int().nonnegative();

/** `customer_id` may be null for historical data not attached to a project (spec 1, rule 5). */
export const NullableCustomerId = Id.nullable();

/** `YYYY-MM-DD`, checked as a real calendar day. */
export const Ymd = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'expected YYYY-MM-DD')
  .refine((s) => isCalendarDay(s), 'not a calendar day');

/**
 * A timestamp: `YYYY-MM-DD HH:MM:SS` in Asia/Shanghai (spec 2.2, 2.10, 2.11), or ISO 8601 with a
 * zone (`Z`, `+hh:mm`) and fractions, as the diagnosis timestamps are (2.9). Anything that is not
 * a real instant fails here, so its record is quarantined instead of stored as text; the value
 * stays the text received, and transforms turn it into an instant with `apiTimestampToIso`.
 */
export const DateTimeText = z
  .string()
  .refine(
    (s) => apiTimestampToIso(s) !== null,
    'expected YYYY-MM-DD HH:MM:SS (Asia/Shanghai) or ISO 8601 with a time zone',
  );

/**
 * Money: the spec says "number". Servers built on decimal columns often send strings ("12.50");
 * both are accepted and normalized to a decimal string so no float rounding reaches the warehouse.
 */
export const Decimal = z
  .union([z.number().finite(), z.string().regex(/^-?\d+(\.\d+)?$/, 'expected a decimal number')])
  .transform((v) => (typeof v === 'number' ? numberToDecimalText(v) : v));

export function isCalendarDay(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const t = new Date(Date.UTC(y, mo - 1, d));
  return t.getUTCFullYear() === y && t.getUTCMonth() === mo - 1 && t.getUTCDate() === d;
}

/** Shortest exact decimal text of a JS number (no exponent for the magnitudes money takes). */
export function numberToDecimalText(n: number): string {
  if (Number.isInteger(n)) return n.toString();
  const s = n.toString();
  if (!/e/i.test(s)) return s;
  return n.toFixed(20).replace(/0+$/, '').replace(/\.$/, '');
}

/** `page` starts at 1; `per_page` ranges differ per endpoint (spec 8). */
export const PageNumber = z.number().int().min(1);
