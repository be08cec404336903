/**
 * Dates and times, a leaf module any layer may import: api/ decodes the API's timestamps with
 * it, transform/, load/, sync/ and the commands count days with it. The API speaks Asia/Shanghai
 * wall time (`YYYY-MM-DD HH:MM:SS`, days as `YYYY-MM-DD`). Shanghai has had a fixed UTC+08:00
 * offset with no daylight saving since 1991, so the conversion is exact arithmetic; no time zone
 * database is needed.
 */
const SHANGHAI_OFFSET_MS = 8 * 3600_000;

/**
 * An API timestamp: `YYYY-MM-DD HH:MM[:SS[.fraction]]` with a `T` or a space, then optionally a
 * zone: `Z`, `+hh:mm`, `+hhmm` or `+hh` (and `-`). The spec gives diagnosis timestamps as ISO 8601
 * with a zone and every other timestamp as Shanghai wall time without one, so text without a
 * zone is Asia/Shanghai. Every part is range-checked (a real calendar day, 00-23 hours, no leap
 * second), so nothing that is not an instant passes as one.
 */
const API_TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?\s*(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)?$/;

/**
 * The years an instant may fall in, in Asia/Shanghai wall time: what both warehouses store and
 * read back as written. PostgreSQL has no year 0 (DATE '0000-01-01' is refused), and JS writes a
 * year past 9999 as `+010000-...`, which is no ISO 8601 either warehouse reads.
 */
export const FIRST_STORED_YEAR = 1;
export const LAST_STORED_YEAR = 9999;

/** A parsed API timestamp: its instant as a Date of Shanghai wall time, and its fraction digits. */
interface ApiTimestamp {
  shanghai: Date;
  /** The fraction's digits, cut to microseconds, trailing zeros removed. */
  digits: string;
}

function parseApiTimestamp(text: string): ApiTimestamp | null {
  const m = API_TIMESTAMP.exec(text.trim());
  if (!m) return null;
  const n = (i: number) => Number(m[i] ?? 0);
  const [y, mo, d, h, mi, sec] = [n(1), n(2), n(3), n(4), n(5), n(6)];
  const [offH, offM] = [n(10), n(11)];
  if (h > 23 || mi > 59 || sec > 59 || offH > 23 || offM > 59) return null;
  if (!isDayOfYear(y, mo, d)) return null;
  const t = new Date(0);
  t.setUTCFullYear(y, mo - 1, d);
  t.setUTCHours(h, mi, sec, 0);
  // No zone: Shanghai wall time. Z: UTC. Otherwise the offset given.
  const offsetMin = m[8] ? 0 : m[9] ? (m[9] === '-' ? -1 : 1) * (offH * 60 + offM) : 480;
  const shanghai = new Date(t.getTime() - offsetMin * 60_000 + SHANGHAI_OFFSET_MS);
  return { shanghai, digits: (m[7] ?? '').slice(0, 6).replace(/0+$/, '') };
}

/**
 * Whether y-m-d is a day of the proleptic Gregorian calendar (what both warehouses and JS use).
 * Date.UTC is not used: it reads years 0-99 as 1900-1999.
 */
function isDayOfYear(y: number, mo: number, d: number): boolean {
  const t = new Date(0);
  t.setUTCFullYear(y, mo - 1, d);
  return t.getUTCFullYear() === y && t.getUTCMonth() === mo - 1 && t.getUTCDate() === d;
}

/** Whether `YYYY-MM-DD` is a real day of the years both warehouses store (0001-9999). */
export function isStoredDay(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const y = Number(m[1]);
  return y >= FIRST_STORED_YEAR && y <= LAST_STORED_YEAR && isDayOfYear(y, Number(m[2]), Number(m[3]));
}

/**
 * An API timestamp -> the same instant as ISO 8601 in Asia/Shanghai (`2026-11-21T08:00:00+08:00`,
 * fractions kept to microseconds, the warehouses' precision); null when the text is not one, or
 * is an instant outside the years 0001-9999 of Shanghai wall time (apiTimestampProblem says which).
 * Offsets are whole minutes, so the fraction never changes with the zone.
 */
export function apiTimestampToIso(text: string | null | undefined): string | null {
  if (typeof text !== 'string') return null;
  const p = parseApiTimestamp(text);
  if (!p || !inStoredYears(p.shanghai)) return null;
  return `${isoWall(p.shanghai)}${p.digits ? `.${p.digits}` : ''}+08:00`;
}

function inStoredYears(shanghai: Date): boolean {
  const y = shanghai.getUTCFullYear();
  return y >= FIRST_STORED_YEAR && y <= LAST_STORED_YEAR;
}

/**
 * Why an API timestamp cannot be stored, in words that name the value; null when it can
 * (apiTimestampToIso gives its instant).
 */
export function apiTimestampProblem(text: string): string | null {
  const p = parseApiTimestamp(text);
  if (!p)
    return `expected YYYY-MM-DD HH:MM:SS (Asia/Shanghai) or ISO 8601 with a time zone, got ${JSON.stringify(text)}`;
  if (!inStoredYears(p.shanghai))
    return `${JSON.stringify(text)} is in the year ${p.shanghai.getUTCFullYear()} in Asia/Shanghai, outside the years 0001-9999 both warehouses store`;
  return null;
}

/**
 * A timestamp the schema already validated (DateTimeText) -> its instant. Throws on text that is
 * not one: that is a schema gap, and storing the raw text instead would hide it.
 */
export function apiInstant(text: string): string {
  const iso = apiTimestampToIso(text);
  if (iso === null) throw new RangeError(`not an API timestamp: ${JSON.stringify(text)}`);
  return iso;
}

/** Kept name: Shanghai wall time is what zone-less API text means. */
export const shanghaiToIso = apiTimestampToIso;

/** `YYYY-MM-DDTHH:MM:SS` of a Date's UTC fields (years 0-9999: toISOString writes others with a sign). */
function isoWall(t: Date): string {
  return t.toISOString().slice(0, 19);
}

/** The Asia/Shanghai calendar day of an API timestamp or a stored instant; null when unreadable. */
export function shanghaiDayOf(text: string | null | undefined): string | null {
  return apiTimestampToIso(text)?.slice(0, 10) ?? null;
}

/** The calendar day in Asia/Shanghai of an instant. */
export function shanghaiDay(at: Date): string {
  return new Date(at.getTime() + SHANGHAI_OFFSET_MS).toISOString().slice(0, 10);
}

/** Adds whole days to a `YYYY-MM-DD` day. */
export function addDays(day: string, n: number): string {
  const t = Date.parse(`${day}T00:00:00Z`) + n * 86_400_000;
  return new Date(t).toISOString().slice(0, 10);
}

/** Yesterday in Asia/Shanghai: the hierarchical endpoints' default `date`. */
export function shanghaiYesterday(now: Date = new Date()): string {
  return addDays(shanghaiDay(now), -1);
}

/** Every day from `from` to `to`, both ends inclusive (empty when from > to). */
export function daysBetween(from: string, to: string): string[] {
  const out: string[] = [];
  for (let d = from; d <= to; d = addDays(d, 1)) out.push(d);
  return out;
}
