/**
 * Scope: which monitoring tasks and platform tasks a run covers (docs/architecture.md, "Plan").
 * Configured page project IDs walk customer/projects then project/tasks. With none configured,
 * discovery reads everything the key can: legacy project/list (every monitoring task, historical
 * ones with no project included), then project/tasks per `number_id`, whose items carry the
 * owning `customer_id` (null for historical data).
 */
import type { MonitoringTask, PlatformTask } from '../api/schemas/hierarchical.ts';
import type { LegacyMonitoringTask } from '../api/schemas/legacy.ts';
import { isGeoApiError } from '../api/errors.ts';
import type { ApiPort } from './port.ts';

export interface Scope {
  /** Page project IDs in scope (non-null customer_ids seen). */
  customers: number[];
  monitoringTasks: MonitoringTask[];
  platformTasks: PlatformTask[];
  /** Monitoring tasks whose platform tasks could not be read (404: gone or not readable). */
  unreadable: { project_id: number; reason: string }[];
}

/**
 * Every promise's value, in order; the first failure is thrown once all have settled, so no
 * request of the scope is still under way when its failure fails the run.
 */
async function all<T>(promises: readonly Promise<T>[]): Promise<T[]> {
  const settled = await Promise.allSettled(promises);
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((r) => (r as PromiseFulfilledResult<T>).value);
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

/**
 * A historical monitoring task is not listed by customer/projects (it has no project), so its
 * row is built from the legacy list item, renamed to the hierarchical fields (spec 1).
 */
export function monitoringTaskFromLegacy(
  t: LegacyMonitoringTask,
  customer_id: number | null,
): MonitoringTask {
  return {
    customer_id,
    project_id: t.number_id,
    project_name: t.brand_name,
    brand_cate_desc: t.brand_cate_desc,
    brand_desc_list: t.brand_desc_list,
    status: t.status,
    status_name: t.status_name,
    created_at: t.created_at,
    task_count: t.projects.length,
    prompts: t.prompts,
  };
}

async function platformTasksOf(api: ApiPort, projectId: number, customerId: number | null, scope: Scope) {
  try {
    return await api.platformTasks(projectId, customerId);
  } catch (e) {
    // 404: the monitoring task is gone or not readable by this key; the rest of the scope goes on.
    if (isGeoApiError(e) && e.code === 'NOT_FOUND') {
      scope.unreadable.push({ project_id: projectId, reason: e.message });
      return [];
    }
    throw e;
  }
}

/** The unreadable monitoring tasks in one order (their 404s arrive in any). */
function byProject(scope: Scope): Scope {
  scope.unreadable.sort((a, b) => a.project_id - b.project_id);
  return scope;
}

export async function resolveScope(api: ApiPort, customers: readonly number[]): Promise<Scope> {
  const scope: Scope = { customers: [], monitoringTasks: [], platformTasks: [], unreadable: [] };
  const seenTasks = new Set<number>();
  const addPlatformTasks = (tasks: PlatformTask[]) => {
    for (const t of tasks) {
      if (seenTasks.has(t.task_id)) continue;
      seenTasks.add(t.task_id);
      scope.platformTasks.push(t);
    }
  };

  // Every customer's requests at once (they are independent), their results taken in the
  // customers' order: the scope is the same as read one customer after another.
  if (customers.length > 0) {
    scope.customers = [...new Set(customers)];
    const read = await all(
      scope.customers.map(async (customerId) => {
        const tasks = await collect(api.monitoringTasks(customerId));
        const lists = await all(tasks.map((t) => platformTasksOf(api, t.project_id, customerId, scope)));
        return { tasks, lists };
      }),
    );
    for (const { tasks, lists } of read) {
      scope.monitoringTasks.push(...tasks);
      lists.forEach(addPlatformTasks);
    }
    return byProject(scope);
  }

  const legacy = await collect(api.legacyMonitoringTasks());
  const lists = await all(legacy.map((t) => platformTasksOf(api, t.number_id, null, scope)));
  lists.forEach(addPlatformTasks);

  const customerOf = new Map<number, number | null>();
  for (const t of scope.platformTasks)
    if (!customerOf.has(t.project_id)) customerOf.set(t.project_id, t.customer_id);
  scope.customers = [...new Set([...customerOf.values()].filter((c): c is number => c !== null))].sort(
    (a, b) => a - b,
  );

  // The hierarchical row of each monitoring task comes from customer/projects where it has a
  // project; historical tasks (customer_id null) fall back to the legacy item.
  const hierarchical = new Map<number, MonitoringTask>();
  const byCustomer = await all(scope.customers.map((c) => collect(api.monitoringTasks(c))));
  for (const t of byCustomer.flat()) hierarchical.set(t.project_id, t);
  for (const t of legacy) {
    scope.monitoringTasks.push(
      hierarchical.get(t.number_id) ?? monitoringTaskFromLegacy(t, customerOf.get(t.number_id) ?? null),
    );
  }
  return byProject(scope);
}
