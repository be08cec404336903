/**
 * The examples a reader copies are the examples the suite runs. Every fenced shell or SQL block
 * of README.md and docs/*.md carries a marker (test/docs/markdown.ts): the runnable shell blocks
 * run through bash with `geo-sync` on the PATH against a simulator and a DuckDB file synced once
 * here; the SQL blocks run on that warehouse (and on PostgreSQL, synced from the same simulator,
 * when it is reachable). A block without a marker fails, so none goes unchecked.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, runCli } from '../helpers/cli.ts';
import { createTestDatabase, postgresReachable, type TestDatabase } from '../helpers/postgres.ts';
import {
  GENERATED,
  SHELL_LANGS,
  blocks,
  docPages,
  parseMarker,
  type Block,
  type Marker,
} from './markdown.ts';

const API_KEY = 'docs-examples-key';

const all: (Block & { marker?: Marker | { error: string } })[] = docPages()
  .filter((p) => !GENERATED.has(p))
  .flatMap((p) => blocks(p))
  .map((b) => ({ ...b, marker: b.markerText === undefined ? undefined : parseMarker(b.markerText) }));
const where = (b: Block) => `${b.page}:${b.line}`;
const isShell = (b: Block) => SHELL_LANGS.has(b.lang);
const shellRuns = all.filter((b) => isShell(b) && b.marker && 'kind' in b.marker && b.marker.kind === 'runs');
const sqlRuns = all.filter(
  (b) => b.lang === 'sql' && b.marker && 'kind' in b.marker && b.marker.kind === 'sql',
);

/** Statements of a SQL block: comments dropped, split at `;`. */
function statements(code: string): string[] {
  return code
    .replace(/--.*$/gm, '')
    .split(';')
    .map((s) => s.trim())
    .filter(Boolean);
}

describe('every example is marked', () => {
  it('no fence without a language, no shell or SQL block without a marker, no unknown marker', () => {
    const problems = all.flatMap((b) => {
      if (b.lang === '') return [`${where(b)}: a fence without a language`];
      if (b.marker && 'error' in b.marker) return [`${where(b)}: ${b.marker.error}`];
      if ((isShell(b) || b.lang === 'sql') && !b.marker) {
        return [`${where(b)}: a ${b.lang} block without an <!-- example: ... --> marker on the line before`];
      }
      if (b.marker && 'kind' in b.marker) {
        if (b.marker.kind === 'runs' && !isShell(b)) return [`${where(b)}: "runs" on a ${b.lang} block`];
        if (b.marker.kind === 'sql' && b.lang !== 'sql') return [`${where(b)}: "sql" on a ${b.lang} block`];
      }
      return [];
    });
    expect(problems).toEqual([]);
  });

  it('the documentation has examples to run', () => {
    expect(shellRuns.length).toBeGreaterThan(10);
    expect(sqlRuns.length).toBeGreaterThan(5);
  });
});

/** `geo-sync simulate` as its own process; resolves with its URL once it prints it. */
function simulate(args: string[]): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [BIN, 'simulate', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /^listening on (http:\/\/\S+)$/m.exec(out);
      if (m) resolve({ url: m[1]!, child });
    });
    child.once('exit', (code) => reject(new Error(`simulate exited (${code}) before listening:\n${out}`)));
  });
}

describe('the examples run', () => {
  let dir: string;
  let sim: ChildProcess | undefined;
  let env: Record<string, string>;
  let db: TestDatabase | undefined;
  const pgUp = postgresReachable();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'geo-docs-'));
    mkdirSync(join(dir, 'data'));
    // `geo-sync` as an installed command, `npx geo-sync` as in a checkout.
    const bin = join(dir, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'geo-sync'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
    writeFileSync(
      join(bin, 'npx'),
      `#!/bin/sh\n[ "$1" = geo-sync ] || { echo "npx $1: the examples run only npx geo-sync" >&2; exit 127; }\n` +
        `shift\nexec "${process.execPath}" "${BIN}" "$@"\n`,
    );
    chmodSync(join(bin, 'geo-sync'), 0o755);
    chmodSync(join(bin, 'npx'), 0o755);

    // A small world: ~50 platform tasks, 2 days ending yesterday, 60 executions a day.
    const started = await simulate([
      '--port',
      '0',
      '--days',
      '2',
      '--executions-per-day',
      '60',
      '--api-key',
      API_KEY,
    ]);
    sim = started.child;
    env = {
      PATH: `${bin}:${process.env.PATH}`,
      HOME: dir,
      GEO_BASE_URL: started.url,
      GEO_API_KEY: API_KEY,
      // The default file, named as a reader's would be: the examples that open it by path find it.
      GEO_WAREHOUSE: `duckdb:${join(dir, 'data', 'geo-sync.duckdb')}`,
      GEO_LOG_FORMAT: 'json',
      GEO_LOG_LEVEL: 'warn',
      // The simulator is local: the API's polite defaults would only make the examples slow.
      GEO_REQUESTS_PER_SECOND: '500',
      GEO_CONCURRENCY: '16',
    };
    // One sync shared by every example, and the demo the README's first command makes (smaller):
    // the tutorial's blocks read ./data/demo.duckdb.
    const pgTarget = (await pgUp) ? (db = await createTestDatabase()).url : undefined;
    const results = await Promise.all([
      runCli(['sync', '--no-progress'], env),
      runCli(
        [
          'demo',
          '--days',
          '1',
          '--executions-per-day',
          '40',
          '--warehouse',
          `duckdb:${join(dir, 'data', 'demo.duckdb')}`,
        ],
        {
          ...env,
          GEO_WAREHOUSE: undefined,
        },
      ),
      ...(pgTarget ? [runCli(['sync', '--no-progress'], { ...env, GEO_WAREHOUSE: pgTarget })] : []),
    ]);
    for (const r of results) expect(r.code, r.stderr.slice(-3000)).toBe(0);
  }, 180_000);

  afterAll(async () => {
    sim?.kill('SIGTERM');
    await db?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  describe('shell', () => {
    for (const b of shellRuns) {
      const expected = (b.marker as { exit: number }).exit;
      it(`${where(b)} exits ${expected}`, async () => {
        const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', b.code], {
          cwd: dir,
          env,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let output = '';
        child.stdout.on('data', (d: Buffer) => (output += d.toString()));
        child.stderr.on('data', (d: Buffer) => (output += d.toString()));
        const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
        expect(code, `${b.code}\n---\n${output.slice(-4000)}`).toBe(expected);
      });
    }
  });

  describe('SQL on DuckDB', () => {
    const duck = sqlRuns.filter((b) =>
      ['both', 'duckdb', 'duckdb-cli'].includes((b.marker as { on: string }).on),
    );
    for (const b of duck) {
      it(where(b), async () => {
        const on = (b.marker as { on: string }).on;
        // `duckdb-cli`: a fresh DuckDB in the examples' folder, as `duckdb` started there; the others
        // on the warehouse file itself, read-only.
        const instance =
          on === 'duckdb-cli'
            ? await DuckDBInstance.create(':memory:', { file_search_path: dir })
            : await DuckDBInstance.create(join(dir, 'data', 'geo-sync.duckdb'), { access_mode: 'READ_ONLY' });
        const conn = await instance.connect();
        const cwd = process.cwd();
        try {
          if (on === 'duckdb-cli') process.chdir(dir);
          for (const q of statements(b.code)) {
            const got = await conn.runAndReadAll(q).catch((e: unknown) => e);
            expect(got, q).not.toBeInstanceOf(Error);
          }
        } finally {
          process.chdir(cwd);
          conn.closeSync();
          instance.closeSync();
        }
      });
    }
  });

  describe('SQL on PostgreSQL', async () => {
    const up = await pgUp;
    const onPg = sqlRuns.filter((b) => ['both', 'postgres'].includes((b.marker as { on: string }).on));
    for (const b of onPg) {
      it.skipIf(!up)(where(b), async () => {
        const client = new pg.Client(db!.url);
        await client.connect();
        try {
          // In a transaction rolled back: a block that creates roles or grants leaves nothing.
          await client.query('BEGIN');
          // The role the BI example names as geo-sync's own.
          await client.query(
            "DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'geo_sync') THEN CREATE ROLE geo_sync; END IF; END $$",
          );
          for (const q of statements(b.code)) {
            await client.query('SAVEPOINT example');
            const got = await client.query(q).catch((e: unknown) => e);
            expect(got, q).not.toBeInstanceOf(Error);
          }
        } finally {
          await client.query('ROLLBACK').catch(() => undefined);
          await client.end();
        }
      });
    }
  });
});
