/**
 * PostgreSQL for tests: a fresh database per test file (CREATE DATABASE geo_test_<run>_<random>
 * through the admin database, dropped after). `<run>` is the vitest process's id: the global
 * teardown drops every database of its run (a test that timed out may still create one after
 * its file's afterAll), and the next run's setup drops those of runs whose process is gone
 * (killed, or the machine restarted), so a run leaves no database behind.
 *
 * PostgreSQL unreachable: with CI=true the tests fail loudly; otherwise they are skipped, with
 * one clear message. Use at the top of a test file:
 *
 *   const pgUp = await postgresReachable();
 *   describe.skipIf(!pgUp)('...', () => {
 *     const url = withTestDatabase();   // registers beforeAll/afterAll
 *     it('...', async () => { const w = await openWarehouse(url()); ... });
 *   });
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { relative } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, inject } from 'vitest';

/** The admin connection (trust auth here); GEO_TEST_PG_URL overrides it. */
export const PG_ADMIN_URL = process.env.GEO_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

let reachable: Promise<boolean> | undefined;

/** Whether PostgreSQL answers; throws under CI=true when it does not. Probed once per process. */
export function postgresReachable(): Promise<boolean> {
  reachable ??= probe();
  return reachable;
}

async function probe(): Promise<boolean> {
  const client = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch (e) {
    const where = PG_ADMIN_URL.replace(/:[^:@/]*@/, ':***@');
    const why = e instanceof Error ? e.message : String(e);
    if (process.env.CI === 'true') {
      throw new Error(
        `PostgreSQL is not reachable at ${where} (${why}) and CI=true: the PostgreSQL tests cannot run. ` +
          'Start it (pg_ctlcluster <version> main start) or set GEO_TEST_PG_URL.',
      );
    }
    console.warn(
      `[geo-sync tests] PostgreSQL is not reachable at ${where} (${why}): skipping the PostgreSQL tests. ` +
        'Set CI=true to make this a failure.',
    );
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client(PG_ADMIN_URL);
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

export interface TestDatabase {
  /** `postgres://.../geo_test_<random>` */
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** The prefix of every test database, and the comment that says which run made it. */
export const TEST_DATABASE_PREFIX = 'geo_test_';
const COMMENT_PREFIX = 'geo-sync test run on ';

/** `<prefix><run>_`: the names of one run's databases begin so. */
export function runDatabasePrefix(run: number): string {
  return `${TEST_DATABASE_PREFIX}${run}_`;
}

/** The comment of a test database: the host (what a sweep judges) and the file that made it. */
function madeBy(): string {
  const file = expect.getState().testPath;
  const by = file ? ` by ${relative(process.cwd(), file)}` : '';
  return `${COMMENT_PREFIX}${hostname()}${by}`.replace(/'/g, '');
}

/** The run these databases belong to: the vitest process (its global setup provides it). */
function currentRun(): number {
  // Outside a vitest run with the global setup (a helper imported elsewhere): this process.
  return inject('geoTestRun') ?? process.pid;
}

/**
 * Creates an empty database; drop() removes it (terminating any connection left open).
 *
 * Its sessions commit without waiting for the WAL to reach the disk (synchronous_commit off, for
 * this database only): a commit is visible to every other session at once as before, and what a
 * killed client process committed stays committed; only a crash of the server itself could lose
 * the last commits, which no test does. The tests commit thousands of small transactions (a unit
 * each), and the flush of each was most of a PostgreSQL test's time on a disk that syncs slowly.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `${runDatabasePrefix(currentRun())}${randomBytes(6).toString('hex')}`;
  // Identifiers cannot be parameters: `name` is built from digits and hex digits only. The
  // comment names the host, so that a sweep only judges the processes it can see.
  await admin(async (c) => {
    await c.query(`CREATE DATABASE ${name}`);
    await c.query(`COMMENT ON DATABASE ${name} IS '${madeBy()}'`);
    await c.query(`ALTER DATABASE ${name} SET synchronous_commit = off`);
  });
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: () => admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}

/**
 * A fresh database for the enclosing describe (or file): created in beforeAll, dropped in
 * afterAll. Returns a getter of its `postgres://` URL.
 */
export function withTestDatabase(): () => string {
  let db: TestDatabase | undefined;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });
  return () => {
    if (!db) throw new Error('withTestDatabase(): the database exists from beforeAll on');
    return db.url;
  };
}

/**
 * Drops the test databases of `run` (the global teardown) and of every run on this host whose
 * process is gone (the global setup: a run killed before its teardown). Databases named in the
 * older `geo_test_<random>` form carry no run and are left alone: a run of an older checkout may
 * still be using them.
 */
export async function dropLeftoverDatabases(opts: { run?: number } = {}): Promise<string[]> {
  return admin(async (c) => {
    const { rows } = await c.query<{ name: string; comment: string | null }>(
      `SELECT datname AS name, shobj_description(oid, 'pg_database') AS comment
       FROM pg_database WHERE datname LIKE $1`,
      [`${TEST_DATABASE_PREFIX}%`],
    );
    const dropped: string[] = [];
    for (const { name, comment } of rows) {
      const run = /^geo_test_(\d+)_[0-9a-f]+$/.exec(name)?.[1];
      if (run === undefined) continue;
      // A database created a moment before its run was killed may lack its comment yet.
      const host = `${COMMENT_PREFIX}${hostname()}`.replace(/'/g, '');
      const here = comment === null || comment === host || comment.startsWith(`${host} by `);
      const ours = Number(run) === opts.run;
      if (!ours && !(here && !processAlive(Number(run)))) continue;
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      const by = comment && / by (\S+)$/.exec(comment)?.[1];
      dropped.push(by ? `${name} (${by})` : name);
    }
    return dropped;
  });
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it exists, another user's.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** The vitest process's id: the run the test databases are named after. */
    geoTestRun: number;
  }
}
