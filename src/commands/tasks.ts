/**
 * `geo-sync tasks list|show|create|edit`: monitoring task management over the legacy endpoints.
 * Values are checked before sending (allowed platforms, ranges); the server's 400 message is
 * shown as is.
 */
import { Command, Option } from 'commander';
import { ALLOWED_AI_PLATFORMS } from '../api/platforms.ts';
import type { CreateOpts, EditOpts, ListOpts, ShowOpts } from './actions/tasks.ts';
import { action, parseId, withCommonOptions } from './common.ts';

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
      .action(action(async (opts: ListOpts) => (await import('./actions/tasks.ts')).list(opts))),
  );

  tasks.addCommand(
    withCommonOptions(new Command('show'))
      .description('one monitoring task with its configuration and platforms')
      .requiredOption('--number-id <id>', 'monitoring task ID (number_id)', parseId)
      .action(action(async (opts: ShowOpts) => (await import('./actions/tasks.ts')).show(opts))),
  );

  tasks.addCommand(
    fieldOptions(withCommonOptions(new Command('create')))
      .description('create a monitoring task')
      .requiredOption('--brand <name>', 'monitoring task name')
      .action(action(async (opts: CreateOpts) => (await import('./actions/tasks.ts')).create(opts))),
  );

  tasks.addCommand(
    fieldOptions(withCommonOptions(new Command('edit')))
      .description('edit a monitoring task')
      .requiredOption('--number-id <id>', 'monitoring task ID (number_id)', parseId)
      .action(action(async (opts: EditOpts) => (await import('./actions/tasks.ts')).edit(opts))),
  );
  return tasks;
}
