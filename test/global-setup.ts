/**
 * Before any test: bring dist/ up to date, so the tests that run the real command line
 * (bin/geo-sync.js runs the compiled CLI) exercise the code under test, not an older build.
 *
 * A run leaves nothing behind:
 * - PostgreSQL: the test databases are named after this process (helpers/postgres.ts). The
 *   teardown drops every one of them, also one a test that timed out created after its file's
 *   own cleanup ran; the setup drops those of earlier runs on this host whose process is gone
 *   (killed before their teardown).
 * - Files: TMPDIR points into one directory of this run (in /dev/shm where there is one), which
 *   the workers and the processes they start inherit (os.tmpdir() reads it); the teardown removes
 *   it whole, and the setup removes those of runs whose process is gone.
 * - Processes: the helpers that start one kill it when their test process exits
 *   (helpers/children.ts).
 */
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { build } from '../scripts/build.mjs';
import { dropLeftoverDatabases, postgresReachable, processAlive } from './helpers/postgres.ts';

const TMP_PREFIX = 'geo-test-run-';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  build({ quiet: true });
  const run = process.pid;
  project.provide('geoTestRun', run);

  // In memory where the machine has a tmpfs (as the bench's smoke run does): what the tests prove
  // of a DuckDB file, an export or a scratch folder does not depend on how fast a disk syncs, and
  // each DuckDB commit waits for one. A process killed mid-write leaves what it wrote in either.
  const systemTmp = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
  for (const name of readdirSync(systemTmp)) {
    const pid = name.startsWith(TMP_PREFIX) ? Number(name.slice(TMP_PREFIX.length)) : NaN;
    if (Number.isInteger(pid) && !processAlive(pid))
      rmSync(join(systemTmp, name), { recursive: true, force: true });
  }
  const runTmp = join(systemTmp, `${TMP_PREFIX}${run}`);
  mkdirSync(runTmp, { recursive: true });
  process.env.TMPDIR = runTmp;

  // Without PostgreSQL the PostgreSQL tests skip (or fail under CI=true, in the files).
  const pgUp = await postgresReachable().catch(() => false);
  if (pgUp) report('left by runs that are gone', await dropLeftoverDatabases());
  return async () => {
    if (pgUp) report('left by tests of this run', await dropLeftoverDatabases({ run }));
    rmSync(runTmp, { recursive: true, force: true });
  };
}

function report(what: string, dropped: string[]): void {
  if (dropped.length > 0)
    console.warn(`[geo-sync tests] dropped ${dropped.length} database(s) ${what}: ${dropped.join(', ')}`);
}
