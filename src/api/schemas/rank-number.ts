/**
 * The numbers of a rank_details item (spec 2.5: `position`, `visibility`, `score`, "integer"), as
 * stored: an integer, or NULL. The spec's own "empty rank" (rule 2) has no spelling in the spec,
 * and real servers send placeholders ("-", "—"), fractions, full-width digits and worse. None of
 * them may cost the execution or its other ranks, and none may reach a column as something else
 * than an integer (`Number("-")` is NaN, which both warehouses refuse). So:
 *
 * - a JSON integer is itself (`-0` is 0);
 * - null, absence, "" or blanks: NULL, the empty rank, and nothing else is kept;
 * - text is NFKC-normalised first (full-width "３", "－", "＋" become ASCII) and trimmed, then read
 *   by a strict numeric grammar (never `Number()`, which takes "0x10", "Infinity" and ""): "+3",
 *   "03", "3.0", "3.00", "1e3" are the integers they write;
 * - anything else is stored as NULL with the value as sent kept (`execution_ranks.raw_values`):
 *   dashes, fractions (3.5: the spec says integer, and rounding would invent a rank), "1e-3", a
 *   number a double cannot hold ("1e400"), one beyond its bound (position: INTEGER's; visibility
 *   and score, stored as BIGINT: INTEGER's too, see RANK_LIMITS), other text ("N/A"), and JSON
 *   that is no number (true, {}, []).
 *
 * Whether a position is a valid rank (`> 0`) is the transform's rule, not this reader's.
 */
/** A JSON value (api/ does not import the warehouse's row types). */
type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** What a rank number is stored as: `value` in its column, `raw` (the value as sent) when kept. */
export interface RankReading {
  value: number | null;
  /** Present only when `value` is NULL although the API sent something: what it sent. */
  raw?: Json;
}

/**
 * The largest magnitude each rank number takes. Visibility and score are summed per day into the
 * aggregates' BIGINT columns (a brand's day over the whole account): at INTEGER's bound it takes
 * 4 billion ranks of one brand in one day to overflow them. At +-(2^53-1), what a JS number holds
 * exactly and the bound before, 1,025 did: every refresh of that day failed, and every run with it.
 */
export const RANK_LIMITS = {
  /** INTEGER */
  position: 2_147_483_647,
  visibility: 2_147_483_647,
  score: 2_147_483_647,
} as const;

export type RankField = keyof typeof RANK_LIMITS;
export const RANK_FIELDS = Object.keys(RANK_LIMITS) as RankField[];

/**
 * Sign, digits, an optional fraction, an optional exponent: the only text read as a number.
 * `.5` and `5.` are not numbers here (a rank is written with its digits).
 */
const NUMBER_TEXT = /^([+-]?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/**
 * The integer `text` writes, exactly (decimal arithmetic on its digits, never a double), when it
 * writes one whose magnitude is at most `limit`; undefined otherwise.
 */
function integerOfText(text: string, limit: number): number | undefined {
  const m = NUMBER_TEXT.exec(text);
  if (!m) return undefined;
  const [, sign, whole, fraction = '', exponent = '0'] = m;
  // digits × 10^scale, the digits with leading zeros dropped.
  const digits = `${whole}${fraction}`.replace(/^0+/, '');
  if (digits === '') return 0;
  // An exponent past any column (and past what BigInt should be asked to build) is beyond.
  const exp = Number(exponent);
  if (!Number.isSafeInteger(exp) || Math.abs(exp) > 400) return undefined;
  const scale = exp - fraction.length;
  let magnitude: bigint;
  if (scale >= 0) {
    if (digits.length + scale > 20) return undefined;
    magnitude = BigInt(digits) * 10n ** BigInt(scale);
  } else {
    const cut = digits.length + scale;
    // A digit that is not 0 after the decimal point: a fraction, not an integer.
    if (!/^0*$/.test(digits.slice(Math.max(0, cut)))) return undefined;
    magnitude = cut > 0 ? BigInt(digits.slice(0, cut)) : 0n;
  }
  if (magnitude > BigInt(limit)) return undefined;
  const n = Number(magnitude);
  return sign === '-' && n !== 0 ? -n : n;
}

/** Reads one rank number; `limit` is its column's largest magnitude. */
export function readRankNumber(v: unknown, limit: number): RankReading {
  if (v === undefined || v === null) return { value: null };
  if (typeof v === 'number') {
    if (Number.isInteger(v) && Math.abs(v) <= limit) return { value: v === 0 ? 0 : v };
    // JSON has no Infinity: a number too large for a double is kept as the text JS gives it.
    return { value: null, raw: Number.isFinite(v) ? v : String(v) };
  }
  if (typeof v === 'string') {
    const text = v.normalize('NFKC').trim();
    if (text === '') return { value: null };
    const n = integerOfText(text, limit);
    return n === undefined ? { value: null, raw: v } : { value: n };
  }
  return { value: null, raw: v as Json };
}

/**
 * Where a rank item's kept raw values travel from decoding to its row: a symbol-keyed member, so
 * it is neither JSON (a rank item's JSON, and so the change-detection fingerprint of its
 * execution, is the same as before raw values were kept) nor a name an API member could take.
 * Read it with rankRawValues. (Not in the item's type: declaration files cannot name a symbol
 * from another module in the types zod infers for every schema that holds rank items.)
 */
const RANK_RAW_VALUES = Symbol('rank raw values');

export type RankRawValues = Partial<Record<RankField, Json>>;

type RankItemInput = {
  [k: string]: unknown;
  position?: unknown;
  visibility?: unknown;
  score?: unknown;
};

/** The item with its numbers read (T's own `position` etc. are `unknown`: the intersection narrows them). */
type RankItemOutput<T> = T & {
  position: number | null;
  visibility: number | null;
  score: number | null;
};

type Carrier = { [RANK_RAW_VALUES]?: RankRawValues };

/** A validated rank item with its numbers read (RankDetail's `.transform`). */
export function readRankItem<T extends RankItemInput>(item: T): RankItemOutput<T> {
  const raw: RankRawValues = {};
  const out: Record<string, unknown> = { ...item };
  for (const field of RANK_FIELDS) {
    const r = readRankNumber(item[field], RANK_LIMITS[field]);
    out[field] = r.value;
    if ('raw' in r) raw[field] = r.raw;
  }
  if (Object.keys(raw).length > 0) (out as Carrier)[RANK_RAW_VALUES] = raw;
  return out as RankItemOutput<T>;
}

/** The raw values a decoded rank item kept (rankRawValues(item) ?? null is its row's `raw_values`). */
export function rankRawValues(item: object): RankRawValues | undefined {
  return (item as Carrier)[RANK_RAW_VALUES];
}
