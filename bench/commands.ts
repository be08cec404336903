/**
 * Scenario 9, commands: every command that reads the warehouse, run as a user runs it (the CLI,
 * `node bin/geo-sync.js ...`, a child process with bench/rss-reporter.mjs preloaded), at the
 * defaults (no GEO_DUCKDB_* setting), on the dashboards scenario's year of a large account
 * (bench/dashboards.ts `buildYear`: a synced day grown inside the warehouse to every day of the
 * year). Each command's wall time, peak RSS and exit code; it finished when it exited with the
 * code it should and was not stopped by the bench's timeout.
 *
 * The grown year is given a checkpoint per unit (as the sync would have left them), so `check`
 * has every unit of the year to look at and passes when the warehouse is right; `verify` compares
 * against a simulator of the seed's account, which does not know the grown executions (exit 3,
 * "gone upstream": what is measured is the warehouse side, the sample and its stored rows).
 *
 * Options (after `npm run bench -- --only commands`):
 *   --commands-warehouse T   run against T (`duckdb:<file>` or a `postgres://` URL of an existing
 *                            database): a year already there is reused, else one is built into T
 *                            and kept (building a year of 2,400 a day takes minutes)
 *   --commands-bin FILE      another checkout's bin/geo-sync.js (the figures before a change)
 *   --commands-only a,b      some commands only (their keys: refresh, check, export-parquet-30, ...)
 *   --commands-env K=V,...   extra environment for every command (e.g. GEO_DUCKDB_MEMORY_LIMIT=2GB);
 *                            the run is then not "at the defaults"
 */
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { addDays } from '../src/transform/time.ts';
import { buildYear, duckdbSession, first, pgSession, withSession, type Session } from './dashboards.ts';
import { readRssReport, type RssReport } from './memory.ts';
import { GEO_SYNC_BIN, RSS_REPORTER, tempDir } from './paths.ts';
import { childEnv, runChild } from './child.ts';
import { createDatabase } from './postgres.ts';
import { BENCH_API_KEY, startSimulatorProcess, type SimulatorProcess } from './simulator.ts';

export type Dialect = 'postgres' | 'duckdb';

export interface CommandsSize {
  executionsPerDay: number;
  days: number;
  /** Days of the ranged export and report (the last ones of the year). */
  recentDays: number;
  /** A command still running after this long is stopped (SIGTERM) and reported as not finished. */
  timeoutMs: number;
  /** `verify --sample N`; its default (50) when absent. */
  verifySample?: number;
  /** The commands run (their keys); every one when absent. */
  keys?: readonly string[];
}

/** The simulator account the year grows from (the dashboards scenario's). */
const SEED = { seed: 707, executionsPerDay: 400 };

export interface CommandFigure {
  /** Key for --commands-only. */
  key: string;
  /** What was run, as a user types it (paths shortened). */
  command: string;
  /** Exit codes that mean it did its job (check and verify exit 3 on a legitimate finding). */
  expectedExit: number[];
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  finished: boolean;
  wallMs: number;
  rssMb: number | null;
  sampledPeakMb: Record<string, number> | null;
  atPeakMb: Record<string, number> | null;
  cpuSeconds: number | null;
  /** Export: MB written into the output folder. */
  outputMb?: number;
  /** Check: the checks that failed (the FAIL lines). */
  failedChecks?: string[];
  stdoutTail: string;
  stderrTail: string;
}

export interface CommandsRun {
  dialect: Dialect;
  executionsPerDay: number;
  days: number;
  first: string;
  last: string;
  rows: Record<string, number>;
  /** Null when an existing year was reused. */
  buildMs: number | null;
  /** No GEO_DUCKDB_* setting (or any other) given to the commands. */
  atDefaults: boolean;
  env: Record<string, string>;
  bin: string;
  commands: CommandFigure[];
}

function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i < 0 ? undefined : process.argv[i + 1];
}

/** The scenario's options (see the file comment). */
export function commandsOptions(): {
  warehouse?: string;
  bin: string;
  only?: Set<string>;
  env: Record<string, string>;
} {
  const env: Record<string, string> = {};
  for (const pair of (argValue('--commands-env') ?? '').split(',').filter(Boolean)) {
    const at = pair.indexOf('=');
    if (at < 1) throw new Error(`--commands-env expects K=V pairs, got ${pair}`);
    env[pair.slice(0, at)] = pair.slice(at + 1);
  }
  const only = argValue('--commands-only');
  const warehouse = argValue('--commands-warehouse');
  return {
    ...(warehouse ? { warehouse } : {}),
    bin: argValue('--commands-bin') ?? GEO_SYNC_BIN,
    ...(only ? { only: new Set(only.split(',').filter(Boolean)) } : {}),
    env,
  };
}

export function dialectOf(target: string): Dialect {
  return /^postgres(ql)?:\/\//i.test(target) ? 'postgres' : 'duckdb';
}

function sessionOf(target: string): () => Promise<Session> {
  return dialectOf(target) === 'postgres'
    ? () => pgSession(target)
    : () => duckdbSession(target.replace(/^duckdb:/i, ''));
}

/** Executions already in the warehouse (0 when it is empty or not migrated yet). */
async function storedExecutions(target: string): Promise<number> {
  if (dialectOf(target) === 'duckdb' && !existsSync(target.replace(/^duckdb:/i, ''))) return 0;
  return withSession(sessionOf(target), async (s) => {
    const rows = await s.rows(
      `SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = 'geo' AND table_name = 'prompt_executions'`,
    );
    if (Number(first(rows).n) === 0) return 0;
    return Number(first(await s.rows('SELECT count(*) AS n FROM geo.prompt_executions')).n);
  });
}

/**
 * A checkpoint per unit of the grown year, with the executions it holds as its listing's count:
 * what the nightly syncs of that year would have left (the growth copies no checkpoints).
 */
const CHECKPOINTS_SQL = `INSERT INTO geo.sync_checkpoints (task_id, date, run_id, finished_at, executions, listed_total)
  SELECT e.task_id, e.date_time, r.run_id, r.finished_at, count(*), count(*)
  FROM geo.prompt_executions e
  CROSS JOIN (SELECT run_id, finished_at FROM geo.sync_runs WHERE status = 'success'
              ORDER BY finished_at DESC LIMIT 1) r
  GROUP BY e.task_id, e.date_time, r.run_id, r.finished_at`;

async function build(target: string, size: CommandsSize, log: (line: string) => void): Promise<number> {
  const dialect = dialectOf(target);
  const t0 = performance.now();
  await buildYear(dialect, target, sessionOf(target), size, (line) => log(`commands ${line}`));
  await withSession(sessionOf(target), async (s) => {
    await s.exec(CHECKPOINTS_SQL);
    await s.exec(dialect === 'postgres' ? 'VACUUM ANALYZE geo.sync_checkpoints' : 'CHECKPOINT');
  });
  return performance.now() - t0;
}

interface Span {
  first: string;
  last: string;
  lastSuccess: Date;
  rows: Record<string, number>;
}

async function span(target: string): Promise<Span> {
  return withSession(sessionOf(target), async (s) => {
    const d = first(
      await s.rows(`SELECT CAST(min(date_time) AS VARCHAR) AS first, CAST(max(date_time) AS VARCHAR) AS last
        FROM geo.prompt_executions`),
    );
    const r = first(
      await s.rows(
        `SELECT extract(epoch FROM max(finished_at)) AS t FROM geo.sync_runs WHERE status = 'success'`,
      ),
    );
    const rows: Record<string, number> = {};
    for (const t of ['prompt_executions', 'execution_ranks', 'execution_sources', 'product_cards'])
      rows[t] = Number(first(await s.rows(`SELECT count(*) AS n FROM geo.${t}`)).n);
    return {
      first: String(d.first),
      last: String(d.last),
      lastSuccess: new Date(Number(r.t) * 1000),
      rows,
    };
  });
}

interface Planned {
  key: string;
  args: string[];
  /** Shown in the results instead of the temporary paths. */
  shown: string;
  expectedExit: number[];
  /** A folder or file the command writes (measured, then removed). */
  output?: string;
  /** Needs the API (verify). */
  api?: boolean;
}

const daysOf = (s: Span) => Math.round((Date.parse(s.last) - Date.parse(s.first)) / 86_400_000) + 1;

function plan(s: Span, out: string, size: CommandsSize): Planned[] {
  const recentFrom = (days: number) => addDays(s.last, -(days - 1));
  // Freshness counts hours since the last successful run: a year built days ago is still fresh here.
  const maxAge = Math.ceil((Date.now() - s.lastSuccess.getTime()) / 3_600_000) + 1;
  const exp = (format: 'parquet' | 'csv', days: number | null): Planned => {
    const range = days === null ? [] : ['--from', recentFrom(days), '--to', s.last];
    return {
      key: `export-${format}-${days === null ? 'year' : days}`,
      args: ['export', '--format', format, '--out', join(out, `export-${format}`), ...range],
      shown: `export --format ${format} --out DIR${range.length ? ` ${range.join(' ')}` : ''}`,
      expectedExit: [0],
      output: join(out, `export-${format}`),
    };
  };
  const report = (days: number | null): Planned => {
    const range = days === null ? [] : ['--from', recentFrom(days), '--to', s.last];
    return {
      key: `report-${days === null ? 'all' : days}`,
      args: ['report', '--out', join(out, 'report.html'), ...range],
      shown: `report --out report.html${range.length ? ` ${range.join(' ')}` : ''}`,
      expectedExit: [0],
      output: join(out, 'report.html'),
    };
  };
  const recent = Math.min(size.recentDays, daysOf(s));
  const sample = size.verifySample === undefined ? [] : ['--sample', String(size.verifySample)];
  return [
    {
      key: 'refresh',
      args: ['rollups', 'refresh', '--no-progress'],
      shown: 'rollups refresh',
      expectedExit: [0],
    },
    {
      key: 'check',
      args: ['check', '--from', s.first, '--to', s.last, '--max-age-hours', String(maxAge)],
      shown: `check --from ${s.first} --to ${s.last} --max-age-hours ${maxAge}`,
      expectedExit: [0, 3],
    },
    exp('parquet', recent),
    exp('csv', recent),
    exp('parquet', null),
    exp('csv', null),
    report(recent),
    report(null),
    {
      key: 'state',
      args: ['state', 'show', '--from', s.first, '--to', s.last],
      shown: `state show --from ${s.first} --to ${s.last}`,
      expectedExit: [0],
    },
    {
      key: 'verify',
      args: ['verify', ...sample],
      shown: ['verify', ...sample].join(' '),
      expectedExit: [0, 3],
      api: true,
    },
  ].filter((p) => !size.keys || size.keys.includes(p.key));
}

/** The line of stderr that says what went wrong (`error: ...`), else its last line. */
function firstErrorLine(stderr: string): string {
  const lines = stderr.trim().split('\n');
  return lines.find((l) => /^error:|^config:/.test(l)) ?? lines.at(-1) ?? '';
}

function sizeMb(path: string): number {
  if (!existsSync(path)) return 0;
  const st = statSync(path);
  if (!st.isDirectory()) return st.size / 1048576;
  return readdirSync(path).reduce((n, name) => n + sizeMb(join(path, name)), 0);
}

/** One command as a child process, its peak RSS reported by bench/rss-reporter.mjs. */
async function runCommand(
  p: Planned,
  o: { bin: string; env: Record<string, string>; timeoutMs: number; rssFile: string },
): Promise<CommandFigure> {
  const env = childEnv({ GEO_LOG_LEVEL: 'warn', BENCH_RSS_FILE: o.rssFile, ...o.env });
  rmSync(o.rssFile, { force: true });
  const args = ['--import', pathToFileURL(RSS_REPORTER).href, o.bin, ...p.args];
  const { exitCode, signal, timedOut, wallMs, stdout, stderr } = await runChild(args, env, {
    timeoutMs: o.timeoutMs,
    keepStdout: 20_000,
  });
  const rss: RssReport = readRssReport(o.rssFile);
  const figure: CommandFigure = {
    key: p.key,
    command: p.shown,
    expectedExit: p.expectedExit,
    exitCode,
    signal,
    timedOut,
    finished: !timedOut && exitCode !== null && p.expectedExit.includes(exitCode),
    wallMs,
    ...rss,
    stdoutTail: stdout.slice(-1500),
    stderrTail: stderr.slice(-1500),
  };
  if (p.key.startsWith('export')) figure.outputMb = sizeMb(p.output!);
  if (p.key === 'check') figure.failedChecks = [...stdout.matchAll(/^FAIL\s+(\S+)/gm)].map((m) => m[1]!);
  if (p.output) rmSync(p.output, { recursive: true, force: true });
  return figure;
}

/**
 * The scenario on one warehouse: `target` when given (reused when it holds a year, else built
 * into and kept), otherwise a fresh one of `dialect`, removed after.
 */
export async function runCommands(
  dialect: Dialect,
  size: CommandsSize,
  log: (line: string) => void,
  opts: ReturnType<typeof commandsOptions>,
): Promise<CommandsRun> {
  const tmp = tempDir('commands');
  const db = !opts.warehouse && dialect === 'postgres' ? await createDatabase('commands') : null;
  const target = opts.warehouse ?? db?.url ?? `duckdb:${join(tmp.dir, 'year.duckdb')}`;
  let sim: SimulatorProcess | null = null;
  try {
    let buildMs: number | null = null;
    const stored = await storedExecutions(target);
    if (stored === 0) {
      log(`commands: building a year of ${size.executionsPerDay} executions a day in ${dialectOf(target)}`);
      buildMs = await build(target, size, log);
      log(`commands: built in ${(buildMs / 1000).toFixed(1)} s`);
    } else log(`commands: reusing the ${stored} executions of ${target.replace(/:[^:@/]*@/, ':***@')}`);
    const s = await span(target);
    const out = join(tmp.dir, 'out');
    mkdirSync(out, { recursive: true });
    const commands: CommandFigure[] = [];
    for (const p of plan(s, out, size)) {
      if (opts.only && !opts.only.has(p.key)) continue;
      const env: Record<string, string> = { GEO_WAREHOUSE: target, ...opts.env };
      if (p.api) {
        sim ??= await startSimulatorProcess({ ...SEED, days: 1 });
        Object.assign(env, { GEO_BASE_URL: sim.url, GEO_API_KEY: BENCH_API_KEY });
      }
      const f = await runCommand(p, {
        bin: opts.bin,
        env,
        timeoutMs: size.timeoutMs,
        rssFile: join(tmp.dir, 'rss.jsonl'),
      });
      commands.push(f);
      log(
        `  ${p.shown}: exit ${f.exitCode ?? f.signal}${f.timedOut ? ' (timed out)' : ''}, ` +
          `${(f.wallMs / 1000).toFixed(1)} s, peak RSS ${f.rssMb?.toFixed(0) ?? '?'} MB` +
          (f.outputMb !== undefined ? `, ${f.outputMb.toFixed(0)} MB written` : '') +
          (f.failedChecks?.length ? `, failed: ${f.failedChecks.join(', ')}` : '') +
          (f.finished ? '' : `: ${firstErrorLine(f.stderrTail)}`),
      );
    }
    const days = daysOf(s);
    return {
      dialect: dialectOf(target),
      executionsPerDay: Math.round(s.rows.prompt_executions! / days),
      days,
      first: s.first,
      last: s.last,
      rows: s.rows,
      buildMs,
      atDefaults: Object.keys(opts.env).length === 0,
      env: opts.env,
      bin: opts.bin,
      commands,
    };
  } finally {
    await sim?.stop();
    await db?.drop().catch(() => undefined);
    tmp.remove();
  }
}
