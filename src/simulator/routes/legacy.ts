/**
 * Legacy compatibility endpoints (spec 4.4) with the legacy renames (spec 1): `number_id` is a
 * monitoring task, the daily list's `project_id` a platform task, the legacy `task_id` a prompt
 * execution. Failures carry `{success: false, message}`.
 */
import { Params as ParamSchemas } from '../../api/endpoints.ts';
import type { TaskInput } from '../catalog.ts';
import { productsOf, screenshotObjectOf, toLegacySource } from '../children.ts';
import type { ExecRef } from '../executions.ts';
import { secondsIntoDay } from '../executions.ts';
import { legacyFail, ok, pageObject, paging } from '../http.ts';
import type { Reply } from '../http.ts';
import type { ExecutionChild } from '../mutations.ts';
import { dayNumber, shanghaiDateTime, wallTime } from '../time.ts';
import type { Ctx } from './context.ts';
import { BAD_JSON } from './context.ts';

const STATUSES = [-3, -2, -1, 0, 1, 2] as const;

/** The execution of the legacy `task_id`; 404 when it does not exist or `child` is hidden (hideChild). */
function execution(ctx: Ctx, child: ExecutionChild): ExecRef | Reply {
  const id = ctx.query.int('task_id', { required: true, min: 0 });
  const ref = ctx.world.resolve(id);
  if (!ref || ctx.world.isChildHidden(id, child)) return legacyFail(404, '任务不存在');
  return ref;
}

const isReply = (x: ExecRef | Reply): x is Reply => 'status' in x;

export function projectList(ctx: Ctx): Reply {
  const { page, perPage, offset } = paging(ctx.query, 20, 1000);
  const myProjectId = ctx.query.int('my_project_id', { min: 0 });
  const status = ctx.query.oneOf('status', STATUSES) ?? -3;
  // Every monitoring task the user may read, newest first: projects', historical and created.
  let tasks = ctx.world.readableMonitoringTaskDefs().sort((a, b) => b.project_id - a.project_id);
  if (myProjectId !== undefined) tasks = tasks.filter((t) => t.customer_id === myProjectId);
  if (status !== -3) tasks = tasks.filter((t) => t.status === status);
  const items = tasks.slice(offset, offset + perPage).map((t) => ctx.world.legacyItem(t));
  return ok(pageObject(items, tasks.length, page, perPage, ctx.unstableTotals));
}

export function projectDetail(ctx: Ctx): Reply {
  const mt = ctx.world.catalog.monitoringTask(ctx.query.int('number_id', { required: true, min: 0 }));
  return mt && mt.readable ? ok(ctx.world.legacyDetail(mt)) : legacyFail(404, '监测任务不存在');
}

/** Daily list of a platform task; the date defaults to TODAY (hierarchical reads: yesterday). */
export function taskList(ctx: Ctx): Reply {
  const pt = ctx.world.readablePlatformTask(ctx.query.int('project_id', { required: true, min: 0 }));
  const date = ctx.query.date('date');
  if (!pt) return legacyFail(404, '平台任务不存在');
  const day = date === undefined ? ctx.world.today() : dayNumber(date);
  return ok(
    ctx.world.refs(pt, day).map((r) => {
      const e = ctx.world.executionItem(r);
      return {
        project_id: e.task_id,
        task_id: e.prompt_task_id,
        prompt_name: e.prompt_name,
        status: e.status,
        model: e.model,
        // 2.11: a string in the daily list (the detail alone allows null); none is "".
        sceenshot_result: e.screenshot_url ?? '',
        date_time: e.date_time,
        brand_exposure: e.brand_exposure,
      };
    }),
  );
}

export function taskDetail(ctx: Ctx): Reply {
  const ref = execution(ctx, 'detail');
  if (isReply(ref)) return ref;
  const e = ctx.world.executionItem(ref);
  const at = secondsIntoDay(ref);
  return ok({
    project_id: e.task_id,
    task_id: e.prompt_task_id,
    prompt_name: e.prompt_name,
    status: e.status,
    model: e.model,
    engine: e.engine,
    date_time: e.date_time,
    brand_exposure: e.brand_exposure,
    sceenshot_result: e.screenshot_url,
    created_at: wallTime(ref.day, at),
    updated_at: wallTime(ref.day, at + 30 + (ref.h % 570)),
  });
}

export function taskResult(ctx: Ctx): Reply {
  const ref = execution(ctx, 'result');
  const withProducts = ctx.query.oneOf('with_products', [0, 1]) ?? 0;
  if (isReply(ref)) return ref;
  const r = ctx.world.resultItem(ref);
  const data: Record<string, unknown> = {
    project_id: r.task_id,
    task_id: r.prompt_task_id,
    answer: r.answer,
    think: r.think,
    brand_exposure: r.brand_exposure,
    model: r.model,
    engine: r.engine,
    prompt_name: r.prompt_name,
    date_time: r.date_time,
    rank_exposure: r.rank_exposure,
    rank_exposure_number: r.rank_exposure_number,
    rank_details: r.rank_details,
  };
  // The cards prompt/products serves: the platforms with cards are the two families of 4.4, and
  // every other platform has none, so it answers an empty array.
  if (withProducts === 1) data.products = productsOf(ref).cards;
  return ok(data);
}

export function taskScreenshot(ctx: Ctx): Reply {
  const ref = execution(ctx, 'screenshot');
  if (isReply(ref)) return ref;
  // What prompt/screenshot serves, renamed: an execution without a screenshot exists, so it is
  // 200 with an empty `sceenshot_result` (404 is kept for a missing execution, 4.3 rule 4).
  const shot = screenshotObjectOf(ref);
  return ok({
    task_id: shot.prompt_task_id,
    sc_status: shot.screenshot_status,
    sceenshot_result: shot.screenshot_url,
  });
}

/** Sources by `limit`; `pagination` only when `page` was sent. `id` equals the source_id. */
export function taskSearches(ctx: Ctx): Reply {
  const ref = execution(ctx, 'sources');
  const limit = ctx.query.int('limit', { min: 1, max: 1000 }) ?? 10;
  const page = ctx.query.int('page', { min: 1 });
  if (isReply(ref)) return ref;
  const total = ctx.world.sourceTotal(ref);
  const offset = ((page ?? 1) - 1) * limit;
  const items =
    offset >= total
      ? []
      : ctx.world
          .sourceRecords(ref, offset + limit)
          .slice(offset)
          .map(toLegacySource);
  if (page === undefined) return ok(items);
  const p = pageObject(items, total, page, limit, ctx.unstableTotals);
  return ok(items, {
    pagination: {
      current_page: p.current_page,
      last_page: p.last_page,
      per_page: p.per_page,
      total: p.total,
    },
  });
}

/** Validates a create/edit body with the parameter schemas of the endpoint table (400 on failure). */
function taskBody(
  ctx: Ctx,
  schema: 'legacyCreate' | 'legacyEdit',
): { input: TaskInput & { number_id?: number } } | Reply {
  if (ctx.body === BAD_JSON) return legacyFail(400, '请求体不是合法的 JSON');
  const parsed = ParamSchemas[schema].safeParse(ctx.body ?? {});
  if (!parsed.success) {
    const message = parsed.error.issues
      .map((i) => (i.path.length > 0 ? `${i.path.join('.')}: ${i.message}` : i.message))
      .join('; ');
    return legacyFail(400, message);
  }
  return { input: parsed.data };
}

export function projectCreate(ctx: Ctx): Reply {
  const r = taskBody(ctx, 'legacyCreate');
  if ('status' in r) return r;
  // A rule only the server knows (like a real one's uniqueness check): the client cannot check
  // it before sending, so the server's own 400 message is what the user must see.
  const name = (r.input.brand ?? '').trim();
  if (ctx.world.catalog.allMonitoringTasks().some((mt) => mt.readable && mt.project_name === name)) {
    return legacyFail(400, `监测任务名称已存在: ${name}`);
  }
  const created = ctx.world.catalog.create(r.input, shanghaiDateTime(ctx.world.now()));
  return { status: 200, body: { success: true, message: '创建成功', data: created } };
}

export function projectEdit(ctx: Ctx): Reply {
  const r = taskBody(ctx, 'legacyEdit');
  if ('status' in r) return r;
  const mt = ctx.world.catalog.monitoringTask(r.input.number_id ?? -1);
  if (!mt || !mt.readable) return legacyFail(404, '监测任务不存在');
  ctx.world.catalog.edit(mt, r.input);
  return { status: 200, body: { success: true, message: '修改成功' } };
}
