/**
 * PostgreSQL for the bench: a fresh database per measured run on 127.0.0.1:5432 (trust auth,
 * user postgres; GEO_TEST_PG_URL overrides, as in the tests), dropped after. When the server is
 * unreachable the PostgreSQL figures are reported as null with the reason.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const PG_ADMIN_URL = process.env.GEO_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 5000 });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** null when reachable, else why not (password masked). */
export async function postgresUnavailableReason(): Promise<string | null> {
  try {
    await admin((c) => c.query('SELECT 1'));
    return null;
  } catch (e) {
    const where = PG_ADMIN_URL.replace(/:[^:@/]*@/, ':***@');
    return `PostgreSQL is not reachable at ${where}: ${(e as Error).message}`;
  }
}

export interface BenchDatabase {
  url: string;
  drop(): Promise<void>;
}

export async function createDatabase(label: string): Promise<BenchDatabase> {
  const name = `geo_bench_${label.replace(/[^a-z0-9]/gi, '_').toLowerCase()}_${randomBytes(4).toString('hex')}`;
  // Identifiers cannot be parameters; `name` is built from [a-z0-9_] only.
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}

/** Runs `fn` against a fresh database and drops it after, whatever happens. */
export async function withDatabase<T>(label: string, fn: (url: string) => Promise<T>): Promise<T> {
  const db = await createDatabase(label);
  try {
    return await fn(db.url);
  } finally {
    await db.drop().catch(() => undefined);
  }
}
