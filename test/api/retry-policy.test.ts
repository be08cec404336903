import { describe, expect, it } from 'vitest';
import {
  type AttemptOutcome,
  backoffDelayMs,
  classifyOutcome,
  decideRetry,
  parseRetryAfter,
  RETRY_TABLE,
  type RetryAction,
} from '../../src/api/retry-policy.ts';

/** Every row the brief names, and a few around them: outcome -> action, and the row that decided. */
const CASES: { name: string; outcome: AttemptOutcome; action: RetryAction; row: string }[] = [
  { name: '400', outcome: { kind: 'status', status: 400 }, action: 'fail', row: '400' },
  { name: '401', outcome: { kind: 'status', status: 401 }, action: 'fail', row: '401' },
  { name: '403', outcome: { kind: 'status', status: 403 }, action: 'fail', row: '403' },
  { name: '404', outcome: { kind: 'status', status: 404 }, action: 'fail', row: '404' },
  { name: '422', outcome: { kind: 'status', status: 422 }, action: 'fail', row: '422' },
  { name: '429', outcome: { kind: 'status', status: 429 }, action: 'rate-limited', row: '429' },
  { name: '500', outcome: { kind: 'status', status: 500 }, action: 'retry', row: '500' },
  { name: '502', outcome: { kind: 'status', status: 502 }, action: 'retry', row: '502' },
  { name: '503', outcome: { kind: 'status', status: 503 }, action: 'retry', row: '503' },
  { name: '504', outcome: { kind: 'status', status: 504 }, action: 'retry', row: '504' },
  { name: '501 (other 5xx)', outcome: { kind: 'status', status: 501 }, action: 'retry', row: 'other 5xx' },
  { name: '599 (other 5xx)', outcome: { kind: 'status', status: 599 }, action: 'retry', row: 'other 5xx' },
  { name: '405 (other 4xx)', outcome: { kind: 'status', status: 405 }, action: 'fail', row: 'other 4xx' },
  {
    name: '301 (other status)',
    outcome: { kind: 'status', status: 301 },
    action: 'fail',
    row: 'other status',
  },
  {
    name: 'ECONNRESET',
    outcome: { kind: 'network', code: 'ECONNRESET' },
    action: 'retry',
    row: 'network reset/refused',
  },
  {
    name: 'ECONNREFUSED',
    outcome: { kind: 'network', code: 'ECONNREFUSED' },
    action: 'retry',
    row: 'network reset/refused',
  },
  {
    name: 'EPIPE',
    outcome: { kind: 'network', code: 'EPIPE' },
    action: 'retry',
    row: 'network reset/refused',
  },
  {
    name: 'UND_ERR_SOCKET',
    outcome: { kind: 'network', code: 'UND_ERR_SOCKET' },
    action: 'retry',
    row: 'network reset/refused',
  },
  {
    name: 'UND_ERR_CLOSED',
    outcome: { kind: 'network', code: 'UND_ERR_CLOSED' },
    action: 'retry',
    row: 'network reset/refused',
  },
  {
    name: 'ENOTFOUND',
    outcome: { kind: 'network', code: 'ENOTFOUND' },
    action: 'fail',
    row: 'DNS not found',
  },
  {
    name: 'unknown network code',
    outcome: { kind: 'network', code: 'EWHATEVER' },
    action: 'retry',
    row: 'other network error',
  },
  {
    name: 'network, no code',
    outcome: { kind: 'network', code: undefined },
    action: 'retry',
    row: 'other network error',
  },
  { name: 'timeout', outcome: { kind: 'timeout' }, action: 'retry', row: 'timeout' },
  {
    name: 'UND_ERR_HEADERS_TIMEOUT reads as timeout',
    outcome: { kind: 'network', code: 'UND_ERR_HEADERS_TIMEOUT' },
    action: 'retry',
    row: 'timeout',
  },
  {
    name: 'ETIMEDOUT reads as timeout',
    outcome: { kind: 'network', code: 'ETIMEDOUT' },
    action: 'retry',
    row: 'timeout',
  },
  {
    name: 'unparseable body',
    outcome: { kind: 'unparseable-body' },
    action: 'retry',
    row: 'unparseable body',
  },
  { name: 'schema mismatch', outcome: { kind: 'schema-mismatch' }, action: 'fail', row: 'schema mismatch' },
  // An answer over GEO_MAX_RESPONSE_BYTES comes the same way again.
  {
    name: 'body over the cap',
    outcome: { kind: 'too-large' },
    action: 'fail',
    row: 'body over the size cap',
  },
  // A header value with CR/LF is refused by undici again, however often asked.
  {
    name: 'request refused by the client',
    outcome: { kind: 'invalid-request' },
    action: 'fail',
    row: 'request refused by the client',
  },
  {
    name: 'UND_ERR_INVALID_ARG as a network code',
    outcome: { kind: 'network', code: 'UND_ERR_INVALID_ARG' },
    action: 'fail',
    row: 'request refused by the client',
  },
];

describe('retry table', () => {
  it.each(CASES)('$name -> $action (row "$row")', ({ outcome, action, row }) => {
    const rule = classifyOutcome(outcome);
    expect(rule.action).toBe(action);
    expect(rule.label).toBe(row);
  });

  it('every row of the table is exercised by a case', () => {
    const covered = new Set(CASES.map((c) => c.row));
    expect(RETRY_TABLE.map((r) => r.label).filter((l) => !covered.has(l))).toEqual([]);
  });

  it('every row says why', () => {
    for (const row of RETRY_TABLE) expect(row.why.length).toBeGreaterThan(10);
  });

  it('401 and 403 are never retried, whatever the endpoint', () => {
    for (const status of [401, 403]) {
      for (const idempotent of [true, false]) {
        expect(decideRetry({ kind: 'status', status }, { idempotent }).action).toBe('fail');
      }
    }
  });
});

describe('requests that must not run twice', () => {
  it.each<[string, AttemptOutcome, RetryAction]>([
    ['500 (server may have acted)', { kind: 'status', status: 500 }, 'fail'],
    ['reset (request may have arrived)', { kind: 'network', code: 'ECONNRESET' }, 'fail'],
    ['timeout', { kind: 'timeout' }, 'fail'],
    ['unparseable body', { kind: 'unparseable-body' }, 'fail'],
    ['body over the cap', { kind: 'too-large' }, 'fail'],
    ['request refused by the client', { kind: 'invalid-request' }, 'fail'],
    ['connection refused (never arrived)', { kind: 'network', code: 'ECONNREFUSED' }, 'retry'],
    ['429 (turned away)', { kind: 'status', status: 429 }, 'rate-limited'],
  ])('%s -> %s', (_name, outcome, action) => {
    expect(decideRetry(outcome, { idempotent: false }).action).toBe(action);
  });
});

describe('backoff: exponential with full jitter', () => {
  const opts = { baseDelayMs: 250, maxDelayMs: 30_000 };
  it.each([
    // retry, random draw, expected: floor(draw * min(cap, base * 2^retry))
    [0, 0.999999, 249],
    [0, 0.5, 125],
    [1, 0.5, 250],
    [2, 0.5, 500],
    [3, 1 - 1e-9, 1999],
    [10, 0.5, 15_000], // 250 * 1024 = 256000 > cap 30000
    [30, 0.5, 15_000],
    [4, 0, 0],
  ])('retry %i with draw %f -> %i ms', (retry, draw, expected) => {
    expect(backoffDelayMs(retry, opts, () => draw)).toBe(expected);
  });

  it('stays within [0, min(cap, base * 2^retry)) for any draw', () => {
    for (let retry = 0; retry < 20; retry++) {
      for (const draw of [0, 0.1, 0.5, 0.9, 0.999]) {
        const d = backoffDelayMs(retry, opts, () => draw);
        expect(d).toBeGreaterThanOrEqual(0);
        expect(d).toBeLessThan(Math.min(opts.maxDelayMs, opts.baseDelayMs * 2 ** retry));
      }
    }
  });
});

describe('Retry-After', () => {
  const now = Date.parse('2025-03-01T12:00:00Z');
  it.each<[string, string | undefined, number | undefined]>([
    ['delay-seconds', '3', 3000],
    ['zero seconds', '0', 0],
    ['fractional seconds (tolerated)', '1.5', 1500],
    ['padded', '  2 ', 2000],
    ['HTTP date 5 s ahead', 'Sat, 01 Mar 2025 12:00:05 GMT', 5000],
    ['HTTP date in the past', 'Sat, 01 Mar 2025 11:59:00 GMT', 0],
    ['absent', undefined, undefined],
    ['empty', '', undefined],
    ['negative', '-1', undefined],
    ['garbage', 'soon', undefined],
  ])('%s (%s) -> %s ms', (_name, value, expected) => {
    expect(parseRetryAfter(value, now)).toBe(expected);
  });
});
