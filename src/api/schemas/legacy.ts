/**
 * Legacy compatibility resources (spec 2.11). Mind the renames (spec 1, legacy-field table):
 * `number_id` = monitoring task (`project_id` of the hierarchy); `projects[].project_id` and the
 * daily list's `project_id` = platform task (`task_id`); the legacy `task_id` = prompt execution
 * (`prompt_task_id`).
 */
import { z } from 'zod';
import { Count, DateTimeText, Id, Int32, PageNumber } from './common.ts';
import { RankDetail } from './hierarchical.ts';

/** `projects[]` item of a legacy monitoring task: `project_id` is a platform task ID. */
export const LegacyPlatformRef = z.looseObject({
  project_id: Id,
  model_key: z.string(),
  model_name: z.string(),
});

export const LegacyMonitoringTask = z.looseObject({
  number_id: Id,
  brand_name: z.string(),
  brand_cate_desc: z.string(),
  brand_desc_list: z.string(),
  status: Int32,
  status_name: z.string(),
  created_at: DateTimeText,
  projects: z.array(LegacyPlatformRef),
  prompts: z.array(z.string()),
});
export type LegacyMonitoringTask = z.infer<typeof LegacyMonitoringTask>;

export const LegacyMonitoringTaskDetail = LegacyMonitoringTask.extend({
  week_restart: Int32,
  only_rank: Int32,
  rank_match: Int32,
  brand_urls: z.array(z.string()),
  emails: z.array(z.string()),
  projects: z.array(LegacyPlatformRef.extend({ prompts: z.array(z.string()) })),
});
export type LegacyMonitoringTaskDetail = z.infer<typeof LegacyMonitoringTaskDetail>;

/** Legacy daily list item (task/list). `sceenshot_result`: the misspelling is the interface. */
export const LegacyDailyItem = z.looseObject({
  project_id: Id,
  task_id: Id,
  prompt_name: z.string(),
  status: z.number().int(),
  model: z.string(),
  sceenshot_result: z.string().nullable(),
  date_time: z.string(),
  brand_exposure: z.string(),
});
export type LegacyDailyItem = z.infer<typeof LegacyDailyItem>;

/** Legacy task detail (task/detail): carries the execution's `created_at` / `updated_at`. */
export const LegacyTaskDetail = z.looseObject({
  project_id: Id,
  task_id: Id,
  prompt_name: z.string(),
  status: z.number().int(),
  model: z.string(),
  engine: z.string(),
  date_time: z.string(),
  brand_exposure: z.string(),
  sceenshot_result: z.string().nullable(),
  created_at: DateTimeText,
  updated_at: DateTimeText,
});
export type LegacyTaskDetail = z.infer<typeof LegacyTaskDetail>;

/**
 * Legacy result (task/result). The spec gives no types here; `answer`/`think` are nullable as in
 * 2.5 since a missing answer is not an error. `products` only with `with_products=1`.
 */
export const LegacyResult = z.looseObject({
  project_id: Id,
  task_id: Id,
  answer: z.string().nullable(),
  think: z.string().nullable(),
  brand_exposure: z.string(),
  model: z.string(),
  engine: z.string(),
  prompt_name: z.string(),
  date_time: z.string(),
  rank_exposure: z.string(),
  rank_exposure_number: z.string(),
  rank_details: z.array(RankDetail),
  products: z.array(z.record(z.string(), z.unknown())).optional(),
});
export type LegacyResult = z.infer<typeof LegacyResult>;

export const LegacyScreenshot = z.looseObject({
  task_id: Id,
  sc_status: z.number().int(),
  sceenshot_result: z.string(),
});
export type LegacyScreenshot = z.infer<typeof LegacyScreenshot>;

/** Legacy source item (task/searches): `task_prompt_id` is the execution, `task_ai_id` upstream. */
export const LegacySource = z.looseObject({
  id: Id,
  task_ai_id: z.string(),
  task_prompt_id: Id,
  url: z.string(),
  title: z.string(),
  site_name: z.string(),
  site_icon: z.string(),
  cite_index: z.string(),
  published_at: z.string(),
  snippet: z.string(),
  domain: z.string(),
});
export type LegacySource = z.infer<typeof LegacySource>;

/** `pagination` of legacy task/searches, present only when `page` was sent. */
export const LegacyPagination = z.looseObject({
  current_page: PageNumber,
  last_page: Count,
  per_page: PageNumber,
  total: Count,
});

/** Body of legacy task/searches: `data` array, `pagination` beside it (or inside, tolerated). */
export const LegacySearchesBody = z.looseObject({
  success: z.literal(true).optional(),
  data: z.array(z.unknown()),
  pagination: LegacyPagination.optional(),
});

/** Legacy create: `number_id` and the new platform task IDs (`project_ids`). */
export const LegacyCreated = z.looseObject({
  number_id: Id,
  project_ids: z.array(Id),
});
export type LegacyCreated = z.infer<typeof LegacyCreated>;
