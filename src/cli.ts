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

const program = new Command('geo-sync')
  .description('Sync a GEO monitoring service (v2 API) into PostgreSQL or DuckDB')
  .version('0.1.0')
  .showHelpAfterError('(run with --help for usage)')
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
