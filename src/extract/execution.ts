/**
 * Everything one execution owns, read by its `prompt_task_id` (taken from the returned value):
 * sources (all pages), product cards (all pages), screenshot, and the legacy enrichments.
 * The requests of one execution go out together through the shared queue.
 */
import { isGeoApiError } from '../api/errors.ts';
import type { PromptResultItem, Screenshot, Source } from '../api/schemas/hierarchical.ts';
import type { LegacySource, LegacyTaskDetail } from '../api/schemas/legacy.ts';
import { emptyProducts, type ApiPort, type ProductsResult } from './port.ts';

export interface ExecutionBundle {
  item: PromptResultItem;
  sources: Source[];
  legacySources: Map<number, LegacySource> | null;
  products: ProductsResult;
  screenshot: Screenshot | null;
  detail: LegacyTaskDetail | null;
}

export interface BundleOptions {
  legacySources: boolean;
  executionTimes: boolean;
}

/** The execution was deleted upstream between the daily list and its own endpoints. */
export class ExecutionGoneError extends Error {
  readonly prompt_task_id: number;
  constructor(prompt_task_id: number, cause: unknown) {
    super(`execution ${prompt_task_id} is gone upstream (404)`, { cause });
    this.name = 'ExecutionGoneError';
    this.prompt_task_id = prompt_task_id;
  }
}

const isNotFound = (e: unknown) => isGeoApiError(e) && e.code === 'NOT_FOUND';

export async function fetchExecution(
  api: ApiPort,
  item: PromptResultItem,
  opts: BundleOptions,
): Promise<ExecutionBundle> {
  const id = item.prompt_task_id;
  let notFound: unknown = null;
  // A 404 on one child may mean "this execution has none" (a server may 404 a screenshot that
  // was never taken) or "the execution is gone". Only prompt/detail can tell: asked only on 404.
  const orAbsent = async <T>(p: Promise<T>, absent: T): Promise<T> => {
    try {
      return await p;
    } catch (e) {
      if (!isNotFound(e)) throw e;
      notFound ??= e;
      return absent;
    }
  };
  const [sources, products, screenshot, detail, legacy] = await Promise.all([
    orAbsent(api.sources(id), [] as Source[]),
    orAbsent(api.products(id), emptyProducts()),
    orAbsent<Screenshot | null>(api.screenshot(id), null),
    opts.executionTimes ? orAbsent<LegacyTaskDetail | null>(api.legacyTaskDetail(id), null) : null,
    opts.legacySources ? orAbsent<LegacySource[] | null>(api.legacySources(id), null) : null,
  ]);
  if (notFound) {
    try {
      await api.promptDetail(id);
    } catch (e) {
      if (isNotFound(e)) throw new ExecutionGoneError(id, e);
      throw e;
    }
  }
  return {
    item,
    sources,
    products,
    screenshot,
    detail,
    legacySources: legacy ? new Map(legacy.map((s) => [s.id, s])) : null,
  };
}
