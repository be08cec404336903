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
  /**
   * Attempts in flight per stop signal, so one listener per signal ends them all, instead of a
   * listener added and removed for every request (profiled at latency 0: 8% of a sync's own CPU
   * ran under undici's request API, its per-response Readable stream and the AbortController).
   */
  readonly #inflight = new WeakMap<AbortSignal, Set<ResponseCollector>>();

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

  send(req: HttpRequest): Promise<HttpResponse> {
    const signal = req.signal;
    if (signal?.aborted) return Promise.reject(signal.reason ?? new Error('aborted'));
    return new Promise<HttpResponse>((resolve, reject) => {
      const collector = new ResponseCollector(resolve, reject, req.timeoutMs, signal, this.#untrack);
      if (signal) this.#track(signal, collector);
      try {
        this.#dispatcher.dispatch(
          {
            origin: this.origin,
            path: this.#prefix + req.path,
            method: req.method,
            headers: req.headers,
            body: req.body ?? null,
            // undici's own timers stay as a backstop behind ours (its defaults are 300 s).
            headersTimeout: req.timeoutMs + 1000,
            bodyTimeout: req.timeoutMs + 1000,
          },
          collector,
        );
      } catch (e) {
        // Invalid options: undici throws synchronously instead of calling the handler.
        collector.onResponseError(null, e as Error);
      }
    });
  }

  #track(signal: AbortSignal, collector: ResponseCollector): void {
    let set = this.#inflight.get(signal);
    if (!set) {
      const created = new Set<ResponseCollector>();
      set = created;
      this.#inflight.set(signal, created);
      signal.addEventListener(
        'abort',
        () => {
          for (const c of [...created]) c.stop(signal.reason ?? new Error('aborted'));
        },
        { once: true },
      );
    }
    set.add(collector);
  }

  readonly #untrack = (signal: AbortSignal, collector: ResponseCollector): void => {
    this.#inflight.get(signal)?.delete(collector);
  };

  /** Closes the Pool it created; an injected dispatcher belongs to the caller. */
  async close(): Promise<void> {
    if (this.#ownsDispatcher) await this.#dispatcher.close();
  }
}

/**
 * One attempt's handler on undici's dispatch API: the status and headers, the body's chunks
 * joined once at the end, and one timer for the whole attempt. It settles exactly once: with the
 * response, with a `TransportFailure` (socket error, timeout), or with the stop signal's reason.
 */
class ResponseCollector implements Dispatcher.DispatchHandler {
  #status = 0;
  #headers: Record<string, string | string[] | undefined> = {};
  #chunks: Buffer[] = [];
  #controller: Dispatcher.DispatchController | null = null;
  /** Why the attempt was ended before it finished (timeout or stop), to abort it once it starts. */
  #abortReason: Error | null = null;
  #settled = false;
  readonly #timer: NodeJS.Timeout;

  constructor(
    private readonly resolve: (r: HttpResponse) => void,
    private readonly reject: (e: unknown) => void,
    timeoutMs: number,
    private readonly signal: AbortSignal | undefined,
    private readonly untrack: (signal: AbortSignal, c: ResponseCollector) => void,
  ) {
    this.#timer = setTimeout(() => this.#end(new TransportFailure('timeout', undefined, null)), timeoutMs);
  }

  /** The stop signal fired: reject with its reason at once and abort the request. */
  stop(reason: unknown): void {
    this.#end(reason instanceof Error ? reason : new Error(String(reason)), reason);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#abortReason) controller.abort(this.#abortReason);
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    this.#status = statusCode;
    this.#headers = headers;
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.#chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.#settled) return;
    this.#finish();
    const chunks = this.#chunks;
    const text = chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
    this.#chunks = [];
    this.resolve({ status: this.#status, headers: this.#headers, text });
  }

  onResponseError(_controller: Dispatcher.DispatchController | null, err: Error): void {
    if (this.#settled) return;
    this.#finish();
    this.reject(new TransportFailure('network', errorCode(err), err));
  }

  /** Ends the attempt early: rejects with `error` (or `reason`, the signal's own) and aborts it. */
  #end(error: Error, reason: unknown = error): void {
    if (this.#settled) return;
    this.#finish();
    this.#abortReason = error;
    this.#controller?.abort(error);
    this.reject(reason ?? error);
  }

  #finish(): void {
    this.#settled = true;
    clearTimeout(this.#timer);
    if (this.signal) this.untrack(this.signal, this);
  }
}

/** The most specific code of a socket error: undici's own, else its cause's (`ECONNRESET`). */
function errorCode(e: unknown): string | undefined {
  const own = (e as { code?: unknown } | null)?.code;
  if (typeof own === 'string') return own;
  const cause = (e as { cause?: { code?: unknown } } | null)?.cause?.code;
  return typeof cause === 'string' ? cause : undefined;
}
