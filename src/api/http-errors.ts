/**
 * From a failed attempt to the typed error of errors.ts: a status to its error class (with the
 * server's own `message` where the body has one), a transport failure to NetworkError or
 * TimeoutError. Callers branch on the error's `code`; the retry table decides on the outcome.
 */
import type { EndpointId } from './endpoints.ts';
import {
  BadRequestError,
  ForbiddenError,
  type GeoApiError,
  InvalidRequestError,
  InvalidResponseError,
  NetworkError,
  NotFoundError,
  RateLimitedError,
  ResponseTooLargeError,
  ServerError,
  TimeoutError,
  UnauthorizedError,
} from './errors.ts';
import { maskUrlPassword } from '../redact.ts';
import { unreachableReason } from '../unreachable.ts';
import { parseRetryAfter } from './retry-policy.ts';
import { ErrorBody } from './schemas/envelope.ts';
import type { HttpResponse, TransportFailure } from './transport.ts';

export interface ErrorContext {
  readonly endpoint: EndpointId;
  readonly params: Readonly<Record<string, unknown>>;
  /** Removes any secret from text that came from the server before it goes into a message. */
  readonly scrub: (text: string) => string;
  /** Epoch ms, for a `Retry-After` given as an HTTP date. */
  readonly now: number;
}

/** A server message is shown as is, but a proxy's HTML page is not a message. */
const MAX_SERVER_MESSAGE = 500;

/** The `message` of a failure body (`{success:false, message}` or `{message}`), if any. */
export function serverMessageOf(text: string, scrub: (t: string) => string): string | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  const r = ErrorBody.safeParse(body);
  const m = r.success ? r.data.message : undefined;
  if (!m) return undefined;
  const clean = scrub(m);
  return clean.length > MAX_SERVER_MESSAGE ? `${clean.slice(0, MAX_SERVER_MESSAGE)}...` : clean;
}

export function header(res: HttpResponse, name: string): string | undefined {
  const v = res.headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}

/** The typed error of a non-2xx answer (or of a 2xx answer carrying `success: false`). */
export function errorForResponse(res: HttpResponse, ctx: ErrorContext): GeoApiError {
  const base = {
    endpoint: ctx.endpoint,
    params: ctx.params,
    status: res.status,
    serverMessage: serverMessageOf(res.text, ctx.scrub),
  };
  const s = res.status;
  if (s === 401) return new UnauthorizedError(base);
  if (s === 403) return new ForbiddenError(base);
  if (s === 404) return new NotFoundError(base);
  if (s === 429) {
    return new RateLimitedError({
      ...base,
      retryAfterMs: parseRetryAfter(header(res, 'retry-after'), ctx.now),
    });
  }
  if (s >= 500) return new ServerError(base);
  if (s >= 400 || (s >= 200 && s < 300)) return new BadRequestError(base);
  return new InvalidResponseError({
    ...base,
    reason: `unexpected HTTP status ${s}`,
    retryable: false,
  });
}

/** Where the client's base URL came from, to name it when nothing answers there. */
export interface Origin {
  /** e.g. `GEO_BASE_URL (baseUrl)`, `--base-url (baseUrl)`. */
  readonly setting: string;
  readonly baseUrl: string;
}

/**
 * What a failure says of the base URL's setting when nothing could be reached there (refused, no
 * such host, no route, no answer in time); undefined for other failures (a reset mid-answer).
 */
function unreachable(f: TransportFailure, origin: Origin | undefined, timeoutMs: number): string | undefined {
  if (!origin) return undefined;
  const reason =
    f.kind === 'timeout'
      ? `no answer within ${timeoutMs} ms`
      : f.kind === 'network'
        ? (unreachableReason(f.cause) ?? unreachableReason({ code: f.code }))
        : undefined;
  return reason && maskUrlPassword(`${origin.setting}: cannot reach ${origin.baseUrl} (${reason})`);
}

export function errorForFailure(
  f: TransportFailure,
  ctx: Pick<ErrorContext, 'endpoint' | 'params'>,
  timeoutMs: number,
  origin?: Origin,
): GeoApiError {
  const base = { endpoint: ctx.endpoint, params: ctx.params };
  switch (f.kind) {
    case 'timeout':
      return new TimeoutError({
        ...base,
        timeoutMs,
        cause: f,
        unreachable: unreachable(f, origin, timeoutMs),
      });
    case 'too-large':
      return new ResponseTooLargeError({ ...base, detail: f.message, limitBytes: f.limitBytes, cause: f });
    case 'invalid-request':
      // undici's own message names the option or header ("invalid authorization header"), and
      // the transport's names the header: neither holds its value.
      return new InvalidRequestError({ ...base, detail: f.message, cause: f });
    case 'network':
      return new NetworkError({
        ...base,
        cause: f.cause ?? f,
        unreachable: unreachable(f, origin, timeoutMs),
      });
  }
}
