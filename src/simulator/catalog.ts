/**
 * The small, fixed part of the world: account, page projects (customers), monitoring tasks and
 * platform tasks, all built once from the seed (a few dozen objects). Legacy create/edit are an
 * in-memory overlay on top, so `resetOverlays()` returns to the seeded catalog.
 */
import type { Brand, Category } from './corpus.ts';
import { CATEGORIES, COMPANY_DOMAINS, PROJECT_SUFFIXES, QUESTIONS, USER_NAMES, fill } from './corpus.ts';
import { MAX_ORDINAL } from './ids.ts';
import type { PlatformDef, PlatformKey } from './platforms.ts';
import { PLATFORMS, PLATFORM_KEYS } from './platforms.ts';
import { Rng, hash32, tag } from './rng.ts';

export interface CustomerDef {
  customer_id: number;
  /** false for the one project that exists but the key may not read. */
  readable: boolean;
  name: string;
  /** The project's current URL (`site_domain`, may keep a subdirectory). */
  url: string;
  /** The URL before the project was last edited; a diagnosis that ran on it is not current. */
  previousUrl: string | null;
  category: Category;
}

/** Configuration a legacy edit may change (the seeded values are the base). */
export interface TaskConfig {
  brand_desc_list: string;
  prompts: string[];
  week_restart: number;
  only_rank: number;
  rank_match: number;
}

export interface MonitoringTaskDef {
  customer_id: number | null;
  project_id: number;
  readable: boolean;
  project_name: string;
  /** null for a task created through legacy create (no category given). */
  category: Category | null;
  /** Brands the task watches, the main brand first. */
  brands: Brand[];
  brand_cate_desc: string;
  status: number;
  created_at: string;
  brand_urls: string[];
  emails: string[];
  /** Seeded configuration; executions always use these prompts (history does not change). */
  base: TaskConfig;
  createdByApi: boolean;
}

export interface PlatformTaskDef {
  /** 1.. for platform tasks that produce executions (packed into prompt_task_id), else 0. */
  ordinal: number;
  task_id: number;
  platform: PlatformDef;
  mt: MonitoringTaskDef;
  readable: boolean;
  /** Per-task hash: batch hours and the like. */
  h: number;
}

export interface UserDef {
  id: number;
  name: string;
  email: string;
  uuid: string;
  created_at: string;
}

export interface CatalogOptions {
  seed: number;
  email: string;
}

/** Input of legacy create/edit after validation. */
export interface TaskInput {
  brand?: string;
  brand_desc: string;
  diy_prompt: string;
  ai_platform: string;
  week_restart?: number | undefined;
  only_rank?: number | undefined;
  rank_match?: number | undefined;
}

export function splitList(s: string): string[] {
  return s
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '');
}

/** Fixed anchor for creation times, so they do not move with the clock. */
const CREATED_FROM = Date.UTC(2024, 8, 1);

export class Catalog {
  readonly user: UserDef;
  readonly customers: CustomerDef[];
  /** Platform tasks that produce executions; index = ordinal - 1. */
  readonly executing: PlatformTaskDef[];
  private readonly seed: number;
  private readonly baseMonitoring = new Map<number, MonitoringTaskDef>();
  private readonly basePlatform = new Map<number, PlatformTaskDef>();
  private readonly baseChildren = new Map<number, PlatformTaskDef[]>();
  private readonly firstNumberId: number;
  private readonly firstTaskId: number;

  // Overlay of legacy create/edit.
  private monitoring = new Map<number, MonitoringTaskDef>();
  private platform = new Map<number, PlatformTaskDef>();
  private children = new Map<number, PlatformTaskDef[]>();
  private configs = new Map<number, TaskConfig>();
  private pausedTasks = new Set<number>();
  private nextNumberId: number;
  private nextTaskId: number;

  constructor(opts: CatalogOptions) {
    this.seed = opts.seed;
    const rng = Rng.of(opts.seed, tag('catalog'));

    const userName = rng.pick(USER_NAMES);
    this.user = {
      id: rng.int(10_001, 99_999),
      name: userName,
      email: opts.email,
      uuid: `${rng.hex(8)}-${rng.hex(4)}-4${rng.hex(3)}-a${rng.hex(3)}-${rng.hex(12)}`,
      created_at: stamp(CREATED_FROM - 200 * 86_400_000, rng),
    };

    // 3 readable projects, 1 unreadable, and the categories of 1-2 historical tasks: distinct.
    const historicalCount = rng.int(1, 2);
    const categories = rng.sample(CATEGORIES, 4 + historicalCount);
    const unreadableAt = rng.int(0, 3);
    let customerId = rng.int(1_000, 8_000);
    let numberId = rng.int(20_000, 60_000);
    let taskId = rng.int(100_000, 400_000);
    const domain = rng.pick(COMPANY_DOMAINS);

    // The last readable project had its URL changed after its last diagnosis (is_current_url false).
    const movedAt = unreadableAt === 3 ? 2 : 3;
    this.customers = [];
    for (let i = 0; i < 4; i++) {
      const category = categories[i] as Category;
      const url = category.site;
      this.customers.push({
        customer_id: customerId,
        readable: i !== unreadableAt,
        name: `${(category.brands[0] as Brand).short}官网`,
        url: i === movedAt ? `${url}zh-cn/` : url,
        previousUrl: i === movedAt ? url : null,
        category,
      });
      customerId += rng.int(1, 40);
    }

    const executing: PlatformTaskDef[] = [];
    const addMonitoring = (
      customer: CustomerDef | null,
      category: Category,
      readable: boolean,
      first: boolean,
    ) => {
      const brands = [category.brands[0] as Brand, ...rng.sample(category.brands.slice(1), rng.int(4, 7))];
      const year = 2025;
      const promptCount = rng.int(3, 6);
      const prompts = rng.sample(QUESTIONS, promptCount).map((q) =>
        fill(q, {
          year,
          cat: category.name,
          budget: roundBudget(category.price[0] + (category.price[1] - category.price[0]) * 0.4),
          brand: (brands[0] as Brand).short,
          brand2: (brands[1] as Brand).short,
        }),
      );
      const main = brands[0] as Brand;
      const mt: MonitoringTaskDef = {
        customer_id: customer ? customer.customer_id : null,
        project_id: numberId,
        readable,
        project_name: `${main.short}${category.name}${rng.pick(PROJECT_SUFFIXES)}`,
        category,
        brands,
        brand_cate_desc: category.name,
        status: customer ? pickStatus(rng) : 2,
        created_at: stamp(CREATED_FROM + rng.int(0, 180) * 86_400_000, rng),
        brand_urls: [category.site],
        emails: [`ops@${domain}`, ...(rng.chance(0.5) ? [`geo@${domain}`] : [])],
        base: {
          brand_desc_list: brands.map((b) => b.short).join('\n'),
          prompts,
          week_restart: rng.chance(0.8) ? 0 : 1,
          only_rank: rng.chance(0.8) ? 0 : 1,
          rank_match: rng.chance(0.5) ? 0 : 1,
        },
        createdByApi: false,
      };
      numberId += rng.int(1, 30);
      // The very first task always watches yuanbao first (so the largest execution of each day,
      // k=0 of ordinal 1, has product cards) plus doubao (the other card family) and one
      // unsupported platform; the rest pick 3-6 platforms freely.
      let keys: PlatformKey[];
      if (first) {
        const rest = PLATFORM_KEYS.filter((k) => k !== 'yuanbao' && k !== 'doubao' && k !== 'qwen');
        keys = ['yuanbao', 'doubao', 'qwen', ...rng.sample(rest, rng.int(0, 3))];
      } else {
        keys = rng.sample(PLATFORM_KEYS, rng.int(3, 6));
      }
      const list: PlatformTaskDef[] = [];
      for (const key of keys) {
        const pt: PlatformTaskDef = {
          ordinal: readable ? executing.length + 1 : 0,
          task_id: taskId,
          platform: PLATFORMS[key],
          mt,
          readable,
          h: hash32(opts.seed, tag('task'), taskId),
        };
        taskId += rng.int(1, 9);
        if (readable) executing.push(pt);
        list.push(pt);
        this.basePlatform.set(pt.task_id, pt);
      }
      this.baseMonitoring.set(mt.project_id, mt);
      this.baseChildren.set(mt.project_id, list);
    };

    let first = true;
    for (const c of this.customers) {
      const n = rng.int(2, 4);
      for (let i = 0; i < n; i++) {
        addMonitoring(c, c.category, c.readable, first && c.readable);
        if (c.readable) first = false;
      }
    }
    for (let i = 0; i < historicalCount; i++) addMonitoring(null, categories[4 + i] as Category, true, false);
    if (executing.length > MAX_ORDINAL) throw new Error('too many platform tasks for the ID scheme');

    this.executing = executing;
    this.firstNumberId = numberId + 100;
    this.firstTaskId = taskId + 1_000;
    this.nextNumberId = this.firstNumberId;
    this.nextTaskId = this.firstTaskId;
    this.resetOverlays();
  }

  /** Drop legacy creates and edits. */
  resetOverlays(): void {
    this.monitoring = new Map(this.baseMonitoring);
    this.platform = new Map(this.basePlatform);
    this.children = new Map([...this.baseChildren].map(([k, v]) => [k, v.slice()]));
    this.configs = new Map();
    this.pausedTasks = new Set();
    this.nextNumberId = this.firstNumberId;
    this.nextTaskId = this.firstTaskId;
  }

  readableCustomers(): CustomerDef[] {
    return this.customers.filter((c) => c.readable);
  }

  customer(id: number): CustomerDef | undefined {
    return this.customers.find((c) => c.customer_id === id);
  }

  monitoringTask(projectId: number): MonitoringTaskDef | undefined {
    return this.monitoring.get(projectId);
  }

  platformTask(taskId: number): PlatformTaskDef | undefined {
    return this.platform.get(taskId);
  }

  /** All monitoring tasks in creation order (base first, then created ones). */
  allMonitoringTasks(): MonitoringTaskDef[] {
    return [...this.monitoring.values()];
  }

  platformTasksOf(projectId: number): PlatformTaskDef[] {
    return this.children.get(projectId) ?? [];
  }

  config(mt: MonitoringTaskDef): TaskConfig {
    return this.configs.get(mt.project_id) ?? mt.base;
  }

  /** A platform task's status: its monitoring task's, or paused when an edit dropped its platform. */
  taskStatus(pt: PlatformTaskDef): number {
    return this.pausedTasks.has(pt.task_id) ? -1 : pt.mt.status;
  }

  /** Legacy create: a new monitoring task with no project and no executions yet. */
  create(input: TaskInput, createdAt: string): { number_id: number; project_ids: number[] } {
    const brands = splitList(input.brand_desc).map((s) => ({ full: s, short: s }));
    const mt: MonitoringTaskDef = {
      customer_id: null,
      project_id: this.nextNumberId++,
      readable: true,
      project_name: (input.brand ?? '').trim(),
      category: null,
      brands,
      brand_cate_desc: '',
      status: 0,
      created_at: createdAt,
      brand_urls: [],
      emails: [],
      base: {
        brand_desc_list: brands.map((b) => b.short).join('\n'),
        prompts: splitList(input.diy_prompt),
        week_restart: input.week_restart ?? 0,
        only_rank: input.only_rank ?? 0,
        rank_match: input.rank_match ?? 0,
      },
      createdByApi: true,
    };
    this.monitoring.set(mt.project_id, mt);
    const list: PlatformTaskDef[] = [];
    this.children.set(mt.project_id, list);
    for (const key of uniqueKeys(input.ai_platform)) list.push(this.addPlatformTask(mt, key));
    return { number_id: mt.project_id, project_ids: list.map((p) => p.task_id) };
  }

  /**
   * Legacy edit: new brands, prompts and options; platforms not listed before get new platform
   * tasks, platforms no longer listed are paused (their history stays readable).
   */
  edit(mt: MonitoringTaskDef, input: TaskInput): void {
    const old = this.config(mt);
    this.configs.set(mt.project_id, {
      brand_desc_list: splitList(input.brand_desc).join('\n'),
      prompts: splitList(input.diy_prompt),
      week_restart: input.week_restart ?? old.week_restart,
      only_rank: input.only_rank ?? old.only_rank,
      rank_match: input.rank_match ?? old.rank_match,
    });
    const keys = uniqueKeys(input.ai_platform);
    const list = this.children.get(mt.project_id) ?? [];
    this.children.set(mt.project_id, list);
    for (const pt of list) {
      if (keys.includes(pt.platform.key)) this.pausedTasks.delete(pt.task_id);
      else this.pausedTasks.add(pt.task_id);
    }
    for (const key of keys) {
      if (!list.some((pt) => pt.platform.key === key)) list.push(this.addPlatformTask(mt, key));
    }
  }

  private addPlatformTask(mt: MonitoringTaskDef, key: PlatformKey): PlatformTaskDef {
    const pt: PlatformTaskDef = {
      ordinal: 0,
      task_id: this.nextTaskId++,
      platform: PLATFORMS[key],
      mt,
      readable: true,
      h: hash32(this.seed, tag('task'), this.nextTaskId),
    };
    this.platform.set(pt.task_id, pt);
    return pt;
  }
}

function uniqueKeys(aiPlatform: string): PlatformKey[] {
  return [...new Set(splitList(aiPlatform))] as PlatformKey[];
}

function pickStatus(rng: Rng): number {
  const r = rng.float();
  if (r < 0.7) return 1;
  if (r < 0.82) return 2;
  if (r < 0.92) return -1;
  if (r < 0.97) return 0;
  return -2;
}

function roundBudget(n: number): number {
  const step = n > 10_000 ? 10_000 : n > 1_000 ? 1_000 : 100;
  return Math.max(step, Math.round(n / step) * step);
}

/** `YYYY-MM-DD HH:MM:SS` (Shanghai) of a day plus a random office-hours time. */
function stamp(dayStartUtc: number, rng: Rng): string {
  const secs = rng.int(9 * 3600, 19 * 3600);
  const iso = new Date(dayStartUtc + secs * 1000).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;
}
