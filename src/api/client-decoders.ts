/**
 * The decoders of the API's answers, by endpoint, their schemas built once: each checks the
 * envelope, then the items of a list one by one (decode.ts), the moment an answer arrives.
 * GeoClient (client.ts) decodes with these only, and the bench's validation floor replays them.
 */
import type { z } from 'zod';
import { MAX_STORED_JSON_DEPTH } from '../json-text.ts';
import { decodeBody, decodeItems, type DecodeContext } from './decode.ts';
import type { EndpointName } from './endpoints.ts';
import type { FetchedPage, LegacySearchesPage, Page, ProductsPage } from './paging.ts';
import { Balance, Deduction, LoginData, User } from './schemas/account.ts';
import { SiteDiagnosis } from './schemas/diagnosis.ts';
import { envelope, PageObject } from './schemas/envelope.ts';
import {
  MonitoringTask,
  PlatformTask,
  ProductCard,
  ProductsBody,
  PromptExecution,
  PromptResult,
  PromptResultItem,
  Screenshot,
  Source,
} from './schemas/hierarchical.ts';
import {
  LegacyCreated,
  LegacyDailyItem,
  LegacyMonitoringTask,
  LegacyMonitoringTaskDetail,
  LegacyResult,
  LegacyScreenshot,
  LegacySearchesBody,
  LegacySource,
  LegacyTaskDetail,
} from './schemas/legacy.ts';

const PageEnvelope = envelope(PageObject);
const ListEnvelope = envelope(PageObject.shape.data);

/** Decoders of the answers of the calls that are not plain GETs, their schemas built once. */
export const DECODE = {
  login: single(LoginData),
  diagnosis: single(SiteDiagnosis),
  legacyCreated: single(LegacyCreated),
};

/**
 * The decoder of every GET endpoint's answer, by endpoint, its schemas built once: the client's
 * methods take theirs from here (so no method can decode with another), and the bench's
 * validation floor replays the same decoders on the same answers.
 */
export const GET_DECODERS = {
  user: single(User),
  getSiteDiagnosis: DECODE.diagnosis,
  projectTasks: listOf(PlatformTask),
  taskInfo: single(PlatformTask),
  taskPrompts: listOf(PromptExecution),
  promptDetail: single(PromptExecution),
  promptResult: single(PromptResult),
  promptScreenshot: single(Screenshot),
  legacyProjectDetail: single(LegacyMonitoringTaskDetail),
  legacyTaskList: listOf(LegacyDailyItem),
  legacyTaskDetail: single(LegacyTaskDetail),
  legacyTaskResult: single(LegacyResult),
  legacyTaskScreenshot: single(LegacyScreenshot),
  balance: single(Balance),
  customerProjects: pageOf(MonitoringTask),
  taskResults: pageOf(PromptResultItem),
  promptSearches: pageOf(Source),
  legacyProjectList: pageOf(LegacyMonitoringTask),
  deductionDetails: pageOf(Deduction),
  promptProducts: productsPage,
  legacyTaskSearches: legacySearchesPage,
} satisfies Partial<Record<EndpointName, (body: unknown, ctx: DecodeContext) => unknown>>;
export type GetEndpoint = keyof typeof GET_DECODERS;

/** `{ success, data: { current_page, data: [...], ... } }` with the items checked one by one. */
function pageOf<S extends z.ZodType>(item: S) {
  return (b: unknown, ctx: DecodeContext): FetchedPage<Page<z.output<S>>> => {
    const d = decodeBody(PageEnvelope, b, ctx).data;
    return {
      page: {
        items: decodeItems(item, d.data, 'data.data', ctx),
        current_page: d.current_page,
        last_page: d.last_page,
        total: d.total,
        per_page: d.per_page,
      },
      rawItems: d.data,
      meta: { current_page: d.current_page, last_page: d.last_page },
    };
  };
}

/** `{ success, data: {...} }`: one object. */
function single<S extends z.ZodType>(schema: S) {
  const body = envelope(schema);
  // The envelope's generic `data` loses its link to S in the checker; the schema guarantees it.
  return (b: unknown, ctx: DecodeContext): z.output<S> => decodeBody(body, b, ctx).data as z.output<S>;
}

/** `{ success, data: [...] }` (a full, unpaged array) with the items checked one by one. */
function listOf<S extends z.ZodType>(item: S) {
  return (b: unknown, ctx: DecodeContext): z.output<S>[] =>
    decodeItems(item, decodeBody(ListEnvelope, b, ctx).data, 'data', ctx);
}

/** prompt/products: the cards checked one by one, the card-set metadata read inside or beside `data`. */
function productsPage(b: unknown, ctx: DecodeContext): FetchedPage<ProductsPage> {
  const body = decodeBody(ProductsBody, b, ctx);
  const d = body.data;
  // Spec 2.8 lists field_order, field_labels, supported and result_status in the table of
  // `data.products` but without the `data.` prefix: inside `data` and beside it are both
  // honest readings, so both are accepted; `data` wins when a server sends both.
  const page: ProductsPage = {
    // Cards are stored whole (product_cards.card): one nested too deep for a JSON column is
    // quarantined by itself.
    items: decodeItems(ProductCard, d.products, 'data.products', ctx, { maxDepth: MAX_STORED_JSON_DEPTH }),
    current_page: d.current_page,
    last_page: d.last_page,
    total: d.total,
    per_page: d.per_page,
    field_order: d.field_order ?? body.field_order,
    field_labels: d.field_labels ?? body.field_labels,
    supported: d.supported ?? body.supported,
    result_status: d.result_status ?? body.result_status,
  };
  return { page, rawItems: d.products, meta: { current_page: d.current_page, last_page: d.last_page } };
}

/** Legacy task/searches: `data` array, `pagination` only when `page` was sent. */
function legacySearchesPage(b: unknown, ctx: DecodeContext): FetchedPage<LegacySearchesPage> {
  const body = decodeBody(LegacySearchesBody, b, ctx);
  const items = decodeItems(LegacySource, body.data, 'data', ctx);
  const pagination = body.pagination;
  const page: LegacySearchesPage = pagination ? { items, pagination } : { items };
  return {
    page,
    rawItems: body.data,
    meta: pagination ? { current_page: pagination.current_page, last_page: pagination.last_page } : undefined,
  };
}
