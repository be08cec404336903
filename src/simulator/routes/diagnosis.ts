/**
 * Site diagnosis (spec 4.2, 3.1). The path `project_id` is the page project ID (customer_id).
 * The POST body may hold only `force_refresh` (boolean); `url`, `site_domain` or anything else
 * is refused with 422 (4.2 rule 2): the diagnosis always runs on the project's stored URL.
 */
import type { CustomerDef } from '../catalog.ts';
import { fail, ok } from '../http.ts';
import type { Reply } from '../http.ts';
import type { Ctx } from './context.ts';
import { BAD_JSON } from './context.ts';

const INT = /^\d{1,16}$/;

function project(ctx: Ctx): CustomerDef | Reply {
  const id = ctx.pathId !== null && INT.test(ctx.pathId) ? Number(ctx.pathId) : null;
  const c = id === null ? undefined : ctx.world.catalog.customer(id);
  // Unknown and not accessible look the same (spec 7: 404).
  return c && c.readable ? c : fail(404, 'Project not found.');
}

function unprocessable(field: string, message: string): Reply {
  return { status: 422, body: { message, errors: { [field]: [message] } } };
}

export function startSiteDiagnosis(ctx: Ctx): Reply {
  const c = project(ctx);
  if ('status' in c) return c;
  for (const key of Object.keys(ctx.query.raw)) return unprocessable(key, `The ${key} field is prohibited.`);
  let force = false;
  const body = ctx.body;
  if (body === BAD_JSON) return unprocessable('body', 'The request body must be a JSON object.');
  if (body !== undefined && body !== null) {
    if (typeof body !== 'object' || Array.isArray(body))
      return unprocessable('body', 'The request body must be a JSON object.');
    for (const [key, value] of Object.entries(body)) {
      if (key !== 'force_refresh') return unprocessable(key, `The ${key} field is prohibited.`);
      if (value === true || value === 1) force = true;
      else if (value !== false && value !== 0)
        return unprocessable(key, 'The force_refresh field must be true or false.');
    }
  }
  const { created, data } = ctx.world.diagnosis.post(c, force);
  return { status: created ? 202 : 200, body: { success: true, data } };
}

export function getSiteDiagnosis(ctx: Ctx): Reply {
  const c = project(ctx);
  return 'status' in c ? c : ok(ctx.world.diagnosis.get(c));
}
