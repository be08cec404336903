/** The walk's port over the real GeoClient: which endpoint answers each question, at which page size. */
import type { GeoClient } from '../api/client.ts';
import type { LegacySearchesPage } from '../api/paging.ts';
import { emptyProducts, type ApiPort, type ChildList, type ProductsResult } from './port.ts';

/** Every page's items, and the total the last page reported. */
async function collectList<T>(
  pages: AsyncIterable<{ items: T[]; total: number | null }>,
): Promise<ChildList<T>> {
  const out: ChildList<T> = { items: [], total: null };
  for await (const page of pages) {
    out.items.push(...page.items);
    out.total = page.total;
  }
  return out;
}

async function* legacyPages(pages: AsyncIterable<LegacySearchesPage>) {
  for await (const page of pages) yield { items: page.items, total: page.pagination?.total ?? null };
}

export function apiPortFromClient(client: GeoClient): ApiPort {
  return {
    headroom: () => client.queue.whenHeadroom(),
    monitoringTasks: (customer_id) => client.all.customerProjects({ customer_id }),
    platformTasks: (project_id, customer_id) =>
      client.projectTasks(customer_id === null ? { project_id } : { project_id, customer_id }),
    resultPages: (task_id, date) => client.pages.taskResults({ task_id, date }),
    dailyExecutions: (task_id, date) => client.taskPrompts({ task_id, date }),
    promptDetail: (prompt_task_id) => client.promptDetail({ prompt_task_id }),
    promptResult: (prompt_task_id) => client.promptResult({ prompt_task_id }),
    sources: (prompt_task_id) => collectList(client.pages.promptSearches({ prompt_task_id })),
    async products(prompt_task_id): Promise<ProductsResult> {
      const result = emptyProducts();
      for await (const page of client.pages.promptProducts({ prompt_task_id })) {
        result.cards.push(...page.items);
        result.total = page.total;
        result.supported ??= page.supported;
        result.result_status ??= page.result_status;
        result.field_order ??= page.field_order;
        result.field_labels ??= page.field_labels;
      }
      return result;
    },
    screenshot: (prompt_task_id) => client.promptScreenshot({ prompt_task_id }),
    legacyMonitoringTasks: () => client.all.legacyProjectList({}),
    legacyMonitoringTaskDetail: (number_id) => client.legacyProjectDetail({ number_id }),
    // Legacy renames (spec 1): the legacy `task_id` is the execution (`prompt_task_id`).
    legacyTaskDetail: (prompt_task_id) => client.legacyTaskDetail({ task_id: prompt_task_id }),
    // `page` is sent so the server returns `pagination` and every page can be read.
    legacySources: (prompt_task_id) =>
      collectList(legacyPages(client.pages.legacyTaskSearches({ task_id: prompt_task_id, page: 1 }))),
    siteDiagnosis: (customer_id) => client.getSiteDiagnosis({ project_id: customer_id }),
    balance: () => client.balance(),
    deductions: (params) => client.all.deductionDetails(params),
    checkKey: () => client.user().then(() => undefined),
  };
}
