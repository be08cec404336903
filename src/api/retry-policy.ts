/**
 * The retry policy as a table (after Airbyte's `default_error_mapping`): each row maps one outcome
 * of an HTTP attempt to an action. The client looks the outcome up and does what the row says;
 * nothing else in `api/` decides whether to retry. Rows are matched top to bottom, so specific
 * statuses come before the ranges that would also match them.
 *
 * - `retry`: a transient failure; wait a jittered exponential backoff and try again.
 * - `rate-limited`: the key's rate limit; wait what the server asked (`Retry-After`) or a backoff,
 *   and slow the whole process down (see request-queue.ts).
 * - `fail`: the same request would fail the same way again; throw at once.
 */

export type RetryAction = 'retry' | 'rate-limited' | 'fail';

/** What one HTTP attempt came to, as far as the retry decision cares. */
export type AttemptOutcome =
  | { readonly kind: 'status'; readonly status: number }
  | { readonly kind: 'network'; readonly code: string | undefined }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'too-large' }
  | { readonly kind: 'invalid-request' }
  | { readonly kind: 'unparseable-body' }
  | { readonly kind: 'schema-mismatch' };

/** The matcher of a row: one status, a status range, network error codes, or a body problem. */
export type OutcomeMatcher =
  | { readonly status: number }
  | { readonly statusFrom: number; readonly statusTo: number }
  | { readonly networkCodes: readonly string[] }
  | { readonly anyNetworkError: true }
  | { readonly timeout: true }
  | { readonly tooLarge: true }
  | { readonly invalidRequest: true }
  | { readonly unparseableBody: true }
  | { readonly schemaMismatch: true };

export interface RetryRule {
  /** How the row reads in docs and test names, e.g. `"401"` or `"network reset/refused"`. */
  readonly label: string;
  readonly when: OutcomeMatcher;
  readonly action: RetryAction;
  /** Why: a reader changing a row should see what it was protecting. */
  readonly why: string;
}

/** Socket-level failures after which the request may simply not have arrived: safe to retry. */
export const RETRYABLE_NETWORK_CODES = [
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'ECONNABORTED',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
] as const;

/**
 * Codes of a request the HTTP client refused before sending it (an option or header value it will
 * not send, such as a key with CR or LF): the same request is refused again, however often.
 */
export const CLIENT_REFUSAL_CODES = [
  'UND_ERR_INVALID_ARG',
  'UND_ERR_NOT_SUPPORTED',
  'UND_ERR_INVALID_RETURN_VALUE',
  'ERR_INVALID_ARG_TYPE',
  'ERR_INVALID_ARG_VALUE',
  'ERR_INVALID_CHAR',
  'ERR_INVALID_HTTP_TOKEN',
] as const;

/** Error codes undici and Node use for timeouts; they read as the `timeout` outcome. */
export const TIMEOUT_CODES = [
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
] as const;

export const RETRY_TABLE: readonly RetryRule[] = [
  {
    label: '400',
    when: { status: 400 },
    action: 'fail',
    why: 'legacy create/edit validation failure: the server refuses the same body again',
  },
  {
    label: '401',
    when: { status: 401 },
    action: 'fail',
    why: 'no valid key or token; spec 5.7: never guess or replace credentials by retrying',
  },
  {
    label: '403',
    when: { status: 403 },
    action: 'fail',
    why: 'blocked account or not the project owner: a permission, not a glitch',
  },
  {
    label: '404',
    when: { status: 404 },
    action: 'fail',
    why: 'missing, deleted or not readable by this key: asking again changes nothing',
  },
  {
    label: '422',
    when: { status: 422 },
    action: 'fail',
    why: 'invalid parameters (diagnosis POST): the same parameters fail again',
  },
  {
    label: '429',
    when: { status: 429 },
    action: 'rate-limited',
    why: 'rate limit of the key: wait (Retry-After) and slow the whole process down',
  },
  { label: '500', when: { status: 500 }, action: 'retry', why: 'server fault, usually transient' },
  { label: '502', when: { status: 502 }, action: 'retry', why: 'a proxy lost the upstream: transient' },
  { label: '503', when: { status: 503 }, action: 'retry', why: 'overloaded or restarting: transient' },
  { label: '504', when: { status: 504 }, action: 'retry', why: 'a proxy timed out the upstream: transient' },
  {
    label: 'other 5xx',
    when: { statusFrom: 500, statusTo: 599 },
    action: 'retry',
    why: 'any other server-side status is treated as transient too',
  },
  {
    label: 'other 4xx',
    when: { statusFrom: 400, statusTo: 499 },
    action: 'fail',
    why: 'a client error the spec does not name: retrying the same request cannot fix it',
  },
  {
    label: 'other status',
    when: { statusFrom: 100, statusTo: 399 },
    action: 'fail',
    why: 'an unexpected informational or redirect status: the client does not follow redirects',
  },
  {
    label: 'request refused by the client',
    when: { invalidRequest: true },
    action: 'fail',
    why: 'the HTTP client refused to send it (UND_ERR_INVALID_ARG: a header value with CR or LF): the same request is refused again',
  },
  {
    label: 'network reset/refused',
    when: { networkCodes: RETRYABLE_NETWORK_CODES },
    action: 'retry',
    why: 'the connection broke or was refused; the request may not have arrived (all reads are idempotent)',
  },
  {
    label: 'DNS not found',
    when: { networkCodes: ['ENOTFOUND'] },
    action: 'fail',
    why: 'the base URL names no host: a configuration error that retries only delay',
  },
  {
    label: 'other network error',
    when: { anyNetworkError: true },
    action: 'retry',
    why: 'an unnamed socket failure (TLS hiccup, proxy) is treated as transient',
  },
  {
    label: 'timeout',
    when: { timeout: true },
    action: 'retry',
    why: 'no complete answer in time (headers or body); a slow moment, usually',
  },
  {
    label: 'body over the size cap',
    when: { tooLarge: true },
    action: 'fail',
    why: 'an answer larger than GEO_MAX_RESPONSE_BYTES: the server sends the same body again, and holding it could exhaust memory',
  },
  {
    label: 'unparseable body',
    when: { unparseableBody: true },
    action: 'retry',
    why: 'a truncated or garbled body (often a proxy error page); the next answer is usually whole',
  },
  {
    label: 'schema mismatch',
    when: { schemaMismatch: true },
    action: 'fail',
    why: 'well-formed JSON of the wrong shape: the server will send the same shape again',
  },
];

function matches(when: OutcomeMatcher, o: AttemptOutcome): boolean {
  if ('status' in when) return o.kind === 'status' && o.status === when.status;
  if ('statusFrom' in when)
    return o.kind === 'status' && o.status >= when.statusFrom && o.status <= when.statusTo;
  if ('networkCodes' in when)
    return o.kind === 'network' && o.code !== undefined && when.networkCodes.includes(o.code);
  if ('anyNetworkError' in when) return o.kind === 'network';
  if ('timeout' in when) return o.kind === 'timeout';
  if ('tooLarge' in when) return o.kind === 'too-large';
  if ('invalidRequest' in when)
    return (
      o.kind === 'invalid-request' ||
      (o.kind === 'network' && (CLIENT_REFUSAL_CODES as readonly (string | undefined)[]).includes(o.code))
    );
  if ('unparseableBody' in when) return o.kind === 'unparseable-body';
  return o.kind === 'schema-mismatch';
}

/**
 * The first row of `table` that matches the outcome. A network error whose code is a timeout
 * code is read as a timeout first. Nothing matching (a status outside 100-599) fails.
 */
export function classifyOutcome(
  outcome: AttemptOutcome,
  table: readonly RetryRule[] = RETRY_TABLE,
): RetryRule {
  const o: AttemptOutcome =
    outcome.kind === 'network' && (TIMEOUT_CODES as readonly (string | undefined)[]).includes(outcome.code)
      ? { kind: 'timeout' }
      : outcome;
  return (
    table.find((row) => matches(row.when, o)) ?? {
      label: 'unmatched',
      when: { schemaMismatch: true },
      action: 'fail',
      why: 'an outcome no row names is not retried',
    }
  );
}

export interface BackoffOptions {
  /** First step of the exponential backoff, ms. @default 250 */
  readonly baseDelayMs: number;
  /** Cap of one wait, ms. @default 30000 */
  readonly maxDelayMs: number;
}

/**
 * Exponential backoff with full jitter: `random(0, min(cap, base * 2^retry))`, `retry` counting
 * from 0 for the first retry. Full jitter spreads the retries of many requests that failed at the
 * same moment, so they do not hit the server again together.
 * @param random a source in [0, 1), injectable so tests pin the draw
 */
export function backoffDelayMs(
  retry: number,
  opts: BackoffOptions,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(opts.maxDelayMs, opts.baseDelayMs * 2 ** Math.max(0, retry));
  return Math.floor(random() * ceiling);
}

/**
 * `Retry-After` in milliseconds from now: either delay-seconds (`"2"`, tolerated `"1.5"`) or an
 * HTTP date (`"Wed, 21 Oct 2015 07:28:00 GMT"`). A date in the past gives 0. Absent or unreadable
 * gives undefined, and the caller falls back to its own backoff.
 * @param now epoch ms, injectable so the HTTP-date form is testable
 */
export function parseRetryAfter(
  value: string | undefined | null,
  now: number = Date.now(),
): number | undefined {
  if (value === undefined || value === null) return undefined;
  const t = value.trim();
  if (t === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(t)) return Math.round(Number(t) * 1000);
  // Only a date with letters (a day or month name) is read as a date: `Date.parse` would accept
  // bare numbers like "-1" or "12" as years, which no server means.
  if (!/[a-z]/i.test(t)) return undefined;
  const at = Date.parse(t);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

/**
 * Outcomes after which the server surely did not act on the request: it refused the connection,
 * or its rate limiter turned the request away.
 */
export function serverDidNotAct(o: AttemptOutcome): boolean {
  return (
    (o.kind === 'status' && o.status === 429) ||
    (o.kind === 'network' && (o.code === 'ECONNREFUSED' || o.code === 'ENOTFOUND'))
  );
}

/**
 * The action for one outcome of one endpoint. A request that must not run twice (legacy create
 * would create a second monitoring task; a repeated logout answers 401) is repeated only after
 * outcomes where the server surely did not act; every other `retry` becomes `fail` for it.
 */
export function decideRetry(
  outcome: AttemptOutcome,
  opts: { readonly idempotent: boolean },
  table: readonly RetryRule[] = RETRY_TABLE,
): RetryRule {
  const rule = classifyOutcome(outcome, table);
  if (opts.idempotent || rule.action !== 'retry' || serverDidNotAct(outcome)) return rule;
  return {
    ...rule,
    action: 'fail',
    why: `${rule.why}; but this request must not run twice, and the server may have acted on it`,
  };
}
