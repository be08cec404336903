/**
 * GeoClient: one typed method per endpoint of the spec (the 26 keys of ENDPOINTS), parameters named
 * as the spec names them. Every method checks its parameters with the zod schema of endpoints.ts
 * before anything is sent, and validates the answer the moment it arrives (decode.ts). Retries,
 * rate control and transport live in their own modules; this file only says, per endpoint, what
 * to send and how to read what comes back.
 *
 * Paged endpoints have three readers:
 * - `client.taskResults({ task_id, date, page })`: one page, `Page<T>`;
 * - `client.pages.taskResults({ task_id, date })`: every page, `AsyncIterable<Page<T>>`;
 * - `client.all.taskResults({ task_id, date })`: every item of every page, `AsyncIterable<T>`.
 * Without `per_page` (`limit` for legacy sources) all three ask for the maximum the spec allows,
 * so page N means the same thing in each and a day costs the fewest requests.
 *
 * Its options and parameter types are in client-options.ts, the decoders of the answers in
 * client-decoders.ts.
 */
import type { z } from 'zod';
import { registerSecret, silentLogger } from '../log.ts';
import { Credentials } from './auth.ts';
import { DECODE, GET_DECODERS, type GetEndpoint } from './client-decoders.ts';
import type { GeoClientOptions, In, LoginParams, LoginResult } from './client-options.ts';
import { decodeBody, describeIssues, type DecodeContext } from './decode.ts';
import { ENDPOINTS, endpointId, type EndpointName, Params } from './endpoints.ts';
import { InvalidParamsError } from './errors.ts';
import { type ClientStats, emptyStats, Executor, realClock } from './executor.ts';
import {
  type FetchedPage,
  type ItemReaders,
  itemsOf,
  type LegacySearchesPage,
  type Page,
  type PageReaders,
  paginate,
  type ProductsPage,
} from './paging.ts';
import { RequestQueue } from './request-queue.ts';
import type { Balance, Deduction, User } from './schemas/account.ts';
import type { SiteDiagnosis } from './schemas/diagnosis.ts';
import { MessageOnly } from './schemas/envelope.ts';
import type {
  MonitoringTask,
  PlatformTask,
  PromptExecution,
  PromptResult,
  PromptResultItem,
  Screenshot,
  Source,
} from './schemas/hierarchical.ts';
import type {
  LegacyCreated,
  LegacyDailyItem,
  LegacyMonitoringTask,
  LegacyMonitoringTaskDetail,
  LegacyResult,
  LegacyScreenshot,
  LegacyTaskDetail,
} from './schemas/legacy.ts';
import { Transport } from './transport.ts';

export type { AuthOptions } from './auth.ts';
export type { RejectedRecord } from './decode.ts';
export type { ClientStats, EndpointStats, RetryOptions, Clock } from './executor.ts';
export type { Page, ProductsPage, LegacySearchesPage, LegacyPagination } from './paging.ts';
export type {
  CustomerProjectsParams,
  DeductionDetailsParams,
  GeoClientOptions,
  LegacyCreateParams,
  LegacyEditParams,
  LegacyProjectListParams,
  LegacyTaskSearchesParams,
  LoginParams,
  LoginResult,
  PromptProductsParams,
  PromptSearchesParams,
  TaskResultsParams,
} from './client-options.ts';

/** Largest page sizes the spec allows (section 8); 100 where it names no maximum. */
export const MAX_PAGE_SIZE = {
  customerProjects: 100,
  taskResults: 100,
  promptSearches: 1000,
  promptProducts: 100,
  legacyProjectList: 100,
  legacyTaskSearches: 1000,
  deductionDetails: 100,
} as const;

/** How long a logout may take (see logout()); once the client's stop signal fired, the shorter. */
export const LOGOUT_TIMEOUT_MS = 10_000;
export const LOGOUT_WHEN_STOPPING_MS = 3_000;

export class GeoClient {
  /** Counters: HTTP attempts, retries, 429s, failures, per endpoint and per error code. */
  readonly stats: ClientStats = emptyStats();
  /** The rate-controlled queue every request of this client goes through. */
  readonly queue: RequestQueue;
  /** Every page of a paged endpoint: `for await (const page of client.pages.taskResults(p))`. */
  readonly pages: PageReaders;
  /** Every item of every page: `for await (const row of client.all.taskResults(p))`. */
  readonly all: ItemReaders;

  readonly #credentials: Credentials;
  readonly #transport: Transport;
  readonly #executor: Executor;
  readonly #maxPages: number | undefined;
  readonly #stop: AbortSignal | undefined;
  readonly #logger: NonNullable<GeoClientOptions['logger']>;

  constructor(opts: GeoClientOptions) {
    this.#stop = opts.signal;
    this.#logger = opts.logger ?? silentLogger;
    this.#credentials = new Credentials(opts.auth);
    for (const s of this.#credentials.secrets()) registerSecret(s);
    this.queue = opts.queue ?? new RequestQueue();
    this.#transport = new Transport({
      baseUrl: opts.baseUrl,
      dispatcher: opts.dispatcher,
      connections: this.queue.maxConcurrency,
      ...(opts.maxResponseBytes !== undefined ? { maxResponseBytes: opts.maxResponseBytes } : {}),
    });
    this.#maxPages = opts.maxPages;
    this.#executor = new Executor({
      transport: this.#transport,
      queue: this.queue,
      logger: opts.logger ?? silentLogger,
      clock: opts.clock ?? realClock,
      random: opts.random ?? Math.random,
      timeoutMs: opts.timeoutMs ?? 30_000,
      retry: {
        maxAttempts: opts.retry?.maxAttempts ?? 6,
        baseDelayMs: opts.retry?.baseDelayMs ?? 250,
        maxDelayMs: opts.retry?.maxDelayMs ?? 30_000,
        maxRetryAfterMs: opts.retry?.maxRetryAfterMs ?? 300_000,
      },
      userAgent: opts.userAgent ?? 'geo-sync',
      stats: this.stats,
      onReject: opts.onReject,
      scrub: (t) => this.#credentials.scrub(t),
      // In hand (the usual case): no promise per request; a login (or no bearer left) is async.
      bearer: () =>
        this.#credentials.currentBearer ?? this.#credentials.bearer(() => this.login().then(() => undefined)),
      signal: opts.signal,
      origin: opts.baseUrlSetting ? { setting: opts.baseUrlSetting, baseUrl: opts.baseUrl } : undefined,
    });
    this.pages = this.#pageReaders();
    this.all = this.#itemReaders(this.pages);
  }

  /** Closes the client's own connection pool (an injected dispatcher is left to its owner). */
  close(): Promise<void> {
    return this.#transport.close();
  }

  // ---- 4.1 Authentication --------------------------------------------------------------------

  /**
   * POST auth/login (no Authorization header). Uses `params`, else the e-mail and password of
   * the options. The token is kept in memory for the following requests and not returned.
   */
  async login(params?: LoginParams): Promise<LoginResult> {
    const given = params ?? this.#credentials.loginBody();
    const shown = { email: given?.email };
    if (!given) {
      throw this.#refuse('login', shown, 'email and password: required (the client was not given them)');
    }
    const body = this.#check('login', Params.login, given, shown);
    registerSecret(body.password);
    const data = await this.#executor.call({
      name: 'login',
      shownParams: shown,
      path: ENDPOINTS.login.path,
      body,
      redact: (raw) => this.#credentials.redact(raw),
      decode: (b, _res, ctx) => DECODE.login(b, ctx),
    });
    this.#credentials.setLoginToken(data.token, body.password);
    registerSecret(data.token);
    return { token_type: data.token_type, user: data.user };
  }

  /** GET auth/user. */
  async user(): Promise<User> {
    return this.#get('user', Params.none, {});
  }

  /**
   * POST auth/logout: revokes the token in use and forgets it. With login auth and no token yet,
   * does nothing (it would not log in just to log out). Returns the server's message.
   *
   * Not ended by the client's stop signal: a process stopping is exactly when it closes the client
   * and revokes its login token, and tokens do not expire. Sent once and outside the request queue
   * (a Retry-After pause or a worker's spent share would hold it past the stop), within
   * `LOGOUT_TIMEOUT_MS`, or `LOGOUT_WHEN_STOPPING_MS` once the stop signal fired. The timer keeps
   * the process alive meanwhile: the request alone might not (Node would end an awaited exit
   * path with nothing left to run).
   */
  async logout(): Promise<string | undefined> {
    if (this.#credentials.kind === 'login' && !this.#credentials.hasBearer) return undefined;
    const stopping = this.#stop?.aborted === true;
    const ms = stopping ? LOGOUT_WHEN_STOPPING_MS : LOGOUT_TIMEOUT_MS;
    if (stopping)
      this.#logger.warn(`revoking the login token (up to ${ms / 1000} s; signal again to exit now)`);
    const bound = new AbortController();
    const timer = setTimeout(() => bound.abort(new Error(`logout: no answer within ${ms} ms`)), ms);
    try {
      const message = await this.#executor.call({
        name: 'logout',
        shownParams: {},
        path: ENDPOINTS.logout.path,
        allowEmptyBody: true,
        signal: bound.signal,
        alone: true,
        decode: (b, _res, ctx) => decodeBody(MessageOnly, b, ctx).message,
      });
      this.#credentials.forgetRevoked();
      return message;
    } finally {
      clearTimeout(timer);
    }
  }

  // ---- 4.2 Site diagnosis --------------------------------------------------------------------

  /**
   * POST projects/{project_id}/site-diagnosis with `{}` or `{"force_refresh":true}`.
   * `httpStatus` is 202 when a new diagnosis was created, 200 when one was reused.
   */
  async startSiteDiagnosis(
    params: In<'siteDiagnosisPost'>,
  ): Promise<{ httpStatus: 200 | 202; diagnosis: SiteDiagnosis }> {
    const p = this.#check('startSiteDiagnosis', Params.siteDiagnosisPost, params);
    return this.#executor.call({
      name: 'startSiteDiagnosis',
      shownParams: p,
      path: fillPath(ENDPOINTS.startSiteDiagnosis.path, p),
      body: p.force_refresh ? { force_refresh: true } : {},
      decode: (b, res, ctx) => ({
        httpStatus: res.status === 202 ? 202 : 200,
        diagnosis: DECODE.diagnosis(b, ctx),
      }),
    });
  }

  /** GET projects/{project_id}/site-diagnosis: the latest diagnosis (never starts one). */
  async getSiteDiagnosis(params: In<'siteDiagnosisGet'>): Promise<SiteDiagnosis> {
    return this.#get('getSiteDiagnosis', Params.siteDiagnosisGet, params);
  }

  // ---- 4.3 Hierarchical reads ----------------------------------------------------------------

  /** GET geo/customer/projects: one page of a page project's monitoring tasks. */
  async customerProjects(params: In<'customerProjects'>): Promise<Page<MonitoringTask>> {
    return (await this.#customerProjects(params)).page;
  }

  /** GET geo/project/tasks: every platform task of a monitoring task (not paged). */
  async projectTasks(params: In<'projectTasks'>): Promise<PlatformTask[]> {
    return this.#get('projectTasks', Params.projectTasks, params);
  }

  /** GET geo/task/info: one platform task. */
  async taskInfo(params: In<'taskInfo'>): Promise<PlatformTask> {
    return this.#get('taskInfo', Params.taskInfo, params);
  }

  /** GET geo/task/prompts: every execution of a platform task on a day (not paged). */
  async taskPrompts(params: In<'taskPrompts'>): Promise<PromptExecution[]> {
    return this.#get('taskPrompts', Params.taskPrompts, params);
  }

  /** GET geo/task/results: one page of a platform task's results on a day. */
  async taskResults(params: In<'taskResults'>): Promise<Page<PromptResultItem>> {
    return (await this.#taskResults(params)).page;
  }

  /** GET geo/prompt/detail. */
  async promptDetail(params: In<'promptTaskId'>): Promise<PromptExecution> {
    return this.#get('promptDetail', Params.promptTaskId, params);
  }

  /** GET geo/prompt/result. */
  async promptResult(params: In<'promptTaskId'>): Promise<PromptResult> {
    return this.#get('promptResult', Params.promptTaskId, params);
  }

  /** GET geo/prompt/searches: one page of an execution's sources. */
  async promptSearches(params: In<'promptSearches'>): Promise<Page<Source>> {
    return (await this.#promptSearches(params)).page;
  }

  /** GET geo/prompt/screenshot. */
  async promptScreenshot(params: In<'promptTaskId'>): Promise<Screenshot> {
    return this.#get('promptScreenshot', Params.promptTaskId, params);
  }

  /** GET geo/prompt/products: one page of an execution's product cards, with card-set metadata. */
  async promptProducts(params: In<'promptProducts'>): Promise<ProductsPage> {
    return (await this.#promptProducts(params)).page;
  }

  // ---- 4.4 Legacy compatibility --------------------------------------------------------------

  /** POST geo/project/create. Never retried after the server may have acted (no duplicate tasks). */
  async legacyProjectCreate(params: In<'legacyCreate'>): Promise<LegacyCreated> {
    const p = this.#check('legacyProjectCreate', Params.legacyCreate, params);
    return this.#executor.call({
      name: 'legacyProjectCreate',
      shownParams: p,
      path: ENDPOINTS.legacyProjectCreate.path,
      body: p,
      decode: (b, _res, ctx) => DECODE.legacyCreated(b, ctx),
    });
  }

  /** POST geo/project/edit; returns the server's message. */
  async legacyProjectEdit(params: In<'legacyEdit'>): Promise<string | undefined> {
    const p = this.#check('legacyProjectEdit', Params.legacyEdit, params);
    return this.#executor.call({
      name: 'legacyProjectEdit',
      shownParams: p,
      path: ENDPOINTS.legacyProjectEdit.path,
      body: p,
      allowEmptyBody: true,
      decode: (b, _res, ctx) => decodeBody(MessageOnly, b, ctx).message,
    });
  }

  /** GET geo/project/list: one page of legacy monitoring tasks. */
  async legacyProjectList(params: In<'legacyProjectList'> = {}): Promise<Page<LegacyMonitoringTask>> {
    return (await this.#legacyProjectList(params)).page;
  }

  /** GET geo/project/detail. */
  async legacyProjectDetail(params: In<'legacyProjectDetail'>): Promise<LegacyMonitoringTaskDetail> {
    return this.#get('legacyProjectDetail', Params.legacyProjectDetail, params);
  }

  /** GET geo/task/list: the legacy daily list of a platform task (default day: today). */
  async legacyTaskList(params: In<'legacyTaskList'>): Promise<LegacyDailyItem[]> {
    return this.#get('legacyTaskList', Params.legacyTaskList, params);
  }

  /** GET geo/task/detail (`task_id` is a prompt execution ID). */
  async legacyTaskDetail(params: In<'legacyTaskId'>): Promise<LegacyTaskDetail> {
    return this.#get('legacyTaskDetail', Params.legacyTaskId, params);
  }

  /** GET geo/task/result (`with_products: 1` adds `products`). */
  async legacyTaskResult(params: In<'legacyTaskResult'>): Promise<LegacyResult> {
    return this.#get('legacyTaskResult', Params.legacyTaskResult, params);
  }

  /** GET geo/task/screenshot. */
  async legacyTaskScreenshot(params: In<'legacyTaskId'>): Promise<LegacyScreenshot> {
    return this.#get('legacyTaskScreenshot', Params.legacyTaskId, params);
  }

  /**
   * GET geo/task/searches: legacy sources. `pagination` comes back only when `page` is sent;
   * `limit` defaults to 1000 (the server's own default is 10, which silently cuts the list).
   */
  async legacyTaskSearches(params: In<'legacyTaskSearches'>): Promise<LegacySearchesPage> {
    return (await this.#legacyTaskSearches(params)).page;
  }

  // ---- 4.5 Finance ---------------------------------------------------------------------------

  /** GET finance/balance. */
  async balance(): Promise<Balance> {
    return this.#get('balance', Params.none, {});
  }

  /** GET finance/deduction/details: one page of deduction records. */
  async deductionDetails(params: In<'deductionDetails'> = {}): Promise<Page<Deduction>> {
    return (await this.#deductionDetails(params)).page;
  }

  // ---- paged fetchers: one page plus what the paginator needs --------------------------------

  #customerProjects(params: In<'customerProjects'>): Promise<FetchedPage<Page<MonitoringTask>>> {
    const withSize = { ...params, per_page: params.per_page ?? MAX_PAGE_SIZE.customerProjects };
    return this.#get('customerProjects', Params.customerProjects, withSize);
  }

  #taskResults(params: In<'taskResults'>): Promise<FetchedPage<Page<PromptResultItem>>> {
    const withSize = { ...params, per_page: params.per_page ?? MAX_PAGE_SIZE.taskResults };
    return this.#get('taskResults', Params.taskResults, withSize);
  }

  #promptSearches(params: In<'promptSearches'>): Promise<FetchedPage<Page<Source>>> {
    const withSize = { ...params, per_page: params.per_page ?? MAX_PAGE_SIZE.promptSearches };
    return this.#get('promptSearches', Params.promptSearches, withSize);
  }

  #promptProducts(params: In<'promptProducts'>): Promise<FetchedPage<ProductsPage>> {
    const withSize = { ...params, per_page: params.per_page ?? MAX_PAGE_SIZE.promptProducts };
    return this.#get('promptProducts', Params.promptProducts, withSize);
  }

  #legacyProjectList(params: In<'legacyProjectList'>): Promise<FetchedPage<Page<LegacyMonitoringTask>>> {
    const withSize = { ...params, per_page: params.per_page ?? MAX_PAGE_SIZE.legacyProjectList };
    return this.#get('legacyProjectList', Params.legacyProjectList, withSize);
  }

  #legacyTaskSearches(params: In<'legacyTaskSearches'>): Promise<FetchedPage<LegacySearchesPage>> {
    const withSize = { ...params, limit: params.limit ?? MAX_PAGE_SIZE.legacyTaskSearches };
    return this.#get('legacyTaskSearches', Params.legacyTaskSearches, withSize);
  }

  #deductionDetails(params: In<'deductionDetails'>): Promise<FetchedPage<Page<Deduction>>> {
    const withSize = { ...params, per_page: params.per_page ?? MAX_PAGE_SIZE.deductionDetails };
    return this.#get('deductionDetails', Params.deductionDetails, withSize);
  }

  #pageReaders(): PageReaders {
    const read = <Pm extends { page?: number | undefined }, P>(
      name: keyof typeof MAX_PAGE_SIZE,
      fetch: (p: Pm) => Promise<FetchedPage<P>>,
      params: Pm,
      pageSize: number | undefined,
    ): AsyncIterable<P> =>
      paginate((page) => fetch({ ...params, page }), {
        endpoint: endpointId(name),
        params: params as Record<string, unknown>,
        startPage: params.page ?? 1,
        pageSize: pageSize ?? MAX_PAGE_SIZE[name],
        ...(this.#maxPages !== undefined ? { maxPages: this.#maxPages } : {}),
      });
    return {
      customerProjects: (p) => read('customerProjects', (q) => this.#customerProjects(q), p, p.per_page),
      taskResults: (p) => read('taskResults', (q) => this.#taskResults(q), p, p.per_page),
      promptSearches: (p) => read('promptSearches', (q) => this.#promptSearches(q), p, p.per_page),
      promptProducts: (p) => read('promptProducts', (q) => this.#promptProducts(q), p, p.per_page),
      legacyProjectList: (p = {}) =>
        read('legacyProjectList', (q) => this.#legacyProjectList(q), p, p.per_page),
      legacyTaskSearches: (p) => read('legacyTaskSearches', (q) => this.#legacyTaskSearches(q), p, p.limit),
      deductionDetails: (p = {}) => read('deductionDetails', (q) => this.#deductionDetails(q), p, p.per_page),
    };
  }

  #itemReaders(pages: PageReaders): ItemReaders {
    return {
      customerProjects: (p) => itemsOf(pages.customerProjects(p)),
      taskResults: (p) => itemsOf(pages.taskResults(p)),
      promptSearches: (p) => itemsOf(pages.promptSearches(p)),
      promptProducts: (p) => itemsOf(pages.promptProducts(p)),
      legacyProjectList: (p) => itemsOf(pages.legacyProjectList(p)),
      legacyTaskSearches: (p) => itemsOf(pages.legacyTaskSearches(p)),
      deductionDetails: (p) => itemsOf(pages.deductionDetails(p)),
    };
  }

  // ---- plumbing ------------------------------------------------------------------------------

  /** A GET: parameters checked, path parameters filled, the rest sent as the query string. */
  async #get<N extends GetEndpoint, K extends keyof typeof Params>(
    name: N,
    schema: (typeof Params)[K],
    params: unknown,
  ): Promise<ReturnType<(typeof GET_DECODERS)[N]>> {
    const p = this.#check(name, schema, params) as Record<string, unknown>;
    const decode = GET_DECODERS[name] as (
      body: unknown,
      ctx: DecodeContext,
    ) => ReturnType<(typeof GET_DECODERS)[N]>;
    return this.#executor.call({
      name,
      shownParams: p,
      path: withQuery(fillPath(ENDPOINTS[name].path, p), p, ENDPOINTS[name].path),
      decode: (b, _res, ctx) => decode(b, ctx),
    });
  }

  /** Parameters checked before anything is sent: InvalidParamsError lists every problem. */
  #check<S extends z.ZodType>(
    name: EndpointName,
    schema: S,
    params: unknown,
    shown?: Record<string, unknown>,
  ): z.output<S> {
    const r = schema.safeParse(params ?? {});
    if (r.success) return r.data;
    throw this.#refuse(name, shown ?? (isRecord(params) ? params : {}), describeIssues(r.error));
  }

  #refuse(name: EndpointName, shown: Record<string, unknown>, problems: string): InvalidParamsError {
    this.stats.failures++;
    this.stats.errorsByCode.INVALID_PARAMS = (this.stats.errorsByCode.INVALID_PARAMS ?? 0) + 1;
    return new InvalidParamsError({ endpoint: endpointId(name), params: shown, problems, attempts: 0 });
  }
}

/** `/api/v2/projects/{project_id}/site-diagnosis` with `{project_id}` filled in. */
function fillPath(template: string, params: Readonly<Record<string, unknown>>): string {
  return template.replace(/\{(\w+)\}/g, (_, key: string) => encodeURIComponent(String(params[key])));
}

/** Appends the parameters that are not path parameters of `template` as the query string. */
function withQuery(path: string, params: Readonly<Record<string, unknown>>, template: string): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || template.includes(`{${k}}`)) continue;
    q.append(k, String(v));
  }
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
