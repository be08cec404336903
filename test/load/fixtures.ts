/** Hand-built warehouse rows for the load tests. Every builder takes overrides. */
import type {
  ExecutionBatch,
  ExecutionProductsRow,
  ExecutionRankRow,
  ExecutionScreenshotRow,
  ExecutionSourceRow,
  ProductCardRow,
  PromptExecutionRow,
  SyncRunRow,
} from '../../src/transform/rows.ts';

export function execution(promptTaskId: number, o: Partial<PromptExecutionRow> = {}): PromptExecutionRow {
  return {
    prompt_task_id: promptTaskId,
    task_id: 10,
    project_id: 100,
    customer_id: 1000,
    prompt_name: `question ${promptTaskId}`,
    date_time: '2026-11-20',
    hours: 9,
    status: 2,
    model: 'deepseek-r1',
    engine: 'deepseek',
    brand_exposure: '1',
    screenshot_url: null,
    result_status: 'available',
    answer: `answer of ${promptTaskId}\twith a tab, a newline\nand a backslash \\`,
    think: null,
    rank_exposure: '50%',
    rank_exposure_number: '1/2',
    created_at: '2026-11-20T08:00:00+08:00',
    updated_at: null,
    ...o,
  };
}

export function rank(
  promptTaskId: number,
  ordinal: number,
  brand: string,
  position: number | null,
  o: Partial<ExecutionRankRow> = {},
): ExecutionRankRow {
  return {
    prompt_task_id: promptTaskId,
    ordinal,
    brand,
    brand_short: brand.slice(0, 3),
    position,
    visibility: position === null ? null : 80,
    score: position === null ? null : 7,
    raw_values: null,
    ...o,
  };
}

export function source(
  sourceId: number,
  promptTaskId: number,
  domain: string,
  o: Partial<ExecutionSourceRow> = {},
): ExecutionSourceRow {
  return {
    source_id: sourceId,
    prompt_task_id: promptTaskId,
    task_id: 10,
    project_id: 100,
    customer_id: 1000,
    url: `https://${domain}/a/${sourceId}`,
    title: `title ${sourceId}`,
    domain,
    cite_index: String(sourceId % 10),
    snippet: 'snippet',
    upstream_task_id: `up-${promptTaskId}`,
    site_name: null,
    site_icon: null,
    published_at: null,
    task_ai_id: null,
    ...o,
  };
}

export function screenshot(
  promptTaskId: number,
  o: Partial<ExecutionScreenshotRow> = {},
): ExecutionScreenshotRow {
  return {
    prompt_task_id: promptTaskId,
    task_id: 10,
    project_id: 100,
    customer_id: 1000,
    screenshot_status: 2,
    screenshot_url: `https://img.example/${promptTaskId}.png`,
    ...o,
  };
}

export function products(promptTaskId: number, o: Partial<ExecutionProductsRow> = {}): ExecutionProductsRow {
  return {
    prompt_task_id: promptTaskId,
    supported: true,
    result_status: 'available',
    total: 1,
    field_order: ['product_name', 'price'],
    field_labels: { product_name: '商品', price: '价格' },
    ...o,
  };
}

export function card(
  promptTaskId: number,
  position: number,
  o: Partial<ProductCardRow> = {},
): ProductCardRow {
  return {
    prompt_task_id: promptTaskId,
    position,
    card: { product_name: `p${position}`, price: '¥9.90', extra: { nested: [1, 2] } },
    product_name: `p${position}`,
    price: '¥9.90',
    shop: null,
    source: null,
    link: null,
    ...o,
  };
}

export function batch(parts: Partial<ExecutionBatch>): ExecutionBatch {
  return { executions: [], ranks: [], sources: [], screenshots: [], products: [], cards: [], ...parts };
}

export function syncRun(runId: string, o: Partial<SyncRunRow> = {}): SyncRunRow {
  return {
    run_id: runId,
    kind: 'sync',
    args: { dates: ['2026-11-20'], force: false },
    started_at: '2026-11-21T04:30:00+08:00',
    finished_at: null,
    status: 'running',
    rows: {},
    requests: 0,
    retries: 0,
    rate_limited: 0,
    rejects: 0,
    units_total: 3,
    units_done: 0,
    units_failed: 0,
    error: null,
    unreadable: null,
    text_values_changed: 0,
    executions_read: null,
    executions_unchanged: null,
    ...o,
  };
}
