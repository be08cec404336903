/** `geo-sync whoami` and `geo-sync diagnose`. */
import { Command } from 'commander';
import type { DiagnoseOpts } from './actions/account.ts';
import { action, parseId, parsePositiveInt, withCommonOptions, type CommonOpts } from './common.ts';

export function whoamiCommand(): Command {
  return withCommonOptions(new Command('whoami'))
    .description('print the account (auth/user) and its balance')
    .action(action(async (opts: CommonOpts) => (await import('./actions/account.ts')).whoami(opts)));
}

export function diagnoseCommand(): Command {
  return withCommonOptions(new Command('diagnose'))
    .description('start a site diagnosis of a page project (POST), optionally wait for it, and store it')
    .requiredOption('--customer <id>', 'page project ID (customer_id; the ID after /partner/)', parseId)
    .option('--force-refresh', 'start a new diagnosis even if the latest one completed', false)
    .option('--wait', 'poll until result_ready or failed, then store the result', false)
    .option('--poll-seconds <n>', 'seconds between polls (the spec recommends 10)', parsePositiveInt, 10)
    .option('--timeout-minutes <n>', 'give up waiting after this long', parsePositiveInt, 60)
    .action(action(async (opts: DiagnoseOpts) => (await import('./actions/account.ts')).diagnose(opts)));
}
