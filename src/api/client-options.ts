/**
 * What a GeoClient is built from (GeoClientOptions) and the parameters of its methods, as the
 * caller writes them; the client itself is client.ts.
 */
import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import type { z } from 'zod';
import type { AuthOptions } from './auth.ts';
import type { RejectedRecord } from './decode.ts';
import type { Params } from './endpoints.ts';
import type { Clock, RetryOptions } from './executor.ts';
import type { RequestQueue } from './request-queue.ts';
import type { LoginData } from './schemas/account.ts';

export interface GeoClientOptions {
  /** The API's base address; a path in it prefixes every endpoint path. */
  baseUrl: string;
  auth: AuthOptions;
  /** Used instead of the client's own undici Pool when given (e.g. a MockAgent). */
  dispatcher?: Dispatcher;
  /** Share one per process: the rate limit is the key's. @default a new RequestQueue() */
  queue?: RequestQueue;
  /** Per attempt, headers and body. @default 30000 */
  timeoutMs?: number;
  /**
   * A response body longer than this fails its request at once (RESPONSE_TOO_LARGE, not retried),
   * without being held in memory. @default 64 MiB
   */
  maxResponseBytes?: number;
  retry?: RetryOptions;
  /** Receives list items that failed validation; without it such an item fails the call. */
  onReject?: (r: RejectedRecord) => void;
  logger?: Logger;
  /** @default "geo-sync" */
  userAgent?: string;
  /** More pages than this in one paged read is a loop. @default 10000 */
  maxPages?: number;
  /** Tests: time and sleeping. @default the real clock */
  clock?: Clock;
  /** Tests: the jitter source in [0, 1). @default Math.random */
  random?: () => number;
  /**
   * The process's stop signal (SIGINT/SIGTERM): every wait (queue pause, AIMD gate, backoff) and
   * every request in flight ends at once with its reason when it aborts. Not `logout()`, which
   * revokes a login token at exit: it has a bound of its own (3 s once this has aborted).
   */
  signal?: AbortSignal;
  /**
   * Where `baseUrl` came from, as the user gave it (the CLI: `GEO_BASE_URL (baseUrl)`, `--base-url
   * (baseUrl)` or the config file's key). When set, a request that reaches nothing there (refused,
   * no such host, no route, no answer in time) fails naming it: `GEO_BASE_URL (baseUrl): cannot
   * reach https://... (connection refused: ...)`. @default unset: the socket's code alone
   */
  baseUrlSetting?: string;
}

/** Parameters of each method, as the caller writes them (the spec's snake_case names). */
export type In<K extends keyof typeof Params> = z.input<(typeof Params)[K]>;

export type LoginParams = In<'login'>;
export type CustomerProjectsParams = In<'customerProjects'>;
export type TaskResultsParams = In<'taskResults'>;
export type PromptSearchesParams = In<'promptSearches'>;
export type PromptProductsParams = In<'promptProducts'>;
export type LegacyCreateParams = In<'legacyCreate'>;
export type LegacyEditParams = In<'legacyEdit'>;
export type LegacyProjectListParams = In<'legacyProjectList'>;
export type LegacyTaskSearchesParams = In<'legacyTaskSearches'>;
export type DeductionDetailsParams = In<'deductionDetails'>;

/**
 * What `login()` returns: the token type and the user. The token stays inside the client, and
 * fields the spec does not name are left out too (they could hold another credential).
 */
export interface LoginResult {
  token_type: string;
  user: LoginData['user'];
}
