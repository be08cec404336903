/** Hierarchical resources (spec 2.2 - 2.8). Nullable exactly where the spec says. */
import { z } from 'zod';
import { Count, DateTimeText, Id, Int32, NullableCustomerId, PageNumber, storedJson, Ymd } from './common.ts';
import { readRankItem } from './rank-number.ts';

/** 2.2 Monitoring task (item of customer/projects). `project_id` is the monitoring task ID. */
export const MonitoringTask = z.looseObject({
  customer_id: NullableCustomerId,
  project_id: Id,
  project_name: z.string(),
  brand_cate_desc: z.string(),
  brand_desc_list: z.string(),
  status: Int32,
  status_name: z.string(),
  created_at: DateTimeText,
  task_count: Count,
  prompts: z.array(z.string()),
});
export type MonitoringTask = z.infer<typeof MonitoringTask>;

/** 2.3 Platform task (project/tasks item and task/info). */
export const PlatformTask = z.looseObject({
  customer_id: NullableCustomerId,
  project_id: Id,
  task_id: Id,
  task_name: z.string(),
  model_key: z.string(),
  model_name: z.string(),
  engine: z.string(),
  status: Int32,
  status_name: z.string(),
});
export type PlatformTask = z.infer<typeof PlatformTask>;

/** 2.4 Prompt execution (task/prompts item, prompt/detail). */
export const PromptExecution = z.looseObject({
  customer_id: NullableCustomerId,
  project_id: Id,
  task_id: Id,
  prompt_task_id: Id,
  prompt_name: z.string(),
  date_time: Ymd,
  hours: Int32,
  status: Int32,
  model: z.string(),
  engine: z.string(),
  brand_exposure: z.string(),
  screenshot_url: z.string().nullable(),
});
export type PromptExecution = z.infer<typeof PromptExecution>;

/**
 * rank_details item (2.5). `position`, `visibility` and `score` are integers in the spec, but an
 * "empty rank" is not a rank (rule 2) and the spec does not say how a server spells one, nor what
 * else it may send there: every value is accepted and read by rank-number.ts (an integer, or NULL
 * with the value as sent kept beside it). A rank item is never quarantined for its numbers.
 * Deciding validity (`position <= 0`) is the transform's job.
 */
export const RankDetail = z
  .looseObject({
    brand: z.string(),
    brand_short: z.string(),
    position: z.unknown().optional(),
    visibility: z.unknown().optional(),
    score: z.unknown().optional(),
  })
  .transform(readRankItem);
export type RankDetail = z.infer<typeof RankDetail>;

/** The result fields of 2.5, common to the daily results item and the single result. */
const ResultFields = {
  result_status: z.enum(['available', 'missing']),
  answer: z.string().nullable(),
  think: z.string().nullable(),
  rank_exposure: z.string(),
  rank_exposure_number: z.string(),
  rank_details: z.array(RankDetail),
};

/** 2.5 Item of task/results: all 2.4 fields plus the result fields. */
export const PromptResultItem = PromptExecution.extend(ResultFields);
export type PromptResultItem = z.infer<typeof PromptResultItem>;

/** 2.5 Body of prompt/result: the IDs, prompt_name, date_time plus the result fields. */
export const PromptResult = z.looseObject({
  customer_id: NullableCustomerId,
  project_id: Id,
  task_id: Id,
  prompt_task_id: Id,
  prompt_name: z.string(),
  date_time: Ymd,
  ...ResultFields,
});
export type PromptResult = z.infer<typeof PromptResult>;

/** 2.6 Source (prompt/searches item). */
export const Source = z.looseObject({
  customer_id: NullableCustomerId,
  project_id: Id,
  task_id: Id,
  prompt_task_id: Id,
  source_id: Id,
  url: z.string(),
  title: z.string(),
  domain: z.string(),
  cite_index: z.string(),
  snippet: z.string(),
  upstream_task_id: z.string(),
});
export type Source = z.infer<typeof Source>;

/** 2.7 Screenshot (prompt/screenshot). */
export const Screenshot = z.looseObject({
  customer_id: NullableCustomerId,
  project_id: Id,
  task_id: Id,
  prompt_task_id: Id,
  screenshot_status: Int32,
  screenshot_url: z.string(),
});
export type Screenshot = z.infer<typeof Screenshot>;

/**
 * 2.8 A product card: its fields "follow the actual saved platform data" and the full list is not
 * shown, so a card is any JSON object; the common fields are picked out by the transform.
 */
export const ProductCard = storedJson(z.record(z.string(), z.unknown()));
export type ProductCard = z.infer<typeof ProductCard>;

/**
 * Display metadata (2.8 `field_order`, `field_labels`): its shape exists for display and grows
 * with the platforms, so any JSON is accepted and kept as it came (a label map gaining a number,
 * a null or an object is no reason to lose an execution). Stored as JSON, never interpreted.
 */
export const DisplayJson = z.json();
export type DisplayJson = z.infer<typeof DisplayJson>;

/** `supported`: a boolean, or its 0/1 and "true"/"false" spellings; anything else reads as unknown. */
const LenientBoolean = z.unknown().transform((v): boolean | undefined => {
  if (typeof v === 'boolean') return v;
  if (v === 1 || v === '1' || v === 'true') return true;
  if (v === 0 || v === '0' || v === 'false') return false;
  return undefined;
});

/**
 * `result_status` of a card set: `missing`, `unsupported`, or a value the spec does not name yet.
 * Text passes through; any other JSON value is kept as its JSON text, so the evidence is stored.
 */
const LenientText = z.unknown().transform((v): string | undefined => {
  if (v === undefined || v === null) return undefined;
  return typeof v === 'string' ? v : JSON.stringify(v);
});

/** The card-set metadata of 2.8, which may sit inside `data` or beside it (see products page). */
export const ProductMeta = {
  field_order: DisplayJson.optional(),
  field_labels: DisplayJson.optional(),
  supported: LenientBoolean.optional(),
  result_status: LenientText.optional(),
};

/**
 * 2.8 `data` of prompt/products: cards paged in `data.products`. Cards stay `unknown` so the
 * client can quarantine one bad card without losing its page.
 */
export const ProductsData = z.looseObject({
  products: z.array(z.unknown()),
  current_page: PageNumber,
  last_page: Count,
  total: Count,
  per_page: PageNumber,
  ...ProductMeta,
});
export type ProductsData = z.infer<typeof ProductsData>;

/**
 * The whole prompt/products body. Section 2.8 lists `field_order`, `field_labels`, `supported` and
 * `result_status` in the same table as `data.products` but without the `data.` prefix, so a real
 * server may put them inside `data` or beside it at the top level. Both readings are accepted;
 * `data` wins when both are present (it is the more specific location).
 */
export const ProductsBody = z.looseObject({
  success: z.literal(true).optional(),
  data: ProductsData,
  ...ProductMeta,
});
export type ProductsBody = z.infer<typeof ProductsBody>;
