/**
 * Dates and times. The API speaks Asia/Shanghai wall time (`YYYY-MM-DD HH:MM:SS`, days as
 * `YYYY-MM-DD`). Shanghai has had a fixed UTC+08:00 offset with no daylight saving since 1991,
 * so the conversion is exact arithmetic; no time zone database is needed.
 */
const SHANGHAI_OFFSET_MS = 8 * 3600_000;

/** `2026-11-21 08:00:00` -> `2026-11-21T08:00:00+08:00`; null for null/empty/unreadable. */
export function shanghaiToIso(text: string | null | undefined): string | null {
  if (!text) return null;
  const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2})(:\d{2})?/.exec(text.trim());
  if (!m) return null;
  return `${m[1]}T${m[2]}${m[3] ?? ':00'}+08:00`;
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
