import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configSource } from '../../src/config-sources.ts';
import { ConfigError, loadConfig, maskUrlPassword, redactedConfig } from '../../src/config.ts';

function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
  return [];
}

describe('loadConfig', () => {
  it('defaults', () => {
    const c = loadConfig({ env: {} });
    expect(c).toMatchObject({
      warehouse: 'duckdb:./data/geo-sync.duckdb',
      concurrency: 8,
      requestsPerSecond: 20,
      lookbackDays: 3,
      batchSize: 200,
      schedule: '30 4 * * *',
      customers: [],
      enrich: { taskConfig: true, legacySources: true, finance: true },
    });
  });

  it('a bad value given as a flag (overrides) is named as such, not as the GEO_* variable nobody set', () => {
    expect(problemsOf(() => loadConfig({ env: {}, overrides: { concurrency: 100_000 } }))).toEqual([
      'concurrency (as given on the command line or in overrides): Too big: expected number to be <=256',
    ]);
    expect(problemsOf(() => loadConfig({ env: { GEO_CONCURRENCY: '100000' } }))).toEqual([
      'GEO_CONCURRENCY (concurrency): Too big: expected number to be <=256',
    ]);
  });

  it('the example file is valid and the environment wins over it', () => {
    const c = loadConfig({
      env: { GEO_CONCURRENCY: '3', GEO_CUSTOMERS: '7, 9' },
      file: 'config/geo-sync.example.json',
    });
    expect(c.concurrency).toBe(3);
    expect(c.customers).toEqual([7, 9]);
    expect(c.baseUrl).toBe('https://geo.example.com');
  });

  it('GEO_MAX_RETRY_AFTER_SECONDS: 300 by default, read from the environment, refused with one line', () => {
    expect(loadConfig({ env: {} }).maxRetryAfterSeconds).toBe(300);
    expect(loadConfig({ env: { GEO_MAX_RETRY_AFTER_SECONDS: '60' } }).maxRetryAfterSeconds).toBe(60);
    expect(problemsOf(() => loadConfig({ env: { GEO_MAX_RETRY_AFTER_SECONDS: 'soon' } }))).toEqual([
      'GEO_MAX_RETRY_AFTER_SECONDS: expected an integer, got "soon"',
    ]);
    const zero = problemsOf(() => loadConfig({ env: { GEO_MAX_RETRY_AFTER_SECONDS: '0' } }));
    expect(zero).toHaveLength(1);
    expect(zero[0]).toMatch(/^GEO_MAX_RETRY_AFTER_SECONDS \(maxRetryAfterSeconds\): /);
  });

  it('flags win over the environment', () => {
    const c = loadConfig({
      env: { GEO_WAREHOUSE: 'duckdb:/tmp/a.duckdb' },
      overrides: { warehouse: 'postgres://h/db' },
    });
    expect(c.warehouse).toBe('postgres://h/db');
  });

  it('reports every problem at once, each naming the variable and what is expected', () => {
    const problems = problemsOf(() =>
      loadConfig({
        env: {
          GEO_CONCURRENCY: 'lots',
          GEO_REQUESTS_PER_SECOND: '0',
          GEO_WAREHOUSE: 'mysql://x',
          GEO_CUSTOMERS: '1,abc',
          GEO_ENRICH_FINANCE: 'maybe',
          GEO_BASE_URL: 'ftp://x',
          GEO_LOG_LEVEL: 'loud',
        },
      }),
    );
    expect(problems).toHaveLength(7);
    expect(problems.join('\n')).toMatch(/GEO_CONCURRENCY: expected an integer/);
    expect(problems.join('\n')).toMatch(/GEO_REQUESTS_PER_SECOND \(requestsPerSecond\): .*>=\s*1/);
    expect(problems.join('\n')).toMatch(
      /GEO_WAREHOUSE \(warehouse\): expected duckdb:<file path> or a postgres:\/\/ URL/,
    );
    expect(problems.join('\n')).toMatch(/GEO_CUSTOMERS: expected comma-separated page project IDs/);
    expect(problems.join('\n')).toMatch(/GEO_ENRICH_FINANCE: expected true or false/);
    expect(problems.join('\n')).toMatch(/GEO_BASE_URL \(baseUrl\): expected an http\(s\) URL/);
    expect(problems.join('\n')).toMatch(/GEO_LOG_LEVEL \(logLevel\)/);
  });

  it('file problems name the key; unknown keys are refused', () => {
    const dir = mkdtempSync(join(tmpdir(), 'geo-config-'));
    const file = join(dir, 'c.json');
    writeFileSync(file, JSON.stringify({ concurency: 4, lookbackDays: -1 }));
    const problems = problemsOf(() => loadConfig({ env: {}, file }));
    expect(problems.some((p) => p.includes('concurency'))).toBe(true);
    // A file's value is named by the file and its key, not by GEO_LOOKBACK_DAYS.
    expect(problems).toContain(`--config ${file}: lookbackDays: Too small: expected number to be >=0`);
    writeFileSync(file, '{ not json');
    expect(problemsOf(() => loadConfig({ env: {}, file }))[0]).toMatch(/^config file .*c\.json: /);
  });

  // `--config` file values were once reported as GEO_WAREHOUSE, GEO_CONCURRENCY.
  it('each problem names the source its value came from: flag, variable, --config file or GEO_CONFIG file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'geo-config-'));
    const file = join(dir, 'geo.json');
    writeFileSync(
      file,
      JSON.stringify({
        warehouse: 'mysql://x',
        concurrency: 1000,
        duckdb: { threads: 0 },
        enrich: 5,
        bogus: 1,
      }),
    );
    expect(problemsOf(() => loadConfig({ env: {}, file })).sort()).toEqual(
      [
        `--config ${file}: warehouse: expected duckdb:<file path> or a postgres:// URL: unsupported warehouse "mysql://x"`,
        `--config ${file}: concurrency: Too big: expected number to be <=256`,
        `--config ${file}: duckdb.threads: Too small: expected number to be >=1`,
        `--config ${file}: enrich: Invalid input: expected object, received number`,
        `--config ${file}: Unrecognized key: "bogus"`,
      ].sort(),
    );
    // The same file through GEO_CONFIG, the variable overriding one key and a flag another.
    const problems = problemsOf(() =>
      loadConfig({
        env: { GEO_CONFIG: file, GEO_WAREHOUSE: 'duckdb::memory:' },
        overrides: { concurrency: 300 },
        overrideFlags: { concurrency: '--concurrency' },
      }),
    );
    expect(problems).toContain('--concurrency (concurrency): Too big: expected number to be <=256');
    expect(problems.find((p) => p.includes('warehouse'))).toMatch(/^GEO_WAREHOUSE \(warehouse\): /);
    expect(problems).toContain(
      `GEO_CONFIG file ${file}: duckdb.threads: Too small: expected number to be >=1`,
    );
  });

  it('a loaded config tells where a key came from, for checks made after loading (the cron expression)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'geo-config-'));
    const file = join(dir, 'geo.json');
    writeFileSync(file, JSON.stringify({ schedule: '61 4 * * *' }));
    expect(configSource(loadConfig({ env: {}, file }), 'schedule')).toBe(`--config ${file}: schedule`);
    expect(configSource(loadConfig({ env: { GEO_SCHEDULE: '0 1 * * *' }, file }), 'schedule')).toBe(
      'GEO_SCHEDULE (schedule)',
    );
    const flagged = loadConfig({
      env: { GEO_SCHEDULE: '0 1 * * *' },
      overrides: { schedule: '61 4 * * *' },
      overrideFlags: { schedule: '--cron' },
    });
    expect(configSource(flagged, 'schedule')).toBe('--cron (schedule)');
    expect(configSource(loadConfig({ env: {} }), 'schedule')).toBe('schedule');
  });

  // A key from a CRLF .env file once looked like a network error (and hung whoami).
  it('a key with CR, LF, NUL, blanks around it, or only blanks is refused in one line that never quotes it', () => {
    const cases: [string, string][] = [
      [
        'sk-secret\r',
        'contains a carriage return (CR) at the end (a file saved with Windows line endings?): remove it',
      ],
      ['sk-sec\nret', 'contains a line feed (LF) at position 7 of 10: remove it'],
      ['sk-\u0000secret', 'contains a NUL character at position 4 of 10: remove it'],
      ['sk-密钥', 'contains a character HTTP headers cannot carry (U+5BC6) at position 4 of 5: remove it'],
      [' sk-secret', 'starts or ends with blanks: remove them'],
      ['   ', 'is blank (only whitespace): give the value, or leave it unset'],
    ];
    for (const [key, why] of cases) {
      const problems = problemsOf(() => loadConfig({ env: { GEO_API_KEY: key } }));
      expect(problems).toEqual([`GEO_API_KEY (apiKey): ${why}`]);
      if (key.trim()) expect(problems[0]).not.toContain(key.trim());
    }
    // The e-mail and password travel in a JSON body: blanks inside are theirs, a CR is not.
    expect(loadConfig({ env: { GEO_EMAIL: 'a@b.c', GEO_PASSWORD: ' pass word ' } }).password).toBe(
      ' pass word ',
    );
    expect(problemsOf(() => loadConfig({ env: { GEO_EMAIL: 'a@b.c', GEO_PASSWORD: 'pw\r' } }))).toEqual([
      'GEO_PASSWORD (password): contains a carriage return (CR) at the end (a file saved with Windows line endings?): remove it',
    ]);
  });

  it('email without password is one clear problem', () => {
    expect(problemsOf(() => loadConfig({ env: { GEO_EMAIL: 'a@b.c' } }))).toEqual([
      'GEO_PASSWORD (password): required when GEO_EMAIL is set',
    ]);
  });

  it('never echoes secrets', () => {
    const c = loadConfig({
      env: { GEO_API_KEY: 'sk-very-secret', GEO_WAREHOUSE: 'postgres://u:pw-secret@h:5432/db' },
    });
    const text = JSON.stringify(redactedConfig(c));
    expect(text).not.toContain('sk-very-secret');
    expect(text).not.toContain('pw-secret');
    expect(maskUrlPassword('postgresql://geo:s3cr3t@db:5432/geo')).toBe('postgresql://geo:***@db:5432/geo');
  });
});

describe('DuckDB settings and the warehouse target', () => {
  it('GEO_DUCKDB_* set memory limit, checkpoint threshold, spill directory and threads; defaults otherwise', () => {
    expect(loadConfig({ env: {} }).duckdb).toEqual({ memoryLimit: '128MB', checkpointThreshold: '64MB' });
    const c = loadConfig({
      env: {
        GEO_DUCKDB_MEMORY_LIMIT: '1GB',
        GEO_DUCKDB_CHECKPOINT_THRESHOLD: '256MB',
        GEO_DUCKDB_TEMP_DIR: '/tmp/spill',
        GEO_DUCKDB_THREADS: '2',
      },
    });
    expect(c.duckdb).toEqual({
      memoryLimit: '1GB',
      checkpointThreshold: '256MB',
      tempDirectory: '/tmp/spill',
      threads: 2,
    });
  });

  it('a bad DuckDB setting or target is one line naming the variable', () => {
    const problems = problemsOf(() =>
      loadConfig({
        env: {
          GEO_DUCKDB_MEMORY_LIMIT: 'lots',
          GEO_DUCKDB_CHECKPOINT_THRESHOLD: "1GB'; DROP TABLE x; --",
          GEO_DUCKDB_THREADS: '0',
          GEO_WAREHOUSE: 'duckdb::memory:',
        },
      }),
    );
    expect(problems).toHaveLength(4);
    expect(problems.join('\n')).toMatch(
      /GEO_DUCKDB_CHECKPOINT_THRESHOLD \(duckdb.checkpointThreshold\): expected a size/,
    );
    expect(problems.join('\n')).toMatch(/GEO_DUCKDB_MEMORY_LIMIT \(duckdb.memoryLimit\): expected a size/);
    expect(problems.join('\n')).toMatch(/GEO_DUCKDB_THREADS \(duckdb.threads\)/);
    // Parsed by the load layer's one parser: an in-memory DuckDB is refused before any open.
    expect(problems.join('\n')).toMatch(/GEO_WAREHOUSE \(warehouse\): .*in-memory DuckDB keeps nothing/);
  });
});

describe('GEO_LOCK_URL', () => {
  const pg = 'postgres://geo:pw@pooler:6432/geo';

  it('a direct URL of the warehouse database for the lock, its password masked like the warehouse one', () => {
    const config = loadConfig({
      env: { GEO_WAREHOUSE: pg, GEO_LOCK_URL: 'postgres://geo:s3cret@db:5432/geo' },
    });
    expect(config.lockUrl).toBe('postgres://geo:s3cret@db:5432/geo');
    expect(redactedConfig(config).lockUrl).toBe('postgres://geo:***@db:5432/geo');
    expect(loadConfig({ env: { GEO_WAREHOUSE: pg } }).lockUrl).toBeUndefined();
  });

  it('anything but a postgres:// URL, or a DuckDB warehouse, is one line naming GEO_LOCK_URL', () => {
    expect(
      problemsOf(() => loadConfig({ env: { GEO_WAREHOUSE: pg, GEO_LOCK_URL: 'duckdb:./x.duckdb' } })),
    ).toEqual(['GEO_LOCK_URL (lockUrl): expected a postgres:// URL of the warehouse database']);
    expect(
      problemsOf(() => loadConfig({ env: { GEO_WAREHOUSE: pg, GEO_LOCK_URL: 'postgres://geo:pw@/geo' } })),
    ).toEqual([
      expect.stringMatching(/^GEO_LOCK_URL \(lockUrl\): "postgres:\/\/geo:\*\*\*@\/geo" is not a valid URL$/),
    ]);
    expect(
      problemsOf(() =>
        loadConfig({ env: { GEO_WAREHOUSE: 'duckdb:./x.duckdb', GEO_LOCK_URL: 'postgres://db/geo' } }),
      ),
    ).toEqual([expect.stringMatching(/^GEO_LOCK_URL \(lockUrl\): only for a PostgreSQL warehouse/)]);
  });
});
