/**
 * PostgreSQL for tests: a fresh database per test file (CREATE DATABASE geo_test_<random>
 * through the admin database, dropped after).
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
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';

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

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
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

/** Creates an empty database; drop() removes it (terminating any connection left open). */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `geo_test_${randomBytes(6).toString('hex')}`;
  // Identifiers cannot be parameters: `name` is built from hex digits only.
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
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
