/**
 * Calendar helpers in Asia/Shanghai (UTC+8 all year, no daylight saving), the time zone of every
 * date and wall-clock text of the API (spec 4.3 rule 1). Done with plain offsets: Intl would be
 * far slower on the request path.
 */
const SHANGHAI_OFFSET_MS = 8 * 3600_000;
const DAY_MS = 86_400_000;
/** Day numbers count from 2000-01-01: they are packed into IDs (ids.ts), so they must be small. */
const EPOCH_2000 = Date.UTC(2000, 0, 1);

/** `YYYY-MM-DD` of an instant in Shanghai. */
export function shanghaiYmd(at: Date | number): string {
  const ms = typeof at === 'number' ? at : at.getTime();
  return new Date(ms + SHANGHAI_OFFSET_MS).toISOString().slice(0, 10);
}

/** `YYYY-MM-DD HH:MM:SS` Shanghai wall time of an instant. */
export function shanghaiDateTime(at: Date | number): string {
  const ms = typeof at === 'number' ? at : at.getTime();
  const iso = new Date(ms + SHANGHAI_OFFSET_MS).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;
}

/** ISO 8601 with the +08:00 offset (diagnosis timestamps: "ISO 8601 with a time zone"). */
export function shanghaiIso(at: Date | number): string {
  const ms = typeof at === 'number' ? at : at.getTime();
  return `${new Date(ms + SHANGHAI_OFFSET_MS).toISOString().slice(0, 19)}+08:00`;
}

/** Day number (days since 2000-01-01) of a `YYYY-MM-DD`; NaN when not a calendar day. */
export function dayNumber(ymd: string): number {
  if (ymd.length !== 10 || ymd[4] !== '-' || ymd[7] !== '-') return Number.NaN;
  const y = Number(ymd.slice(0, 4));
  const m = Number(ymd.slice(5, 7));
  const d = Number(ymd.slice(8, 10));
  if (!Number.isInteger(y) || !Number.isInteger(m) || !Number.isInteger(d)) return Number.NaN;
  const t = Date.UTC(y, m - 1, d);
  const back = new Date(t);
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== m - 1 || back.getUTCDate() !== d)
    return Number.NaN;
  return Math.round((t - EPOCH_2000) / DAY_MS);
}

const ymdCache = new Map<number, string>();

/** Inverse of dayNumber (cached: every item of a response carries its day). */
export function ymdOfDay(day: number): string {
  let s = ymdCache.get(day);
  if (s === undefined) {
    s = new Date(EPOCH_2000 + day * DAY_MS).toISOString().slice(0, 10);
    if (ymdCache.size > 4096) ymdCache.clear();
    ymdCache.set(day, s);
  }
  return s;
}

/** The instant of Shanghai midnight starting `day` plus `secondsIntoDay`. */
export function instantOf(day: number, secondsIntoDay = 0): number {
  return EPOCH_2000 + day * DAY_MS - SHANGHAI_OFFSET_MS + secondsIntoDay * 1000;
}

/** `YYYY-MM-DD HH:MM:SS` of a day number plus seconds into that day (no Date allocation churn). */
export function wallTime(day: number, secondsIntoDay: number): string {
  const s = Math.max(0, Math.min(86_399, Math.floor(secondsIntoDay)));
  const hh = Math.floor(s / 3600);
  const mm = Math.floor((s % 3600) / 60);
  const ss = s % 60;
  return `${ymdOfDay(day)} ${pad2(hh)}:${pad2(mm)}:${pad2(ss)}`;
}

function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/** Today's day number in Shanghai at `now`. */
export function todayNumber(now: Date): number {
  return dayNumber(shanghaiYmd(now));
}
