/** The command line: assembles the commands; each lives in src/commands/. */
import { Command, CommanderError } from 'commander';
import { diagnoseCommand, whoamiCommand } from './commands/account.ts';
import { checkCommand } from './commands/check.ts';
import { demoCommand } from './commands/demo.ts';
import { exportCommand } from './commands/export.ts';
import { reportCommand } from './commands/report.ts';
import { backfillCommand, syncCommand } from './commands/sync.ts';
import { scheduleCommand } from './commands/schedule.ts';
import { rollupsCommand } from './commands/rollups.ts';
import { stateCommand } from './commands/state.ts';
import { verifyCommand } from './commands/verify.ts';
import { tasksCommand } from './commands/tasks.ts';
import { workerCommand } from './commands/worker.ts';
import { migrateCommand, runsCommand } from './commands/warehouse.ts';
import { simulateCommand } from './simulator/command.ts';
import { boundHeapGrowth } from './heap.ts';
import { EXIT } from './sync/exit-codes.ts';

boundHeapGrowth();

/** The README's table of exit codes, in short (README, "Exit codes"). */
const EXIT_CODES_HELP = `
Exit codes:
  0    success
  1    failure, a database or API that cannot be reached included (the message
       names the setting: GEO_WAREHOUSE, GEO_LOCK_URL, GEO_BASE_URL or its flag)
  2    bad usage or configuration (a metrics port it cannot listen on included)
  3    partial: rows quarantined or units failed; check: a test failed; verify:
       a difference
  4    locked: another run holds the warehouse lock, another process has the
       DuckDB file open, or another export writes into the same --out folder
  130  stopped by SIGINT/SIGTERM: waits and queries end at once, nothing is
       left half-written (finished units are kept), locks are released
       (schedule: 0 when stopped between runs); a second signal exits at once`;

const program = new Command('geo-sync')
  .description('Sync a GEO monitoring service (v2 API) into PostgreSQL or DuckDB')
  .version('0.1.0')
  .showHelpAfterError('(run with --help for usage)')
  .addHelpText('after', EXIT_CODES_HELP)
  .exitOverride();

for (const cmd of [
  syncCommand(),
  backfillCommand(),
  scheduleCommand(),
  demoCommand(),
  migrateCommand(),
  runsCommand(),
  stateCommand(),
  rollupsCommand(),
  checkCommand(),
  verifyCommand(),
  exportCommand(),
  reportCommand(),
  whoamiCommand(),
  diagnoseCommand(),
  tasksCommand(),
  workerCommand(),
  simulateCommand(),
]) {
  program.addCommand(cmd);
}

/** Parse errors anywhere in the tree come back here, to exit with the usage code. */
function overrideExits(cmd: Command): void {
  cmd.exitOverride();
  cmd.commands.forEach(overrideExits);
}
overrideExits(program);

try {
  await program.parseAsync(process.argv);
} catch (e) {
  if (e instanceof CommanderError) {
    // Help and version exit 0; every other parse error is bad usage.
    process.exit(e.exitCode === 0 ? 0 : EXIT.usage);
  }
  throw e;
}
