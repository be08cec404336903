/** Authentication (spec 4.1) and finance (spec 4.5). */
import { legacyFail, ok, pageObject, paging } from '../http.ts';
import type { Reply } from '../http.ts';
import type { Ctx } from './context.ts';
import { BAD_JSON } from './context.ts';

export function login(ctx: Ctx): Reply {
  const body = ctx.body;
  if (body === BAD_JSON || body === null || typeof body !== 'object')
    return legacyFail(422, 'The email field is required.');
  const { email, password } = body as Record<string, unknown>;
  if (typeof email !== 'string' || email === '') return legacyFail(422, 'The email field is required.');
  if (typeof password !== 'string' || password === '')
    return legacyFail(422, 'The password field is required.');
  const token = ctx.auth.login(email, password);
  if (!token) return legacyFail(401, '邮箱或密码错误');
  ctx.world.noteLogin();
  const u = ctx.world.catalog.user;
  return {
    status: 200,
    body: {
      success: true,
      message: '登录成功',
      data: { token, token_type: 'Bearer', user: { id: u.id, name: u.name, email: u.email } },
    },
  };
}

export function user(ctx: Ctx): Reply {
  return ok(ctx.world.user);
}

export function logout(ctx: Ctx): Reply {
  if (ctx.token) ctx.auth.logout(ctx.token);
  return { status: 200, body: { success: true, message: '已退出登录' } };
}

export function balance(ctx: Ctx): Reply {
  return ok(ctx.world.balance());
}

/** Deduction records, newest first; dates filter on the created_at day, project_id = prompt_task_id. */
export function deductionDetails(ctx: Ctx): Reply {
  const promptTaskId = ctx.query.int('project_id', { min: 0 });
  const start = ctx.query.date('start_date');
  const end = ctx.query.date('end_date');
  const { page, perPage, offset } = paging(ctx.query, 20, 1000);
  const rows = ctx.world
    .deductions()
    .reverse()
    .filter((d) => {
      const day = d.created_at.slice(0, 10);
      return (
        (promptTaskId === undefined || d.project_id === promptTaskId) &&
        (start === undefined || day >= start) &&
        (end === undefined || day <= end)
      );
    });
  return ok(pageObject(rows.slice(offset, offset + perPage), rows.length, page, perPage, ctx.unstableTotals));
}
