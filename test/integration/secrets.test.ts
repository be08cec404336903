/**
 * Secrets never reach a log line, an error message or the warehouse: a sync at debug level,
 * with a key, a database password and a login, and with failures on purpose, is grepped.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.ts';
import { runCli } from '../helpers/cli.ts';
import { dumpData } from '../helpers/dump.ts';
import { withWarehouse } from '../helpers/sync.ts';
import { postgresTarget } from '../helpers/targets.ts';

const API_KEY = 'sk-live-7f3a9c2e5b1d4f60';
const DB_PASSWORD = 'pg-pass-Zq81xWv';
const PASSWORD = 'login-pass-Kd72Lm';

const pgTarget = postgresTarget('secrets');

describe.skipIf(pgTarget.skip)('secrets stay out of logs, errors and the warehouse', () => {
  let sim: RunningSimulator;
  let warehouse: string;

  beforeAll(async () => {
    sim = await startSimulator({
      seed: 3,
      days: 2,
      executionsPerDay: 30,
      apiKeys: [API_KEY],
      login: { email: 'ops@geo-sync.local', password: PASSWORD },
      faults: { errorRate: 0.2 },
    });
    // Trust auth ignores the password, so it can travel in the URL like a real one.
    const url = new URL(await pgTarget.create());
    url.username = 'postgres';
    url.password = DB_PASSWORD;
    warehouse = url.toString();
  });
  afterAll(async () => {
    await sim?.close();
    await pgTarget.drop();
  });

  it.each([
    ['API key', { GEO_API_KEY: API_KEY }],
    ['login', { GEO_API_KEY: '', GEO_EMAIL: 'ops@geo-sync.local', GEO_PASSWORD: PASSWORD }],
  ])('a debug-level sync with %s', async (_name, auth) => {
    const env = {
      GEO_BASE_URL: sim.url,
      GEO_WAREHOUSE: warehouse,
      GEO_LOG_LEVEL: 'trace',
      GEO_MAX_ATTEMPTS: '2',
      GEO_REQUESTS_PER_SECOND: '5000',
      GEO_CONCURRENCY: '16',
      GEO_RETRY_BASE_DELAY_MS: '1',
      ...auth,
    };
    const r = await runCli(['sync', '--date', sim.world.dates().at(-1)!, '--no-progress'], env);
    // 20% of responses fail and only 2 attempts are allowed: the run may end in any state;
    // error paths are exactly where a secret could leak, so all of them are grepped.
    expect([0, 1, 3], r.stderr.slice(-1500)).toContain(r.code);
    const out = r.stdout + r.stderr;
    expect(out.length).toBeGreaterThan(1000);
    for (const secret of [API_KEY, DB_PASSWORD, PASSWORD]) expect(out).not.toContain(secret);

    // A wrong key: the 401 error names the endpoint, never the key. whoami asks auth/user and
    // finance/balance at once and reports the 401 of either; enough attempts that one of them
    // gets past the injected 5xx (at 2 attempts both fail twice in 1 run of 600).
    const denied = await runCli(['whoami'], {
      ...env,
      GEO_MAX_ATTEMPTS: '6',
      GEO_API_KEY: 'sk-wrong-key-123456',
      GEO_EMAIL: '',
      GEO_PASSWORD: '',
    });
    expect(denied.code).toBe(1);
    expect(denied.stderr, denied.stderr.slice(-1500)).toMatch(
      /unauthorized \(401\).*\/api\/v2\/(auth\/user|finance\/balance)/,
    );
    expect(denied.stderr).not.toContain('sk-wrong-key-123456');

    const stored =
      JSON.stringify(await dumpData(warehouse)) +
      JSON.stringify(await withWarehouse(warehouse, (w) => w.query('SELECT * FROM geo.sync_runs'))) +
      JSON.stringify(await withWarehouse(warehouse, (w) => w.query('SELECT * FROM geo.sync_rejects')));
    for (const secret of [API_KEY, DB_PASSWORD, PASSWORD]) expect(stored).not.toContain(secret);
  });
});
