/**
 * Scenario 9, commands: every command that reads the warehouse (check, export, report, state
 * show, verify, rollups refresh) run as a user runs it on the dashboards scenario's year, at the
 * defaults: wall time, peak RSS, exit code (bench/commands.ts, which lists its options).
 */
import {
  commandsOptions,
  dialectOf,
  runCommands,
  type CommandsRun,
  type CommandsSize,
  type Dialect,
} from '../commands.ts';
import { int, met, seconds } from '../report.ts';
import { COMMANDS } from '../sizes.ts';
import { log, naRow, type Scenario, type ScenarioContext } from './common.ts';

/** The target of each command: it finishes at the defaults with the exit code it should. */
const COMMANDS_TARGET = 'finishes at the defaults, exit 0 (3: a check or comparison failed)';

/**
 * `npm run bench -- --only commands`: the scenario on DuckDB and PostgreSQL (or on
 * --commands-warehouse alone), a row per command, figures in `results.commands`;
 * `commands_all_finished` (every command of every run finished at the defaults) and
 * `commands_peak_rss_mb` (the highest peak RSS of any command on DuckDB, the default warehouse).
 */
async function commandsScenario(
  sizes: readonly CommandsSize[],
  { rows, results, pgReason }: ScenarioContext,
): Promise<void> {
  const opts = commandsOptions();
  const runs: CommandsRun[] = [];
  for (const size of sizes) {
    const dialects: Dialect[] = opts.warehouse ? [dialectOf(opts.warehouse)] : ['duckdb', 'postgres'];
    for (const dialect of dialects) {
      const label = `9 commands (${dialect === 'duckdb' ? 'DuckDB' : 'PostgreSQL'}, ${int(size.executionsPerDay)}/day)`;
      if (dialect === 'postgres' && pgReason && !opts.warehouse) {
        rows.push(naRow(label, pgReason));
        continue;
      }
      const r = await runCommands(dialect, size, log, opts);
      runs.push(r);
      const settings = r.atDefaults
        ? 'defaults'
        : Object.entries(r.env)
            .map(([k, v]) => `${k}=${v}`)
            .join(' ');
      for (const c of r.commands) {
        rows.push({
          scenario: label,
          size: `${c.command} (${int(r.rows.prompt_executions!)} exec, ${r.days} days)`,
          figure:
            `${seconds(c.wallMs)} (${c.cpuSeconds === null ? '?' : c.cpuSeconds.toFixed(0)} CPU s), ` +
            `${c.rssMb === null ? '?' : c.rssMb.toFixed(0)} MB peak RSS`,
          baseline: settings,
          ratio: c.timedOut ? 'timed out' : `exit ${c.exitCode ?? c.signal}`,
          target: COMMANDS_TARGET,
          met: met(c.finished && r.atDefaults),
        });
      }
    }
  }
  const all = runs.flatMap((r) => r.commands.map((c) => c.finished && r.atDefaults));
  results.commands = runs;
  results.commands_all_finished = all.length ? all.every(Boolean) : null;
  const duckdbPeaks = runs
    .filter((r) => r.dialect === 'duckdb')
    .flatMap((r) => r.commands.map((c) => c.rssMb ?? 0));
  results.commands_peak_rss_mb = duckdbPeaks.length ? Math.max(...duckdbPeaks) : null;
}

export const commands: Scenario = {
  name: 'commands',
  figures: ['commands', 'commands_all_finished', 'commands_peak_rss_mb'],
  targets: { commands: COMMANDS_TARGET },
  run: (ctx) => commandsScenario(COMMANDS, ctx),
};
