/**
 * `geo-sync tasks list|show|create|edit`: monitoring task management over the legacy endpoints.
 * Values are checked before sending (allowed platforms, ranges); the server's 400 message is
 * shown as is.
 */
import type { z } from 'zod';
import { isGeoApiError } from '../../api/errors.ts';
import { Params } from '../../api/endpoints.ts';
import { UsageError } from '../../errors.ts';
import type { CommonOpts } from '../common.ts';
import { withApi } from './with-api.ts';

/** API field -> the flag a person typed, so a refusal names what to fix. */
const FLAG_OF: Record<string, string> = {
  brand: '--brand',
  brand_desc: '--brand-desc',
  diy_prompt: '--prompts',
  ai_platform: '--platforms',
  week_restart: '--week-restart',
  only_rank: '--only-rank',
  rank_match: '--rank-match',
  number_id: '--number-id',
};

export interface TaskFields {
  brand?: string;
  brandDesc: string;
  prompts: string;
  platforms: string;
  weekRestart?: number;
  onlyRank?: number;
  rankMatch?: number;
}

function bodyOf(o: TaskFields) {
  return {
    brand_desc: o.brandDesc,
    diy_prompt: o.prompts,
    ai_platform: o.platforms
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
      .join(','),
    ...(o.weekRestart !== undefined ? { week_restart: o.weekRestart } : {}),
    ...(o.onlyRank !== undefined ? { only_rank: o.onlyRank } : {}),
    ...(o.rankMatch !== undefined ? { rank_match: o.rankMatch } : {}),
  };
}

/** Checks a body with the endpoint's own parameter schema; one line per problem, naming the flag. */
function check<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  throw new UsageError(
    r.error.issues
      .map((i) => `${FLAG_OF[String(i.path[0])] ?? String(i.path[0])}: ${i.message}`)
      .join('\n       '),
  );
}

/** The server's 400 message, shown as is. */
function serverRefusal(e: unknown): never {
  if (isGeoApiError(e) && e.code === 'BAD_REQUEST')
    throw new UsageError(`refused by the server: ${e.serverMessage ?? e.message}`);
  if (isGeoApiError(e) && e.code === 'NOT_FOUND')
    throw new UsageError(`not found: ${e.serverMessage ?? 'no such monitoring task (number_id)'}`);
  throw e;
}

export type ListOpts = CommonOpts & { customer?: number; status?: number; json: boolean };
export type ShowOpts = CommonOpts & { numberId: number };
export type CreateOpts = CommonOpts & TaskFields;
export type EditOpts = CommonOpts & TaskFields & { numberId: number };

/** `tasks list`. */
export async function list(opts: ListOpts): Promise<void> {
  await withApi(opts, async (api) => {
    const params = check(Params.legacyProjectList, {
      ...(opts.customer !== undefined ? { my_project_id: opts.customer } : {}),
      ...(opts.status !== undefined ? { status: opts.status } : {}),
    });
    let n = 0;
    for await (const t of api.client.all.legacyProjectList(params)) {
      n++;
      if (opts.json) process.stdout.write(JSON.stringify(t) + '\n');
      else
        process.stdout.write(
          `${t.number_id}\t${t.status_name}\t${t.brand_name}\tplatform tasks: ${t.projects.map((p) => `${p.project_id}(${p.model_key})`).join(', ')}\n`,
        );
    }
    if (!opts.json) process.stdout.write(`${n} monitoring task(s)\n`);
  });
}

/** `tasks show`. */
export async function show(opts: ShowOpts): Promise<void> {
  await withApi(opts, async (api) => {
    const d = await api.client.legacyProjectDetail({ number_id: opts.numberId }).catch(serverRefusal);
    process.stdout.write(JSON.stringify(d, null, 2) + '\n');
  });
}

/** `tasks create`. */
export async function create(opts: CreateOpts): Promise<void> {
  const body = check(Params.legacyCreate, { brand: opts.brand, ...bodyOf(opts) });
  await withApi(opts, async (api) => {
    const created = await api.client.legacyProjectCreate(body).catch(serverRefusal);
    process.stdout.write(
      `created monitoring task number_id ${created.number_id}; platform tasks (task_id): ${created.project_ids.join(', ')}\n`,
    );
  });
}

/** `tasks edit`. */
export async function edit(opts: EditOpts): Promise<void> {
  const body = check(Params.legacyEdit, { number_id: opts.numberId, ...bodyOf(opts) });
  await withApi(opts, async (api) => {
    const message = await api.client.legacyProjectEdit(body).catch(serverRefusal);
    process.stdout.write(`edited monitoring task ${opts.numberId}${message ? `: ${String(message)}` : ''}\n`);
  });
}
