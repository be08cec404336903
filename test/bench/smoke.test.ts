/**
 * Every bench scenario still runs: `npm run bench -- --smoke` runs each at a tiny size (its
 * figures mean nothing, and nothing here looks at their values), so a scenario broken by a change
 * is seen in the suite, not at the next full bench (one once stayed broken, unnoticed, across
 * several changes).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { postgresReachable } from '../helpers/postgres.ts';

const pgUp = await postgresReachable();
const ROOT = join(import.meta.dirname, '..', '..');

describe('bench --smoke', () => {
  const dir = mkdtempSync(join(tmpdir(), 'geo-bench-smoke-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('runs every scenario at a tiny size without an error', { timeout: 9 * 60_000 }, async () => {
    const file = join(dir, 'results.json');
    const child = spawn(process.execPath, ['bin/bench.js', '--smoke', '--results', file], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      // The scenarios' DuckDB files in memory where the machine has a tmpfs: what is proven here
      // is that each runs, not how fast a disk syncs (each DuckDB commit waits for one on /tmp).
      env: {
        ...process.env,
        GEO_LOG_LEVEL: 'silent',
        ...(existsSync('/dev/shm') ? { TMPDIR: '/dev/shm' } : {}),
      },
    });
    let output = '';
    child.stdout.on('data', (b: Buffer) => (output += b.toString()));
    child.stderr.on('data', (b: Buffer) => (output += b.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code, output.slice(-4000)).toBe(0);
    const results = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    expect(results.errors, output.slice(-4000)).toEqual([]);
    expect(results.smoke).toBe(true);
    expect(results.scenarios_run).toEqual([
      'extraction',
      'small-units',
      'own-cost',
      'load',
      'memory',
      'nightly',
      'first-read',
      'dashboards',
      'commands',
    ]);
    // Each scenario left its figures (PostgreSQL's too where it runs; under CI it must).
    for (const key of [
      'extraction_ratio',
      'extraction_ratio_small_units',
      'own_cost_ratio_duckdb',
      'load_ratio_duckdb',
      'rss_mb_10k',
      'nightly_ratio',
      'nightly_rollups_ratio',
      'first_read_ratio',
      'first_read_cli_ratio_50ms',
    ])
      expect(results[key], key).toEqual(expect.any(Number));
    // And printed its rows in the table.
    const table = output.split('\n').filter((l) => /^\d/.test(l) && l.includes('|'));
    for (const prefix of [
      '1 extraction (',
      '1 extraction, small units',
      '2 own cost (',
      '3 load (',
      '4 memory 10k/day (',
      '4 memory floor',
      '5 re-sync',
      '6 nightly (',
      '6 nightly, per-day aggregates',
      '7 first read (',
      '7 first read, as a user runs it',
      '8 dashboards (',
      '9 commands (',
    ])
      expect(
        table.filter((l) => l.startsWith(prefix)),
        prefix,
      ).not.toEqual([]);
    const dashboards = results.dashboards as {
      dialect: string;
      mismatches: number;
      queries: { equal: boolean }[];
    }[];
    expect(dashboards.map((d) => d.dialect)).toEqual(pgUp ? ['duckdb', 'postgres'] : ['duckdb']);
    for (const d of dashboards) {
      expect(d.mismatches).toBe(0);
      expect(d.queries.map((q) => q.equal)).not.toContain(false);
    }
    // Every read-side command finished at the defaults, as a user runs it, on both warehouses.
    const commands = results.commands as {
      dialect: string;
      commands: { key: string; finished: boolean }[];
    }[];
    expect(commands.map((c) => c.dialect)).toEqual(pgUp ? ['duckdb', 'postgres'] : ['duckdb']);
    for (const c of commands)
      expect(
        c.commands.filter((x) => !x.finished),
        c.dialect,
      ).toEqual([]);
    expect(results.commands_all_finished).toBe(true);
    if (pgUp) {
      for (const key of ['own_cost_ratio_postgres', 'load_ratio_postgres', 'rss_mb_10k_postgres'])
        expect(results[key], key).toEqual(expect.any(Number));
    }
  });
});
