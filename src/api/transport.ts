/**
 * One HTTP attempt over undici, and nothing more: no retries, no status interpretation, no JSON.
 * It answers with the status, headers and body text, or throws a `TransportFailure` saying whether
 * the socket failed or the time ran out, so the retry table can read either.
 *
 * The default dispatcher is one keep-alive `Pool` for the base URL's origin, with as many
 * connections as the queue lets requests run at once and no pipelining (a slow answer must not
 * hold up the ones queued behind it on the same socket). Tests hand in a `MockAgent` instead.
 *
 * Two things never reach undici: a body over `maxResponseBytes` is not collected (the attempt is
 * aborted the moment the count passes it), and a request undici would refuse (a header value with
 * CR, LF or NUL) is not dispatched: undici's Pool takes a client that refused a request for a busy
 * one, and after as many refusals as it has connections it queues every later request for good.
 */
import { Pool, type Dispatcher } from 'undici';
import { invalidHeaderValue } from './header-value.ts';
import { CLIENT_REFUSAL_CODES } from './retry-policy.ts';

/** 64 MiB: far above any real answer (the largest, a task/results page, is well under 1 MiB). */
export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

export interface TransportOptions {
  /** Base URL; its path (if any) prefixes every endpoint path. */
  readonly baseUrl: string;
  /** Used instead of the Pool when given (e.g. a MockAgent); the transport does not close it. */
  readonly dispatcher?: Dispatcher | undefined;
  /** Pool connections; match the queue's maximum concurrency. @default 8 */
  readonly connections?: number;
  /** A body longer than this fails its attempt (`too-large`). @default DEFAULT_MAX_RESPONSE_BYTES */
  readonly maxResponseBytes?: number;
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

/**
 * The attempt got no complete response: `network` (socket), `timeout`, `too-large` (the body
 * passed `maxResponseBytes`, or could not be held as text) or `invalid-request` (the request was
 * refused before it was sent, e.g. a header value with CR or LF; never worth a retry).
 */
export type TransportFailureKind = 'network' | 'timeout' | 'too-large' | 'invalid-request';

export class TransportFailure extends Error {
  readonly kind: TransportFailureKind;
  /** The socket error's code (`ECONNRESET`, `UND_ERR_SOCKET`...), for the retry table. */
  readonly code: string | undefined;
  /** `too-large`: the cap the body passed, in bytes. */
  readonly limitBytes: number | undefined;
  constructor(
    kind: TransportFailureKind,
    code: string | undefined,
    cause: unknown,
    detail: { message?: string; limitBytes?: number } = {},
  ) {
    super(detail.message ?? (kind === 'timeout' ? 'timed out' : `${kind} (${code ?? 'unknown'})`), { cause });
    this.name = 'TransportFailure';
    this.kind = kind;
    this.code = code;
    this.limitBytes = detail.limitBytes;
  }
}

export class Transport {
  readonly origin: string;
  readonly #prefix: string;
  readonly #dispatcher: Dispatcher;
  readonly #ownsDispatcher: boolean;
  readonly #maxResponseBytes: number;
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
    this.#maxResponseBytes = opts.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
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
    const refused = refusal(req);
    if (refused) return Promise.reject(refused);
    return new Promise<HttpResponse>((resolve, reject) => {
      const collector = new ResponseCollector(
        resolve,
        reject,
        req.timeoutMs,
        this.#maxResponseBytes,
        signal,
        this.#untrack,
      );
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
        // Thrown by the dispatcher itself rather than handed to the handler (a custom one).
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
 * Refuses, before dispatching, what undici would refuse: a header value it cannot send. The
 * failure names the header, never its value (it is usually the Authorization header).
 */
function refusal(req: HttpRequest): TransportFailure | null {
  for (const [name, value] of Object.entries(req.headers)) {
    const problem = invalidHeaderValue(value);
    if (problem)
      return new TransportFailure('invalid-request', 'UND_ERR_INVALID_ARG', null, {
        message: `the ${name} header cannot be sent: its value ${problem}`,
      });
  }
  return null;
}

/**
 * One attempt's handler on undici's dispatch API: the status and headers, the body's chunks
 * counted as they come and joined once at the end, and one timer for the whole attempt. It
 * settles exactly once, whatever throws where: with the response, with a `TransportFailure`
 * (socket error, timeout, body over the cap or not convertible), or with the stop signal's reason.
 */
class ResponseCollector implements Dispatcher.DispatchHandler {
  #status = 0;
  #headers: Record<string, string | string[] | undefined> = {};
  #chunks: Buffer[] = [];
  #bytes = 0;
  #controller: Dispatcher.DispatchController | null = null;
  /** Why the attempt was ended before it finished (timeout or stop), to abort it once it starts. */
  #abortReason: Error | null = null;
  #settled = false;
  readonly #timer: NodeJS.Timeout;

  constructor(
    private readonly resolve: (r: HttpResponse) => void,
    private readonly reject: (e: unknown) => void,
    timeoutMs: number,
    private readonly maxBytes: number,
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
    // A body announced over the cap is refused before its first byte is read.
    const declared = Number(headers['content-length']);
    if (Number.isFinite(declared) && declared > this.maxBytes) this.#tooLarge(declared);
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#settled) return;
    this.#bytes += chunk.length;
    // Counted as it comes: the attempt ends the moment the cap is passed, so a body of any size
    // costs at most the cap in memory.
    if (this.#bytes > this.maxBytes) this.#tooLarge();
    else this.#chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.#settled) return;
    let text: string;
    try {
      text = bodyText(this.#chunks);
    } catch (e) {
      // A body the process cannot hold as one string (ERR_STRING_TOO_LONG, an allocation that
      // failed): the attempt fails, it is never left unsettled.
      this.#chunks = [];
      this.#end(
        new TransportFailure('too-large', errorCode(e), e, {
          message: `the body of ${this.#bytes} bytes could not be read as text`,
          limitBytes: this.maxBytes,
        }),
      );
      return;
    }
    this.#chunks = [];
    this.#finish();
    this.resolve({ status: this.#status, headers: this.#headers, text });
  }

  onResponseError(_controller: Dispatcher.DispatchController | null, err: Error): void {
    if (this.#settled) return;
    this.#finish();
    const code = errorCode(err);
    // undici refusing the request itself (an option or header it will not send) is no network
    // failure: the same request is refused again.
    const kind = (CLIENT_REFUSAL_CODES as readonly (string | undefined)[]).includes(code)
      ? 'invalid-request'
      : 'network';
    this.reject(new TransportFailure(kind, code, err));
  }

  #tooLarge(declared?: number): void {
    this.#chunks = [];
    this.#end(
      new TransportFailure('too-large', undefined, null, {
        message:
          declared !== undefined ? `announced as ${declared} bytes` : `aborted after ${this.#bytes} bytes`,
        limitBytes: this.maxBytes,
      }),
    );
  }

  /** Ends the attempt early: rejects with `error` (or `reason`, the signal's own) and aborts it. */
  #end(error: Error, reason: unknown = error): void {
    if (this.#settled) return;
    this.#finish();
    this.#abortReason = error;
    // Settled before the abort: whatever undici does on abort cannot keep the promise open.
    this.reject(reason ?? error);
    try {
      this.#controller?.abort(error);
    } catch {
      // The request is over either way; its promise has its answer.
    }
  }

  #finish(): void {
    this.#settled = true;
    clearTimeout(this.#timer);
    if (this.signal) this.untrack(this.signal, this);
  }
}

/** The body's chunks as one UTF-8 string (a chunk boundary may split a character). */
function bodyText(chunks: readonly Buffer[]): string {
  return chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
}

/** The most specific code of a socket error: undici's own, else its cause's (`ECONNRESET`). */
function errorCode(e: unknown): string | undefined {
  const own = (e as { code?: unknown } | null)?.code;
  if (typeof own === 'string') return own;
  const cause = (e as { cause?: { code?: unknown } } | null)?.cause?.code;
  return typeof cause === 'string' ? cause : undefined;
}
