/**
 * Everything one execution owns, read by its `prompt_task_id` (taken from the returned value):
 * sources (all pages), product cards (all pages), screenshot, and the legacy enrichments.
 * The requests of one execution go out together through the shared queue.
 */
import { endpointId } from '../api/endpoints.ts';
import { isGeoApiError, NotFoundError, type GeoApiError } from '../api/errors.ts';
import type { PromptResultItem, Screenshot, Source } from '../api/schemas/hierarchical.ts';
import type { LegacySource, LegacyTaskDetail } from '../api/schemas/legacy.ts';
import { emptyProducts, type ApiPort, type ChildList, type ProductsResult } from './port.ts';
import { namesScreenshot, type ReadShortcuts } from './shortcuts.ts';

export interface ExecutionBundle {
  item: PromptResultItem;
  sources: Source[];
  legacySources: Map<number, LegacySource> | null;
  products: ProductsResult;
  screenshot: Screenshot | null;
  detail: LegacyTaskDetail | null;
  /** Children that could not be read this time; their stored rows are kept (ExecutionBatch.kept). */
  unread: UnreadChild[];
  /**
   * Child lists read with fewer items than their last page's `total`: an item was quarantined,
   * or the list shifted between pages. What was read is written; the execution is not counted
   * as read completely, so change detection reads it again next time.
   */
  partial: ExecutionChild[];
  /**
   * Every single-execution read answered 404 (prompt/detail too): deleted upstream meanwhile.
   * Its `unread` children are then no data problem but the deletion itself (not quarantined).
   */
  goneUpstream: boolean;
}

/** What the execution owns, by the endpoint that serves it. */
export type ExecutionChild = 'sources' | 'screenshot' | 'products' | 'detail' | 'legacySources';

/**
 * A child whose endpoint answered 404 although task/results listed the execution (`not_found`),
 * or answered a known field that does not match the spec and will not on a retry (`invalid`).
 */
export interface UnreadChild {
  child: ExecutionChild;
  kind: 'not_found' | 'invalid';
  error: GeoApiError;
}

export interface BundleOptions {
  legacySources: boolean;
  executionTimes: boolean;
}

const isNotFound = (e: unknown) => isGeoApiError(e) && e.code === 'NOT_FOUND';
/**
 * A response that does not match the schema, or one larger than GEO_MAX_RESPONSE_BYTES: the
 * server will answer the same again, so the child is quarantined rather than the unit failed.
 */
const isPermanentMismatch = (e: unknown) =>
  isGeoApiError(e) && ((e.code === 'INVALID_RESPONSE' && !e.retryable) || e.code === 'RESPONSE_TOO_LARGE');

/**
 * Reads the children of a listed execution. The listed item is real data (spec 2.5: an execution
 * is returned even without an answer), so a child that answers 404, a permanent mismatch or a
 * body over the size cap never
 * costs the execution: the child is reported in `unread` and the caller keeps what it stored.
 * Anything else (retries exhausted, 401/403) fails the read as before.
 */
export async function fetchExecution(
  api: ApiPort,
  item: PromptResultItem,
  opts: BundleOptions,
  shortcuts?: ReadShortcuts,
): Promise<ExecutionBundle> {
  return { item, ...(await fetchChildren(api, item, opts, shortcuts)) };
}

/** What an execution's own endpoints serve (fetchExecution without the listed item). */
export type ExecutionChildren = Omit<ExecutionBundle, 'item'>;

/**
 * Reads the children of one execution, known by its id and whether its listed item (or stored
 * row) names a screenshot. `shortcuts` (a sync's): requests whose answer the run already knows
 * are not made (shortcuts.ts). `geo-sync verify` reads stored executions this way, without them.
 */
export async function fetchChildren(
  api: ApiPort,
  item: Pick<PromptResultItem, 'prompt_task_id' | 'screenshot_url'> & { task_id?: number },
  opts: BundleOptions,
  shortcuts?: ReadShortcuts,
): Promise<ExecutionChildren> {
  const id = item.prompt_task_id;
  const unread: UnreadChild[] = [];
  let reads = 0;
  let notFound = 0;
  const read = async <T>(child: ExecutionChild, p: Promise<T>, absent: T): Promise<T> => {
    reads++;
    try {
      return await p;
    } catch (e) {
      if (isNotFound(e)) notFound++;
      // A server may 404 a screenshot that was never taken: the listed item says there is none.
      if (child === 'screenshot' && isNotFound(e) && !namesScreenshot(item)) return absent;
      if (isNotFound(e)) unread.push({ child, kind: 'not_found', error: e as GeoApiError });
      else if (isPermanentMismatch(e)) unread.push({ child, kind: 'invalid', error: e as GeoApiError });
      else throw e;
      return absent;
    }
  };
  const askProducts = () => read('products', api.products(id), emptyProducts());
  const taskId = item.task_id;
  const noList = { items: [], total: null };
  const [sourceList, productsAnswer, screenshot, detail, legacy] = await Promise.all([
    read<ChildList<Source>>('sources', api.sources(id), noList),
    shortcuts && taskId !== undefined
      ? shortcuts.products(taskId, askProducts)
      : askProducts().then((products) => ({ products, asked: true })),
    !shortcuts || shortcuts.asksScreenshot(item)
      ? read<Screenshot | null>('screenshot', api.screenshot(id), null)
      : null,
    opts.executionTimes ? read<LegacyTaskDetail | null>('detail', api.legacyTaskDetail(id), null) : null,
    opts.legacySources
      ? read<ChildList<LegacySource> | null>('legacySources', api.legacySources(id), null)
      : null,
  ]);
  let products = productsAnswer.products;
  const partial: ExecutionChild[] = [];
  const short = (n: number, total: number | null) => total !== null && n < total;
  // Counted by key: a list that shifted between pages can repeat an item where it skipped another.
  const distinct = <T>(items: readonly T[], key: (t: T) => number) => new Set(items.map(key)).size;
  if (
    short(
      distinct(sourceList.items, (s) => s.source_id),
      sourceList.total,
    )
  )
    partial.push('sources');
  if (short(products.cards.length, products.total)) partial.push('products');
  if (
    legacy &&
    short(
      distinct(legacy.items, (s) => s.id),
      legacy.total,
    )
  )
    partial.push('legacySources');
  // A listed execution whose own reads all answer 404, prompt/detail too, was deleted upstream
  // meanwhile. It stays until its unit no longer lists it. One read that answered is enough to
  // say the execution still exists, so its unread children stay data problems.
  let goneUpstream = false;
  if (notFound === reads && unread.length > 0) {
    try {
      await api.promptDetail(id);
    } catch (e) {
      if (!isNotFound(e)) throw e;
      goneUpstream = true;
    }
  }
  // Products not asked for an execution deleted upstream: its products endpoint answers 404 as
  // its others did, so its stored rows are kept as a read would keep them.
  if (goneUpstream && !productsAnswer.asked) {
    products = emptyProducts();
    unread.push({
      child: 'products',
      kind: 'not_found',
      error: new NotFoundError({
        endpoint: endpointId('promptProducts'),
        params: { prompt_task_id: id },
        serverMessage: 'not asked: the execution was deleted upstream',
      }),
    });
  }
  return {
    sources: sourceList.items,
    products,
    screenshot,
    detail,
    legacySources: legacy ? new Map(legacy.items.map((s) => [s.id, s])) : null,
    unread,
    partial,
    goneUpstream,
  };
}
