/**
 * `geo-sync tasks list|show|create|edit`: monitoring task management over the legacy endpoints.
 * Values are checked before sending (allowed platforms, ranges); the server's 400 message is
 * shown as is.
 */
import { Command, Option } from 'commander';
import type { z } from 'zod';
import { isGeoApiError } from '../api/errors.ts';
import { ALLOWED_AI_PLATFORMS, Params } from '../api/endpoints.ts';
import { createApi, UsageError } from '../app.ts';
import {
  action,
  configFrom,
  loggerFor,
  parseId,
  stopSignal,
  withCommonOptions,
  type CommonOpts,
} from './common.ts';

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

interface TaskFields {
  brand?: string;
  brandDesc: string;
  prompts: string;
  platforms: string;
  weekRestart?: number;
  onlyRank?: number;
  rankMatch?: number;
}

function fieldOptions(cmd: Command): Command {
  const int = (v: string) => (/^-?\d+$/.test(v) ? Number(v) : Number.NaN);
  return cmd
    .requiredOption('--brand-desc <list>', 'comma-separated brands, e.g. "石头,科沃斯"')
    .requiredOption('--prompts <list>', 'comma-separated questions')
    .requiredOption('--platforms <list>', `comma-separated platforms: ${ALLOWED_AI_PLATFORMS.join(', ')}`)
    .addOption(
      new Option('--week-restart <n>', '0 daily, 1 weekly, 2 this run only, 3 re-check').argParser(int),
    )
    .addOption(new Option('--only-rank <n>', '0 no, 1 yes').argParser(int))
    .addOption(new Option('--rank-match <n>', 'exact rank matching: 0 no, 1 yes').argParser(int));
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

export function tasksCommand(): Command {
  const tasks = new Command('tasks').description(
    'list, show, create and edit monitoring tasks (legacy endpoints)',
  );

  tasks.addCommand(
    withCommonOptions(new Command('list'))
      .description('monitoring tasks the key can read')
      .option('--customer <id>', 'only this page project (my_project_id)', parseId)
      .option(
        '--status <n>',
        '-3 all, -2 paused for arrears, -1 paused, 0 pending, 1 in progress, 2 completed',
        (v) => Number(v),
      )
      .option('--json', 'one JSON object per line', false)
      .action(
        action(async (opts: CommonOpts & { customer?: number; status?: number; json: boolean }) => {
          const config = configFrom(opts);
          const logger = loggerFor(config);
          const api = createApi(config, logger, { signal: stopSignal(logger) });
          try {
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
          } finally {
            await api.close();
          }
        }),
      ),
  );

  tasks.addCommand(
    withCommonOptions(new Command('show'))
      .description('one monitoring task with its configuration and platforms')
      .requiredOption('--number-id <id>', 'monitoring task ID (number_id)', parseId)
      .action(
        action(async (opts: CommonOpts & { numberId: number }) => {
          const config = configFrom(opts);
          const logger = loggerFor(config);
          const api = createApi(config, logger, { signal: stopSignal(logger) });
          try {
            const d = await api.client.legacyProjectDetail({ number_id: opts.numberId }).catch(serverRefusal);
            process.stdout.write(JSON.stringify(d, null, 2) + '\n');
          } finally {
            await api.close();
          }
        }),
      ),
  );

  tasks.addCommand(
    fieldOptions(withCommonOptions(new Command('create')))
      .description('create a monitoring task')
      .requiredOption('--brand <name>', 'monitoring task name')
      .action(
        action(async (opts: CommonOpts & TaskFields) => {
          const body = check(Params.legacyCreate, { brand: opts.brand, ...bodyOf(opts) });
          const config = configFrom(opts);
          const logger = loggerFor(config);
          const api = createApi(config, logger, { signal: stopSignal(logger) });
          try {
            const created = await api.client.legacyProjectCreate(body).catch(serverRefusal);
            process.stdout.write(
              `created monitoring task number_id ${created.number_id}; platform tasks (task_id): ${created.project_ids.join(', ')}\n`,
            );
          } finally {
            await api.close();
          }
        }),
      ),
  );

  tasks.addCommand(
    fieldOptions(withCommonOptions(new Command('edit')))
      .description('edit a monitoring task')
      .requiredOption('--number-id <id>', 'monitoring task ID (number_id)', parseId)
      .action(
        action(async (opts: CommonOpts & TaskFields & { numberId: number }) => {
          const body = check(Params.legacyEdit, { number_id: opts.numberId, ...bodyOf(opts) });
          const config = configFrom(opts);
          const logger = loggerFor(config);
          const api = createApi(config, logger, { signal: stopSignal(logger) });
          try {
            const message = await api.client.legacyProjectEdit(body).catch(serverRefusal);
            process.stdout.write(
              `edited monitoring task ${opts.numberId}${message ? `: ${String(message)}` : ''}\n`,
            );
          } finally {
            await api.close();
          }
        }),
      ),
  );
  return tasks;
}
