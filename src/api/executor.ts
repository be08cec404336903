/**
 * The life of one call: headers, then attempts through the shared queue and the transport until
 * one succeeds or the retry table says stop. Every attempt's outcome is looked up in
 * retry-policy.ts; this file only carries out the answer (wait, tell the queue, count, log).
 */
import type { Logger } from 'pino';
import { abortReason, sleep } from '../abort.ts';
import { ENDPOINTS, endpointId, type EndpointId, type EndpointName } from './endpoints.ts';
import {
  type GeoApiError,
  type GeoErrorCode,
  InvalidResponseError,
  isGeoApiError,
  RateLimitedError,
} from './errors.ts';
import { type DecodeContext, parseJson } from './decode.ts';
import { errorForFailure, errorForResponse, type Origin } from './http-errors.ts';
import type { RequestQueue } from './request-queue.ts';
import { type AttemptOutcome, backoffDelayMs, decideRetry } from './retry-policy.ts';
import { type HttpResponse, type Transport, TransportFailure } from './transport.ts';

export interface RetryOptions {
  /** Attempts per call, the first included. @default 6 */
  readonly maxAttempts?: number;
  /** First backoff step, ms (exponential, full jitter). @default 250 */
  readonly baseDelayMs?: number;
  /** Cap of one backoff wait, ms. @default 30000 */
  readonly maxDelayMs?: number;
  /**
   * A `Retry-After` longer than this is not waited out: the call fails with RateLimitedError at
   * once rather than hang a batch job (GEO_MAX_RETRY_AFTER_SECONDS). @default 300000
   */
  readonly maxRetryAfterMs?: number;
}

/** Time, injectable so tests can see the waits without waiting. */
export interface Clock {
  now(): number;
  /** Waits `ms`; rejects with the signal's reason the moment it aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const realClock: Clock = {
  now: () => Date.now(),
  sleep,
};

export interface EndpointStats {
  requests: number;
  retries: number;
  /** Failed attempts (each retried one counts). */
  errors: number;
}

export interface ClientStats {
  /** HTTP attempts sent. */
  requests: number;
  /** Attempts that were a retry of an earlier one. */
  retries: number;
  /** 429 answers. */
  rateLimited: number;
  /** Calls that threw after their last attempt (or before any, e.g. invalid parameters). */
  failures: number;
  /** Per endpoint, keyed `"GET /api/v2/geo/task/results"`. */
  byEndpoint: Partial<Record<EndpointId, EndpointStats>>;
  /** Failed attempts by error code (a 5xx retried twice counts twice), plus refused parameters. */
  errorsByCode: Partial<Record<GeoErrorCode, number>>;
}

export function emptyStats(): ClientStats {
  return { requests: 0, retries: 0, rateLimited: 0, failures: 0, byEndpoint: {}, errorsByCode: {} };
}

/** One call, ready to send. */
export interface CallPlan<T> {
  readonly name: EndpointName;
  /** Parameters as shown in errors and logs (never a secret: login shows the e-mail only). */
  readonly shownParams: Readonly<Record<string, unknown>>;
  /** Path with path parameters filled and the query string appended. */
  readonly path: string;
  /** JSON body; undefined sends no body and no Content-Type. */
  readonly body?: unknown;
  /** A 2xx with an empty body reads as `{}` (logout and edit may answer with nothing). */
  readonly allowEmptyBody?: boolean;
  /** Validates the parsed body; throws InvalidResponseError. */
  readonly decode: (body: unknown, res: HttpResponse, ctx: DecodeContext) => T;
  readonly redact?: (raw: unknown) => unknown;
  /**
   * Ends the call's waits and request instead of the process's stop signal: a logout must still
   * revoke the token while the process is stopping (the stop would abort it), bounded by this.
   */
  readonly signal?: AbortSignal;
  /**
   * Sent once, outside the request queue: not held by a Retry-After pause, the rate gate or a
   * distributed worker's share (a logout at exit; waiting there, it would outlast the stop).
   */
  readonly alone?: boolean;
}

export interface ExecutorDeps {
  readonly transport: Transport;
  readonly queue: RequestQueue;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly random: () => number;
  readonly timeoutMs: number;
  readonly retry: Required<RetryOptions>;
  readonly userAgent: string;
  readonly stats: ClientStats;
  readonly onReject?: DecodeContext['onReject'];
  readonly scrub: (text: string) => string;
  /** The bearer for an authenticated request: at once when in hand, else after a login. */
  readonly bearer: () => string | Promise<string>;
  /** The process's stop signal: ends every wait and the request in flight with its reason. */
  readonly signal?: AbortSignal | undefined;
  /** Where the base URL came from: named when nothing answers there. */
  readonly origin?: Origin | undefined;
}

/**
 * Requests that must not run twice: a repeated legacy create makes a second monitoring task, and
 * a repeated logout answers 401 once the first one worked.
 */
const NOT_IDEMPOTENT: ReadonlySet<EndpointName> = new Set(['legacyProjectCreate', 'logout']);

export class Executor {
  readonly #d: ExecutorDeps;

  constructor(deps: ExecutorDeps) {
    this.#d = deps;
  }

  async call<T>(plan: CallPlan<T>): Promise<T> {
    const d = this.#d;
    const def = ENDPOINTS[plan.name];
    const endpoint = endpointId(plan.name);
    const ctx: DecodeContext = {
      endpoint,
      params: plan.shownParams,
      onReject: d.onReject,
      redact: plan.redact,
    };
    const perEndpoint = (d.stats.byEndpoint[endpoint] ??= { requests: 0, retries: 0, errors: 0 });
    const body = plan.body === undefined ? undefined : JSON.stringify(plan.body);
    const signal = plan.signal ?? d.signal;

    for (let attempt = 1; ; attempt++) {
      if (signal?.aborted) throw abortReason(signal);
      // Headers per attempt: a lazy login happens before the first one, outside any queue slot.
      const headers: Record<string, string> = { accept: 'application/json', 'user-agent': d.userAgent };
      if (def.auth) {
        const bearer = d.bearer();
        headers.authorization = `Bearer ${typeof bearer === 'string' ? bearer : await bearer}`;
      }
      if (body !== undefined) headers['content-type'] = 'application/json';

      d.stats.requests++;
      perEndpoint.requests++;
      if (attempt > 1) {
        d.stats.retries++;
        perEndpoint.retries++;
      }

      const { error, outcome, value } = await this.#attempt(plan, ctx, {
        method: def.method,
        path: plan.path,
        headers,
        body,
        timeoutMs: d.timeoutMs,
        signal,
        priority: attempt > 1 ? 1 : 0,
      });
      if (!error) return value as T;

      perEndpoint.errors++;
      d.stats.errorsByCode[error.code] = (d.stats.errorsByCode[error.code] ?? 0) + 1;
      const rule = decideRetry(outcome, { idempotent: !NOT_IDEMPOTENT.has(plan.name) });
      const retryAfterMs = error instanceof RateLimitedError ? error.retryAfterMs : undefined;
      if (retryAfterMs !== undefined && retryAfterMs > d.retry.maxRetryAfterMs) {
        // Not waited out: a batch job must not hang for an hour on one answer. The error names
        // the wait asked for and the cap, so the operator can raise the cap or come back later.
        const tooLong = new RateLimitedError({
          endpoint,
          params: plan.shownParams,
          retryAfterMs,
          maxRetryAfterMs: d.retry.maxRetryAfterMs,
          attempts: attempt,
          cause: error.cause,
        });
        d.stats.failures++;
        d.logger.warn(
          { endpoint, params: plan.shownParams, attempts: attempt, retryAfterMs, code: tooLong.code },
          'Retry-After above the cap: request failed',
        );
        throw tooLong;
      }
      if (rule.action === 'fail' || attempt >= d.retry.maxAttempts || plan.alone) {
        error.attempts = attempt;
        d.stats.failures++;
        d.logger.debug(
          { endpoint, params: plan.shownParams, attempts: attempt, code: error.code, rule: rule.label },
          'request failed',
        );
        throw error;
      }
      const delayMs =
        rule.action === 'rate-limited' && retryAfterMs !== undefined
          ? retryAfterMs
          : backoffDelayMs(attempt - 1, d.retry, d.random);
      // Retries are routine (debug); a rate limit slows the whole process, worth an info line.
      d.logger[rule.action === 'rate-limited' ? 'info' : 'debug'](
        {
          endpoint,
          params: plan.shownParams,
          attempt,
          code: error.code,
          status: error.status,
          rule: rule.label,
          delayMs,
        },
        'retrying request',
      );
      await d.clock.sleep(delayMs, signal);
    }
  }

  /** One attempt: a typed error and its outcome, or the decoded value. Never throws a GeoApiError. */
  async #attempt<T>(
    plan: CallPlan<T>,
    ctx: DecodeContext,
    req: {
      method: 'GET' | 'POST';
      path: string;
      headers: Record<string, string>;
      body: string | undefined;
      timeoutMs: number;
      signal: AbortSignal | undefined;
      priority: number;
    },
  ): Promise<
    | { error: undefined; outcome?: undefined; value: T }
    | { error: GeoApiError; outcome: AttemptOutcome; value?: undefined }
  > {
    const d = this.#d;
    let res: HttpResponse;
    try {
      res = plan.alone
        ? await d.transport.send(req)
        : await d.queue.run(() => d.transport.send(req), {
            priority: req.priority,
            ...(req.signal ? { signal: req.signal } : {}),
          });
    } catch (e) {
      // Stopped by the process's signal: not an outcome of the request, never retried.
      if (req.signal?.aborted) throw abortReason(req.signal);
      if (!(e instanceof TransportFailure)) throw e;
      return {
        error: errorForFailure(e, ctx, req.timeoutMs, d.origin),
        outcome: e.kind === 'network' ? { kind: 'network', code: e.code } : { kind: e.kind },
      };
    }
    d.logger.debug({ endpoint: ctx.endpoint, status: res.status }, 'response');

    const status = res.status;
    if (status === 429) {
      d.stats.rateLimited++;
      const error = errorForResponse(res, { ...ctx, scrub: d.scrub, now: d.clock.now() });
      d.queue.reportRateLimited(error instanceof RateLimitedError ? error.retryAfterMs : undefined);
      return { error, outcome: { kind: 'status', status } };
    }
    if (status < 200 || status >= 300) {
      return {
        error: errorForResponse(res, { ...ctx, scrub: d.scrub, now: d.clock.now() }),
        outcome: { kind: 'status', status },
      };
    }
    d.queue.reportSuccess();
    try {
      const json = plan.allowEmptyBody && res.text.trim() === '' ? {} : parseJson(res.text, ctx);
      // A 2xx carrying `success: false` is a refusal in legacy style, not data.
      if (isRecord(json) && json.success === false) {
        return {
          error: errorForResponse(res, { ...ctx, scrub: d.scrub, now: d.clock.now() }),
          outcome: { kind: 'status', status },
        };
      }
      return { error: undefined, value: plan.decode(json, res, ctx) };
    } catch (e) {
      if (e instanceof InvalidResponseError) {
        return {
          error: e,
          outcome: e.retryable ? { kind: 'unparseable-body' } : { kind: 'schema-mismatch' },
        };
      }
      if (isGeoApiError(e)) return { error: e, outcome: { kind: 'schema-mismatch' } };
      throw e;
    }
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
