/** What the tests of distributed backfills share: their environment, fresh databases, SQL. */
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from './postgres.ts';

/** A CLI environment against the simulator: fast retries, no look-back, no diagnoses. */
export function distributedEnv(baseUrl: string, warehouse: string, extra: Record<string, string> = {}) {
  return {
    GEO_BASE_URL: baseUrl,
    GEO_API_KEY: 'sim-key',
    GEO_WAREHOUSE: warehouse,
    GEO_LOOKBACK_DAYS: '0',
    GEO_CONCURRENCY: '8',
    GEO_REQUESTS_PER_SECOND: '5000',
    GEO_RETRY_BASE_DELAY_MS: '5',
    GEO_ENRICH_DIAGNOSIS: 'false',
    GEO_JOB_RETRY_DELAY_SECONDS: '1',
    ...extra,
  };
}

/** Fresh databases for one test file (the queue schema starts empty in each), dropped after. */
export class TestDatabases {
  private readonly dbs: TestDatabase[] = [];

  async fresh(): Promise<string> {
    const db = await createTestDatabase();
    this.dbs.push(db);
    return db.url;
  }

  async dropAll(): Promise<void> {
    for (const db of this.dbs) await db.drop().catch(() => undefined);
  }
}

/** One statement on a short-lived connection. */
export async function sql<T extends pg.QueryResultRow>(
  url: string,
  text: string,
  params: unknown[] = [],
): Promise<T[]> {
  const c = new pg.Client(url);
  await c.connect();
  try {
    return (await c.query<T>(text, params)).rows;
  } finally {
    await c.end();
  }
}
