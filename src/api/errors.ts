/**
 * Typed API errors. One base class; each subclass fixes a stable `code` that callers branch on,
 * and carries its context: HTTP status, endpoint (`GET /api/v2/...`), the request's parameters,
 * whether it may be retried, the attempts made, and the `cause`. Messages name the endpoint and
 * parameters, never an API key, token or password: parameters never hold secrets (auth travels in
 * a header and login's body is never copied into an error).
 */
export type GeoErrorCode =
  | 'INVALID_PARAMS'
  | 'NOT_FOUND'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'BAD_REQUEST'
  | 'RATE_LIMITED'
  | 'SERVER_ERROR'
  | 'NETWORK'
  | 'TIMEOUT'
  | 'INVALID_RESPONSE'
  | 'RESPONSE_TOO_LARGE'
  | 'INVALID_REQUEST'
  | 'PAGE_LOOP';

export interface GeoErrorContext {
  endpoint: string;
  params?: Readonly<Record<string, unknown>> | undefined;
  status?: number | undefined;
  /** The server's own message (400/422/404 bodies), shown as is. */
  serverMessage?: string | undefined;
  attempts?: number | undefined;
  cause?: unknown;
}

export abstract class GeoApiError extends Error {
  abstract readonly code: GeoErrorCode;
  /** Whether the retry policy may try this request again. */
  abstract readonly retryable: boolean;
  readonly endpoint: string;
  readonly params: Readonly<Record<string, unknown>> | undefined;
  readonly status: number | undefined;
  readonly serverMessage: string | undefined;
  attempts: number;

  constructor(summary: string, ctx: GeoErrorContext) {
    super(
      `${summary}: ${ctx.endpoint}${formatParams(ctx.params)}${ctx.serverMessage ? ` - ${ctx.serverMessage}` : ''}`,
      {
        cause: ctx.cause,
      },
    );
    this.endpoint = ctx.endpoint;
    this.params = ctx.params;
    this.status = ctx.status;
    this.serverMessage = ctx.serverMessage;
    this.attempts = ctx.attempts ?? 1;
  }

  override get name(): string {
    return this.constructor.name;
  }

  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      code: this.code,
      message: this.message,
      endpoint: this.endpoint,
      params: this.params,
      status: this.status,
      attempts: this.attempts,
      retryable: this.retryable,
    };
  }
}

function formatParams(params: Readonly<Record<string, unknown>> | undefined): string {
  if (!params) return '';
  const entries = Object.entries(params).filter(([, v]) => v !== undefined);
  if (entries.length === 0) return '';
  return ` (${entries.map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join(', ')})`;
}

/** Parameters refused before any request was sent. */
export class InvalidParamsError extends GeoApiError {
  readonly code = 'INVALID_PARAMS' as const;
  readonly retryable = false;
  constructor(ctx: GeoErrorContext & { problems: string }) {
    super(`invalid parameters (${ctx.problems})`, ctx);
  }
}

export class NotFoundError extends GeoApiError {
  readonly code = 'NOT_FOUND' as const;
  readonly retryable = false;
  constructor(ctx: GeoErrorContext) {
    super('not found (404)', { status: 404, ...ctx });
  }
}

export class UnauthorizedError extends GeoApiError {
  readonly code = 'UNAUTHORIZED' as const;
  readonly retryable = false;
  constructor(ctx: GeoErrorContext) {
    super('unauthorized (401): the API key or token is missing, wrong or revoked', { status: 401, ...ctx });
  }
}

export class ForbiddenError extends GeoApiError {
  readonly code = 'FORBIDDEN' as const;
  readonly retryable = false;
  constructor(ctx: GeoErrorContext) {
    super('forbidden (403)', { status: 403, ...ctx });
  }
}

/** 400 and 422: the server refused the request; its message is kept as is. */
export class BadRequestError extends GeoApiError {
  readonly code = 'BAD_REQUEST' as const;
  readonly retryable = false;
  constructor(ctx: GeoErrorContext) {
    super(`bad request (${ctx.status ?? 400})`, ctx);
  }
}

export class RateLimitedError extends GeoApiError {
  readonly code = 'RATE_LIMITED' as const;
  readonly retryable = true;
  /** Milliseconds the server asked to wait (Retry-After), if it said. */
  readonly retryAfterMs: number | undefined;
  /**
   * `maxRetryAfterMs`: the longest wait the client accepts; a `Retry-After` above it is named in
   * the message, so the reader sees why the request was not simply retried.
   */
  constructor(
    ctx: GeoErrorContext & { retryAfterMs?: number | undefined; maxRetryAfterMs?: number | undefined },
  ) {
    const asked = ctx.retryAfterMs;
    const tooLong = asked !== undefined && ctx.maxRetryAfterMs !== undefined && asked > ctx.maxRetryAfterMs;
    super(
      tooLong
        ? `rate limited (429): the server asked to wait ${seconds(asked)} s (Retry-After), more than the ` +
            `${seconds(ctx.maxRetryAfterMs!)} s allowed (GEO_MAX_RETRY_AFTER_SECONDS)`
        : `rate limited (429${asked !== undefined ? `, Retry-After ${seconds(asked)} s` : ''})`,
      { status: 429, ...ctx },
    );
    this.retryAfterMs = asked;
  }
}

export class ServerError extends GeoApiError {
  readonly code = 'SERVER_ERROR' as const;
  readonly retryable = true;
  constructor(ctx: GeoErrorContext) {
    super(`server error (${ctx.status ?? 500})`, ctx);
  }
}

/** Connection refused or reset, DNS, TLS: the request may not have reached the server. */
/**
 * `unreachable`, when the client knows where its base URL came from and nothing could be reached
 * there: that setting and why (`GEO_BASE_URL (baseUrl): cannot reach https://... (connection
 * refused: ...)`), said in place of the bare socket code.
 */
export class NetworkError extends GeoApiError {
  readonly code = 'NETWORK' as const;
  readonly retryable = true;
  constructor(ctx: GeoErrorContext & { unreachable?: string | undefined }) {
    super(ctx.unreachable ?? `network error (${describeCause(ctx.cause)})`, ctx);
  }
}

/** `unreachable`: as NetworkError's, for an API that did not answer in time. */
export class TimeoutError extends GeoApiError {
  readonly code = 'TIMEOUT' as const;
  readonly retryable = true;
  constructor(ctx: GeoErrorContext & { timeoutMs: number; unreachable?: string | undefined }) {
    super(ctx.unreachable ?? `timed out after ${ctx.timeoutMs} ms`, ctx);
  }
}

/**
 * The body is not JSON (retryable: usually a truncated or garbled response), or it does not match
 * the schema (not retryable: the server will say the same again). `field` names the first bad
 * path; `raw` keeps the payload for quarantine and is never put in the message.
 */
export class InvalidResponseError extends GeoApiError {
  readonly code = 'INVALID_RESPONSE' as const;
  readonly retryable: boolean;
  readonly field: string | undefined;
  readonly raw: unknown;
  constructor(
    ctx: GeoErrorContext & { reason: string; field?: string | undefined; raw?: unknown; retryable: boolean },
  ) {
    super(`invalid response (${ctx.field ? `${ctx.field}: ` : ''}${ctx.reason})`, ctx);
    this.retryable = ctx.retryable;
    this.field = ctx.field;
    this.raw = ctx.raw;
  }
}

/**
 * The answer's body passed the size cap (GEO_MAX_RESPONSE_BYTES), or was too large to read as
 * text: the attempt was aborted without holding the body. Not retryable: the server would send
 * the same body again.
 */
export class ResponseTooLargeError extends GeoApiError {
  readonly code = 'RESPONSE_TOO_LARGE' as const;
  readonly retryable = false;
  readonly limitBytes: number | undefined;
  constructor(ctx: GeoErrorContext & { limitBytes?: number | undefined; detail: string }) {
    super(
      `response too large (${ctx.detail}${ctx.limitBytes !== undefined ? `; limit ${mebibytes(ctx.limitBytes)}, GEO_MAX_RESPONSE_BYTES` : ''})`,
      ctx,
    );
    this.limitBytes = ctx.limitBytes;
  }
}

/**
 * The HTTP client refused to send the request (undici's UND_ERR_INVALID_ARG and the like: a
 * header value with CR or LF). Not retryable: the same request is refused again. The message
 * names what was refused, never a header's value.
 */
export class InvalidRequestError extends GeoApiError {
  readonly code = 'INVALID_REQUEST' as const;
  readonly retryable = false;
  constructor(ctx: GeoErrorContext & { detail: string }) {
    super(`request not sent (${ctx.detail})`, ctx);
  }
}

/** A paginator saw the same page twice, or pages that never end. */
export class PageLoopError extends GeoApiError {
  readonly code = 'PAGE_LOOP' as const;
  readonly retryable = false;
  constructor(ctx: GeoErrorContext & { detail: string }) {
    super(`loop detected in pagination (${ctx.detail})`, ctx);
  }
}

function mebibytes(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  return Number.isInteger(mib) ? `${mib} MiB` : `${bytes} bytes`;
}

function seconds(ms: number): string {
  return String(Math.round(ms / 100) / 10);
}

function describeCause(cause: unknown): string {
  if (cause && typeof cause === 'object') {
    const c = cause as { code?: unknown; message?: unknown };
    if (typeof c.code === 'string') return c.code;
    if (typeof c.message === 'string') return c.message;
  }
  return 'unknown';
}

export function isGeoApiError(e: unknown): e is GeoApiError {
  return e instanceof GeoApiError;
}
