/**
 * One HTTP attempt over undici, and nothing more: no retries, no status interpretation, no JSON.
 * It answers with the status, headers and body text, or throws a `TransportFailure` saying whether
 * the socket failed or the time ran out, so the retry table can read either.
 *
 * The default dispatcher is one keep-alive `Pool` for the base URL's origin, with as many
 * connections as the queue lets requests run at once and no pipelining (a slow answer must not
 * hold up the ones queued behind it on the same socket). Tests hand in a `MockAgent` instead.
 */
import { Pool, type Dispatcher } from 'undici';

export interface TransportOptions {
  /** Base URL; its path (if any) prefixes every endpoint path. */
  readonly baseUrl: string;
  /** Used instead of the Pool when given (e.g. a MockAgent); the transport does not close it. */
  readonly dispatcher?: Dispatcher | undefined;
  /** Pool connections; match the queue's maximum concurrency. @default 8 */
  readonly connections?: number;
}

export interface HttpRequest {
  readonly method: 'GET' | 'POST';
  /** Endpoint path with its query string, e.g. `/api/v2/geo/task/info?task_id=1`. */
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string | undefined;
  /** Whole attempt, from sending to the last byte of the body. */
  readonly timeoutMs: number;
  /** Ends the attempt at once (the process is stopping); the send rejects with its reason. */
  readonly signal?: AbortSignal | undefined;
}

export interface HttpResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly text: string;
}

/** The attempt got no complete response: `network` (socket) or `timeout`. */
export class TransportFailure extends Error {
  readonly kind: 'network' | 'timeout';
  /** The socket error's code (`ECONNRESET`, `UND_ERR_SOCKET`...), for the retry table. */
  readonly code: string | undefined;
  constructor(kind: 'network' | 'timeout', code: string | undefined, cause: unknown) {
    super(kind === 'timeout' ? 'timed out' : `network error (${code ?? 'unknown'})`, { cause });
    this.name = 'TransportFailure';
    this.kind = kind;
    this.code = code;
  }
}

export class Transport {
  readonly origin: string;
  readonly #prefix: string;
  readonly #dispatcher: Dispatcher;
  readonly #ownsDispatcher: boolean;

  constructor(opts: TransportOptions) {
    const url = new URL(opts.baseUrl);
    this.origin = url.origin;
    this.#prefix = url.pathname.replace(/\/+$/, '');
    if (opts.dispatcher) {
      this.#dispatcher = opts.dispatcher;
      this.#ownsDispatcher = false;
    } else {
      this.#dispatcher = new Pool(this.origin, {
        connections: opts.connections ?? 8,
        pipelining: 1,
        keepAliveTimeout: 30_000,
      });
      this.#ownsDispatcher = true;
    }
  }

  async send(req: HttpRequest): Promise<HttpResponse> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), req.timeoutMs);
    const stop = () => controller.abort();
    if (req.signal?.aborted) stop();
    req.signal?.addEventListener('abort', stop, { once: true });
    try {
      const res = await this.#dispatcher.request({
        origin: this.origin,
        path: this.#prefix + req.path,
        method: req.method,
        headers: req.headers,
        body: req.body ?? null,
        signal: controller.signal,
        // undici's own timers stay as a backstop behind ours (its defaults are 300 s).
        headersTimeout: req.timeoutMs + 1000,
        bodyTimeout: req.timeoutMs + 1000,
      });
      const text = await res.body.text();
      return { status: res.statusCode, headers: res.headers, text };
    } catch (e) {
      if (req.signal?.aborted) throw req.signal.reason ?? e;
      if (controller.signal.aborted) throw new TransportFailure('timeout', undefined, e);
      throw new TransportFailure('network', errorCode(e), e);
    } finally {
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', stop);
    }
  }

  /** Closes the Pool it created; an injected dispatcher belongs to the caller. */
  async close(): Promise<void> {
    if (this.#ownsDispatcher) await this.#dispatcher.close();
  }
}

/** The most specific code of a socket error: undici's own, else its cause's (`ECONNRESET`). */
function errorCode(e: unknown): string | undefined {
  const own = (e as { code?: unknown } | null)?.code;
  if (typeof own === 'string') return own;
  const cause = (e as { cause?: { code?: unknown } } | null)?.cause?.code;
  return typeof cause === 'string' ? cause : undefined;
}
