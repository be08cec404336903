/** Hierarchical reads (spec 4.3): everything keyed by the IDs of the hierarchy. */
import type { ExecRef, WirePromptResultItem } from '../executions.ts';
import { productsOf, screenshotObjectOf, toSource } from '../children.ts';
import { fail, ok, pageObject, paging } from '../http.ts';
import type { Reply } from '../http.ts';
import type { CorruptibleChild, ExecutionChild } from '../mutations.ts';
import { dayNumber } from '../time.ts';
import type { Ctx } from './context.ts';

const STATUSES = [-3, -2, -1, 0, 1, 2] as const;

/** The `date` parameter: a single day, default yesterday in Asia/Shanghai (4.3 rule 1). */
function dayParam(ctx: Ctx): number {
  const date = ctx.query.date('date');
  return date === undefined ? ctx.world.today() - 1 : dayNumber(date);
}

/** corruptExecution: the item is served with a wrong-typed field, so per-item validation rejects it. */
function served<T extends { prompt_task_id: number }>(ctx: Ctx, item: T): T | Record<string, unknown> {
  return ctx.world.isCorrupted(item.prompt_task_id) ? { ...item, hours: 'abc' } : item;
}

/** The execution of `prompt_task_id`; 404 when it does not exist or `child` is hidden (hideChild). */
function execution(ctx: Ctx, child: ExecutionChild): ExecRef | Reply {
  const id = ctx.query.int('prompt_task_id', { required: true, min: 0 });
  const ref = ctx.world.resolve(id);
  if (!ref || ctx.world.isChildHidden(id, child)) return fail(404, 'Prompt execution not found.');
  return ref;
}

/** corruptChild: a known field of the wrong type, which no retry will change. */
function corrupt(ctx: Ctx, ref: ExecRef, child: CorruptibleChild, data: Record<string, unknown>): Reply {
  return ok(ctx.world.isChildCorrupted(ref.prompt_task_id, child) ? { ...data, ...CORRUPT[child] } : data);
}

const CORRUPT: Record<CorruptibleChild, Record<string, unknown>> = {
  sources: { total: 'many' },
  screenshot: { screenshot_status: 'done' },
  products: { total: 'many' },
};

const isReply = (x: ExecRef | Reply): x is Reply => 'status' in x;

export function customerProjects(ctx: Ctx): Reply {
  const customerId = ctx.query.int('customer_id', { required: true, min: 0 });
  const { page, perPage, offset } = paging(ctx.query, 20, 100);
  const status = ctx.query.oneOf('status', STATUSES) ?? -3;
  // Only monitoring tasks the key may read; an unreadable or unknown project lists nothing.
  let tasks = ctx.world.monitoringTaskDefs(customerId);
  if (status !== -3) tasks = tasks.filter((t) => t.status === status);
  const items = tasks.slice(offset, offset + perPage).map((t) => ctx.world.monitoringTaskView(t));
  return ok(pageObject(items, tasks.length, page, perPage, ctx.unstableTotals));
}

export function projectTasks(ctx: Ctx): Reply {
  const projectId = ctx.query.int('project_id', { required: true, min: 0 });
  const customerId = ctx.query.int('customer_id', { min: 0 });
  const mt = ctx.world.catalog.monitoringTask(projectId);
  if (
    !mt ||
    !mt.readable ||
    ctx.world.isMonitoringTaskHidden(projectId) ||
    (customerId !== undefined && mt.customer_id !== customerId)
  )
    return fail(404, 'Monitoring task not found.');
  return ok(ctx.world.catalog.platformTasksOf(mt.project_id).map((p) => ctx.world.platformTaskView(p)));
}

export function taskInfo(ctx: Ctx): Reply {
  const pt = ctx.world.readablePlatformTask(ctx.query.int('task_id', { required: true, min: 0 }));
  return pt ? ok(ctx.world.platformTaskView(pt)) : fail(404, 'Platform task not found.');
}

export function taskPrompts(ctx: Ctx): Reply {
  const pt = ctx.world.readablePlatformTask(ctx.query.int('task_id', { required: true, min: 0 }));
  const day = dayParam(ctx);
  if (!pt) return fail(404, 'Platform task not found.');
  return ok(ctx.world.refs(pt, day).map((r) => served(ctx, ctx.world.executionItem(r))));
}

export function taskResults(ctx: Ctx): Reply {
  const pt = ctx.world.readablePlatformTask(ctx.query.int('task_id', { required: true, min: 0 }));
  const day = dayParam(ctx);
  const asked = paging(ctx.query, 20, 100);
  const perPage = Math.min(asked.perPage, ctx.resultsPerPageCap ?? asked.perPage);
  const page = asked.page;
  const offset = (page - 1) * perPage;
  if (!pt) return fail(404, 'Platform task not found.');
  const total = ctx.world.visible(pt, day).count;
  const items: (WirePromptResultItem | Record<string, unknown>)[] = ctx.world
    .refs(pt, day, offset, perPage)
    .map((r) => served(ctx, ctx.world.resultItem(r)));
  // moveToHeadBetweenPages takes effect after this page: later pages see the list shifted.
  ctx.world.notePageServed(pt, day);
  return ok(pageObject(items, total, page, perPage, ctx.unstableTotals));
}

export function promptDetail(ctx: Ctx): Reply {
  const ref = execution(ctx, 'detail');
  return isReply(ref) ? ref : ok(ctx.world.executionItem(ref));
}

export function promptResult(ctx: Ctx): Reply {
  const ref = execution(ctx, 'result');
  if (isReply(ref)) return ref;
  const r = ctx.world.resultItem(ref);
  return ok({
    customer_id: r.customer_id,
    project_id: r.project_id,
    task_id: r.task_id,
    prompt_task_id: r.prompt_task_id,
    prompt_name: r.prompt_name,
    date_time: r.date_time,
    result_status: r.result_status,
    answer: r.answer,
    think: r.think,
    rank_exposure: r.rank_exposure,
    rank_exposure_number: r.rank_exposure_number,
    rank_details: r.rank_details,
  });
}

export function promptSearches(ctx: Ctx): Reply {
  const ref = execution(ctx, 'sources');
  const { page, perPage, offset } = paging(ctx.query, 100, 1000);
  if (isReply(ref)) return ref;
  const total = ctx.world.sourceTotal(ref);
  const items =
    offset >= total
      ? []
      : ctx.world
          .sourceRecords(ref, offset + perPage)
          .slice(offset)
          .map((r) =>
            ctx.world.isSourceCorrupted(r.source_id) ? { ...toSource(r), url: 404 } : toSource(r),
          );
  return corrupt(ctx, ref, 'sources', { ...pageObject(items, total, page, perPage, ctx.unstableTotals) });
}

export function promptScreenshot(ctx: Ctx): Reply {
  const ref = execution(ctx, 'screenshot');
  if (isReply(ref)) return ref;
  return corrupt(ctx, ref, 'screenshot', { ...screenshotObjectOf(ref) });
}

export function promptProducts(ctx: Ctx): Reply {
  const ref = execution(ctx, 'products');
  const { page, perPage, offset } = paging(ctx.query, 20, 100);
  if (isReply(ref)) return ref;
  const set = productsOf(ref);
  const shown = ctx.unstableTotals ? set.cards.length + (page % 3) : set.cards.length;
  // field_order, field_labels, supported and result_status inside `data` (one reading of 2.8).
  return corrupt(ctx, ref, 'products', {
    products: set.cards.slice(offset, offset + perPage),
    current_page: page,
    last_page: Math.max(1, Math.ceil(shown / perPage)),
    total: shown,
    per_page: perPage,
    field_order: set.field_order,
    field_labels: set.field_labels,
    supported: set.supported,
    result_status: set.result_status,
  });
}
