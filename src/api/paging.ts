/**
 * Page shapes, and reading every page of a paged endpoint as an async iterable.
 *
 * The paginator trusts the server as little as it can afford to:
 * - It never asks past `last_page`, reading `last_page` from the latest page (the total may
 *   change while a day is still being written), and reads one page when `last_page` is 0.
 * - It stops at an empty page (a shrinking list leaves the next pages empty).
 * - It detects a loop instead of spinning (as Meltano's paginator does): the server answering a
 *   page other than the one asked, the same non-empty page content twice, or more pages than a
 *   sane bound all throw PageLoopError.
 */
import { createHash } from 'node:crypto';
import type { z } from 'zod';
import type { EndpointId, Params } from './endpoints.ts';
import { PageLoopError } from './errors.ts';
import type { Deduction } from './schemas/account.ts';
import type {
  DisplayJson,
  MonitoringTask,
  ProductCard,
  PromptResultItem,
  Source,
} from './schemas/hierarchical.ts';
import type { LegacyMonitoringTask, LegacySource } from './schemas/legacy.ts';

/** One page of a paged endpoint, items validated (bad ones went to `onReject`). */
export interface Page<T> {
  items: T[];
  current_page: number;
  last_page: number;
  total: number;
  per_page: number;
}

/**
 * One page of product cards (spec 2.8), with the card-set metadata normalized from either place
 * the spec's table allows (inside `data` or beside it).
 */
export interface ProductsPage extends Page<ProductCard> {
  /** Display metadata, any JSON (see DisplayJson). */
  field_order: DisplayJson | undefined;
  field_labels: DisplayJson | undefined;
  /** false when the platform is unsupported. */
  supported: boolean | undefined;
  /** `missing` (supported, no saved card) or `unsupported`; other values pass through. */
  result_status: string | undefined;
}

export interface LegacyPagination {
  current_page: number;
  last_page: number;
  per_page: number;
  total: number;
}

/** Legacy task/searches: `pagination` only when `page` was sent. */
export interface LegacySearchesPage {
  items: LegacySource[];
  pagination?: LegacyPagination | undefined;
}

/** What the paginator needs from one fetched page besides the page itself. */
export interface FetchedPage<P> {
  page: P;
  /** The items as received, before validation: emptiness and loop checks must see rejected items too. */
  rawItems: readonly unknown[];
  /** Page numbers as the server gave them; undefined when it gave none (legacy searches). */
  meta: { current_page: number; last_page: number } | undefined;
}

export interface PaginateOptions {
  readonly endpoint: EndpointId;
  /** The call's parameters, for error messages. */
  readonly params: Readonly<Record<string, unknown>>;
  /** @default 1 */
  readonly startPage?: number;
  /** More pages than this is a loop. @default 10000 */
  readonly maxPages?: number;
  /** Items per page asked for; without page numbers, a shorter page is the last one. */
  readonly pageSize: number;
}

export const DEFAULT_MAX_PAGES = 10_000;

export async function* paginate<P>(
  fetchPage: (page: number) => Promise<FetchedPage<P>>,
  opts: PaginateOptions,
): AsyncGenerator<P, void, undefined> {
  const maxPages = opts.maxPages ?? DEFAULT_MAX_PAGES;
  const seen = new Map<string, number>();
  const loop = (detail: string) =>
    new PageLoopError({ endpoint: opts.endpoint, params: opts.params, detail });
  const remember = (items: readonly unknown[], at: number) => {
    const fingerprint = createHash('sha1').update(JSON.stringify(items)).digest('hex');
    const earlier = seen.get(fingerprint);
    if (earlier !== undefined) throw loop(`page ${at} repeats the content of page ${earlier}`);
    seen.set(fingerprint, at);
  };
  let first: { items: readonly unknown[]; page: number } | null = null;
  let page = opts.startPage ?? 1;
  for (let fetched = 0; ; fetched++) {
    if (fetched >= maxPages) throw loop(`more than ${maxPages} pages`);
    const got = await fetchPage(page);
    if (got.meta && got.meta.current_page !== page) {
      throw loop(`asked for page ${page}, the server answered page ${got.meta.current_page}`);
    }
    if (got.rawItems.length > 0) {
      // A loop needs a second page, and most reads have one page only: the first page is
      // fingerprinted only once a second one arrives (hashing every page cost ~6% of a sync's
      // CPU, nearly all of it on single-page reads).
      if (fetched === 0) first = { items: got.rawItems, page };
      else {
        if (first) remember(first.items, first.page);
        first = null;
        remember(got.rawItems, page);
      }
    }
    yield got.page;
    if (got.rawItems.length === 0) return;
    if (got.meta) {
      if (page >= got.meta.last_page) return;
    } else if (got.rawItems.length < opts.pageSize) {
      return;
    }
    page++;
  }
}

/** Items of every page, in order. */
export async function* itemsOf<T>(pages: AsyncIterable<{ items: T[] }>): AsyncGenerator<T, void, undefined> {
  for await (const p of pages) yield* p.items;
}

/** Per-page readers of the seven paged endpoints: `client.pages.taskResults({ task_id, date })`. */
export interface PageReaders {
  customerProjects(params: In<'customerProjects'>): AsyncIterable<Page<MonitoringTask>>;
  taskResults(params: In<'taskResults'>): AsyncIterable<Page<PromptResultItem>>;
  promptSearches(params: In<'promptSearches'>): AsyncIterable<Page<Source>>;
  promptProducts(params: In<'promptProducts'>): AsyncIterable<ProductsPage>;
  legacyProjectList(params?: In<'legacyProjectList'>): AsyncIterable<Page<LegacyMonitoringTask>>;
  legacyTaskSearches(params: In<'legacyTaskSearches'>): AsyncIterable<LegacySearchesPage>;
  deductionDetails(params?: In<'deductionDetails'>): AsyncIterable<Page<Deduction>>;
}

/** Item readers over every page: `for await (const r of client.all.taskResults({ task_id }))`. */
export interface ItemReaders {
  customerProjects(params: In<'customerProjects'>): AsyncIterable<MonitoringTask>;
  taskResults(params: In<'taskResults'>): AsyncIterable<PromptResultItem>;
  promptSearches(params: In<'promptSearches'>): AsyncIterable<Source>;
  promptProducts(params: In<'promptProducts'>): AsyncIterable<ProductCard>;
  legacyProjectList(params?: In<'legacyProjectList'>): AsyncIterable<LegacyMonitoringTask>;
  legacyTaskSearches(params: In<'legacyTaskSearches'>): AsyncIterable<LegacySource>;
  deductionDetails(params?: In<'deductionDetails'>): AsyncIterable<Deduction>;
}

/** The parameters of a paged read: those of its single-page method (`page` is the first page). */
type In<K extends keyof typeof Params> = z.input<(typeof Params)[K]>;
