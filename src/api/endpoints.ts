/**
 * The 26 endpoints of spec section 4, one row each: method, path, and the zod schema of the
 * parameters the client checks before sending. The client and the simulator both key on
 * `EndpointId` (`"GET /api/v2/geo/task/results"`), so request counts, errors and logs name an
 * endpoint the same way everywhere.
 */
import { z } from 'zod';
import { ALLOWED_AI_PLATFORMS } from './platforms.ts';
import { Id, PageNumber, Ymd } from './schemas/common.ts';

// In a module of its own: the CLI's help names them without loading the schemas.
export { ALLOWED_AI_PLATFORMS } from './platforms.ts';

/** Monitoring task status filter: -3 all (default), -2, -1, 0, 1, 2 (spec 2.2). */
export const StatusFilter = z.union(
  [-3, -2, -1, 0, 1, 2].map((n) => z.literal(n)) as [z.ZodLiteral<number>, ...z.ZodLiteral<number>[]],
);

const perPage = (max: number) => z.number().int().min(1).max(max);

/** A comma-separated list of allowed platform keys, e.g. `deepseek,kimi_back`. */
const AiPlatformList = z
  .string()
  .min(1, 'choose at least one platform')
  .refine(
    (s) => s.split(',').every((p) => (ALLOWED_AI_PLATFORMS as readonly string[]).includes(p.trim())),
    `each platform must be one of ${ALLOWED_AI_PLATFORMS.join(', ')}`,
  );

const LegacyTaskOptions = {
  week_restart: z.union([z.literal(0), z.literal(1), z.literal(2), z.literal(3)]).optional(),
  only_rank: z.union([z.literal(0), z.literal(1)]).optional(),
  rank_match: z.union([z.literal(0), z.literal(1)]).optional(),
};

export const Params = {
  login: z.strictObject({ email: z.string().min(1), password: z.string().min(1) }),
  none: z.strictObject({}),
  siteDiagnosisPost: z.strictObject({ project_id: Id, force_refresh: z.boolean().optional() }),
  siteDiagnosisGet: z.strictObject({ project_id: Id }),
  customerProjects: z.strictObject({
    customer_id: Id,
    page: PageNumber.optional(),
    per_page: perPage(100).optional(),
    status: StatusFilter.optional(),
  }),
  projectTasks: z.strictObject({ project_id: Id, customer_id: Id.optional() }),
  taskInfo: z.strictObject({ task_id: Id }),
  taskPrompts: z.strictObject({ task_id: Id, date: Ymd.optional() }),
  taskResults: z.strictObject({
    task_id: Id,
    date: Ymd.optional(),
    page: PageNumber.optional(),
    per_page: perPage(100).optional(),
  }),
  promptTaskId: z.strictObject({ prompt_task_id: Id }),
  promptSearches: z.strictObject({
    prompt_task_id: Id,
    page: PageNumber.optional(),
    per_page: perPage(1000).optional(),
  }),
  promptProducts: z.strictObject({
    prompt_task_id: Id,
    page: PageNumber.optional(),
    per_page: perPage(100).optional(),
  }),
  legacyCreate: z.strictObject({
    brand: z.string().trim().min(1, 'brand (the monitoring task name) is required'),
    brand_desc: z.string().trim().min(1, 'brand_desc (comma-separated brands) is required'),
    diy_prompt: z.string().trim().min(1, 'diy_prompt (comma-separated questions) is required'),
    ai_platform: AiPlatformList,
    ...LegacyTaskOptions,
  }),
  legacyEdit: z.strictObject({
    number_id: Id,
    brand_desc: z.string().trim().min(1, 'brand_desc (comma-separated brands) is required'),
    diy_prompt: z.string().trim().min(1, 'diy_prompt (comma-separated questions) is required'),
    ai_platform: AiPlatformList,
    ...LegacyTaskOptions,
  }),
  legacyProjectList: z.strictObject({
    page: PageNumber.optional(),
    per_page: z.number().int().min(1).optional(),
    my_project_id: Id.optional(),
    status: StatusFilter.optional(),
  }),
  legacyProjectDetail: z.strictObject({ number_id: Id }),
  legacyTaskList: z.strictObject({ project_id: Id, date: Ymd.optional() }),
  legacyTaskId: z.strictObject({ task_id: Id }),
  legacyTaskResult: z.strictObject({
    task_id: Id,
    with_products: z.union([z.literal(0), z.literal(1)]).optional(),
  }),
  legacyTaskSearches: z.strictObject({
    task_id: Id,
    limit: perPage(1000).optional(),
    page: PageNumber.optional(),
  }),
  deductionDetails: z.strictObject({
    project_id: Id.optional(),
    start_date: Ymd.optional(),
    end_date: Ymd.optional(),
    page: PageNumber.optional(),
    per_page: z.number().int().min(1).optional(),
  }),
} as const;

export interface EndpointDef {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  /** false only for login. */
  readonly auth: boolean;
  readonly group: 'auth' | 'diagnosis' | 'hierarchical' | 'legacy' | 'finance';
}

export const ENDPOINTS = {
  login: { method: 'POST', path: '/api/v2/auth/login', auth: false, group: 'auth' },
  user: { method: 'GET', path: '/api/v2/auth/user', auth: true, group: 'auth' },
  logout: { method: 'POST', path: '/api/v2/auth/logout', auth: true, group: 'auth' },
  startSiteDiagnosis: {
    method: 'POST',
    path: '/api/v2/projects/{project_id}/site-diagnosis',
    auth: true,
    group: 'diagnosis',
  },
  getSiteDiagnosis: {
    method: 'GET',
    path: '/api/v2/projects/{project_id}/site-diagnosis',
    auth: true,
    group: 'diagnosis',
  },
  customerProjects: {
    method: 'GET',
    path: '/api/v2/geo/customer/projects',
    auth: true,
    group: 'hierarchical',
  },
  projectTasks: { method: 'GET', path: '/api/v2/geo/project/tasks', auth: true, group: 'hierarchical' },
  taskInfo: { method: 'GET', path: '/api/v2/geo/task/info', auth: true, group: 'hierarchical' },
  taskPrompts: { method: 'GET', path: '/api/v2/geo/task/prompts', auth: true, group: 'hierarchical' },
  taskResults: { method: 'GET', path: '/api/v2/geo/task/results', auth: true, group: 'hierarchical' },
  promptDetail: { method: 'GET', path: '/api/v2/geo/prompt/detail', auth: true, group: 'hierarchical' },
  promptResult: { method: 'GET', path: '/api/v2/geo/prompt/result', auth: true, group: 'hierarchical' },
  promptSearches: { method: 'GET', path: '/api/v2/geo/prompt/searches', auth: true, group: 'hierarchical' },
  promptScreenshot: {
    method: 'GET',
    path: '/api/v2/geo/prompt/screenshot',
    auth: true,
    group: 'hierarchical',
  },
  promptProducts: { method: 'GET', path: '/api/v2/geo/prompt/products', auth: true, group: 'hierarchical' },
  legacyProjectCreate: { method: 'POST', path: '/api/v2/geo/project/create', auth: true, group: 'legacy' },
  legacyProjectEdit: { method: 'POST', path: '/api/v2/geo/project/edit', auth: true, group: 'legacy' },
  legacyProjectList: { method: 'GET', path: '/api/v2/geo/project/list', auth: true, group: 'legacy' },
  legacyProjectDetail: { method: 'GET', path: '/api/v2/geo/project/detail', auth: true, group: 'legacy' },
  legacyTaskList: { method: 'GET', path: '/api/v2/geo/task/list', auth: true, group: 'legacy' },
  legacyTaskDetail: { method: 'GET', path: '/api/v2/geo/task/detail', auth: true, group: 'legacy' },
  legacyTaskResult: { method: 'GET', path: '/api/v2/geo/task/result', auth: true, group: 'legacy' },
  legacyTaskScreenshot: { method: 'GET', path: '/api/v2/geo/task/screenshot', auth: true, group: 'legacy' },
  legacyTaskSearches: { method: 'GET', path: '/api/v2/geo/task/searches', auth: true, group: 'legacy' },
  balance: { method: 'GET', path: '/api/v2/finance/balance', auth: true, group: 'finance' },
  deductionDetails: {
    method: 'GET',
    path: '/api/v2/finance/deduction/details',
    auth: true,
    group: 'finance',
  },
} as const satisfies Record<string, EndpointDef>;

export type EndpointName = keyof typeof ENDPOINTS;

/** `"GET /api/v2/geo/task/results"`: how logs, errors and the simulator's counters name an endpoint. */
export type EndpointId =
  `${(typeof ENDPOINTS)[EndpointName]['method']} ${(typeof ENDPOINTS)[EndpointName]['path']}`;

export function endpointId(name: EndpointName): EndpointId {
  const e = ENDPOINTS[name];
  return `${e.method} ${e.path}` as EndpointId;
}
