/**
 * How pg turns PostgreSQL text into JS values for this warehouse (per pool, not pg's global
 * registry): BIGINT as number, DATE as its `YYYY-MM-DD` text, TIMESTAMPTZ as an ISO instant in
 * Asia/Shanghai; NUMERIC stays exact text and JSON/JSONB are parsed (pg's defaults).
 */
import pg from 'pg';
import { bigintToNumber, shanghaiIso } from '../values.ts';

const OID = { INT8: 20, DATE: 1082, TIMESTAMP: 1114, TIMESTAMPTZ: 1184 } as const;

const TIMESTAMPTZ_TEXT =
  /^(\d{4,})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?([+-])(\d{2})(?::?(\d{2}))?(?::?(\d{2}))?( BC)?$/;

/** `2026-11-21 00:00:00.5+00` (any session TimeZone) -> `2026-11-21T08:00:00.500+08:00`. */
export function parseTimestamptz(text: string): string {
  const m = TIMESTAMPTZ_TEXT.exec(text);
  if (!m || m[12]) return text; // infinity, -infinity, BC: left as PostgreSQL wrote them
  const n = (i: number) => Number(m[i] ?? 0);
  const fraction = (m[7] ?? '').padEnd(3, '0').slice(0, 3);
  const local = Date.UTC(n(1), n(2) - 1, n(3), n(4), n(5), n(6), Number(fraction));
  const offsetMs = (m[8] === '-' ? -1 : 1) * ((n(9) * 60 + n(10)) * 60 + n(11)) * 1000;
  // Date.UTC maps years 0..99 to 1900..1999; PostgreSQL years here are always 4+ digits.
  return shanghaiIso(local - offsetMs);
}

function parseInt8(text: string): number | string {
  return bigintToNumber(BigInt(text));
}

const keepText = (text: string): string => text;

export const warehouseTypes: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    switch (oid) {
      case OID.INT8:
        return parseInt8;
      case OID.DATE:
      case OID.TIMESTAMP:
        return keepText;
      case OID.TIMESTAMPTZ:
        return parseTimestamptz;
      default:
        return pg.types.getTypeParser(oid, format ?? 'text');
    }
  }) as pg.CustomTypesConfig['getTypeParser'],
};
