/**
 * What the walk needs from the API, as a narrow port. `fromClient` (client-port.ts) adapts the
 * GeoClient to it; tests could hand in anything else. Every record here is already validated:
 * bad list items were quarantined by the client's reject sink before reaching the walk.
 */
import type { Balance, Deduction } from '../api/schemas/account.ts';
import type { SiteDiagnosis } from '../api/schemas/diagnosis.ts';
import type {
  DisplayJson,
  MonitoringTask,
  PlatformTask,
  ProductCard,
  PromptExecution,
  PromptResult,
  PromptResultItem,
  Screenshot,
  Source,
} from '../api/schemas/hierarchical.ts';
import type {
  LegacyMonitoringTask,
  LegacyMonitoringTaskDetail,
  LegacySource,
  LegacyTaskDetail,
} from '../api/schemas/legacy.ts';

export interface ResultsPage {
  items: PromptResultItem[];
  current_page: number;
  last_page: number;
  total: number;
}

/**
 * A child list as read: its items (a quarantined item is left out) and the `total` its last page
 * reported (null where the endpoint reports none). Fewer items than the total means the
 * execution's children were not read completely.
 */
export interface ChildList<T> {
  items: T[];
  total: number | null;
}

export interface ProductsResult {
  cards: ProductCard[];
  total: number;
  supported: boolean | undefined;
  result_status: string | undefined;
  field_order: DisplayJson | undefined;
  field_labels: DisplayJson | undefined;
}

/** An execution with no product data: what a 404 on prompt/products leaves, and where reading starts. */
export function emptyProducts(): ProductsResult {
  return {
    cards: [],
    total: 0,
    supported: undefined,
    result_status: undefined,
    field_order: undefined,
    field_labels: undefined,
  };
}

export interface ApiPort {
  /**
   * Resolves when the request queue has room for more work (fewer waiting than it runs at once).
   * The run starts its next unit then, so small units keep every slot busy. Absent: no gating.
   */
  headroom?(): Promise<void>;
  /** Every monitoring task of a page project (all pages). */
  monitoringTasks(customer_id: number): AsyncIterable<MonitoringTask>;
  platformTasks(project_id: number, customer_id: number | null): Promise<PlatformTask[]>;
  /** Pages of a unit's daily results; pages are fetched ahead while earlier ones are processed. */
  resultPages(task_id: number, date: string): AsyncIterable<ResultsPage>;
  dailyExecutions(task_id: number, date: string): Promise<PromptExecution[]>;
  promptDetail(prompt_task_id: number): Promise<PromptExecution>;
  /** One execution's result (answer, rank_details): what `verify` compares its stored rows with. */
  promptResult(prompt_task_id: number): Promise<PromptResult>;
  sources(prompt_task_id: number): Promise<ChildList<Source>>;
  products(prompt_task_id: number): Promise<ProductsResult>;
  screenshot(prompt_task_id: number): Promise<Screenshot>;
  legacyMonitoringTasks(): AsyncIterable<LegacyMonitoringTask>;
  legacyMonitoringTaskDetail(number_id: number): Promise<LegacyMonitoringTaskDetail>;
  legacyTaskDetail(prompt_task_id: number): Promise<LegacyTaskDetail>;
  legacySources(prompt_task_id: number): Promise<ChildList<LegacySource>>;
  siteDiagnosis(customer_id: number): Promise<SiteDiagnosis>;
  balance(): Promise<Balance>;
  deductions(params: { start_date?: string }): AsyncIterable<Deduction>;
  /**
   * Asks whether the key itself is accepted (auth/user): resolves when it is, throws the
   * refusal (401/403) when not. Tells a 403 of the key from a 403 on one task's data.
   */
  checkKey(): Promise<void>;
}
