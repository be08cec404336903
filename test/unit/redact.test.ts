/**
 * Logs keep the evidence. Errors keep class, code, message, stack, context and
 * the cause chain, scrubbed of secrets at any depth; one masker for passwords in URLs; secrets
 * of any length are scrubbed.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { NetworkError, NotFoundError } from '../../src/api/errors.ts';
import { maskUrlPassword as configMask } from '../../src/config.ts';
import { maskPassword as targetMask } from '../../src/load/target.ts';
import { createLogger } from '../../src/log.ts';
import {
  maskUrlPassword,
  registerSecret,
  scrubDeep,
  scrubSecrets,
  scrubWith,
  urlPasswords,
} from '../../src/redact.ts';

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  const log = createLogger({ format: 'json', destination: stream, level: 'trace' });
  return { log, lines, json: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe('maskUrlPassword: the one masker', () => {
  it.each([
    ['postgres://u:p@h/d', 'postgres://u:***@h/d'],
    ['postgresql://geo:s3cr3t@db:5432/geo', 'postgresql://geo:***@db:5432/geo'],
    ['postgres://u@h/d', 'postgres://u@h/d'],
    ['postgres://h:5432/d', 'postgres://h:5432/d'],
    ['http://host:8080/path@x', 'http://host:8080/path@x'],
    ['postgres://u:p@ss@h/d', 'postgres://u:***@h/d'],
    ['postgres://u:p%40ss@h/d', 'postgres://u:***@h/d'],
    ['postgres://:only-pw@h/d', 'postgres://:***@h/d'],
    [
      'postgres://h/d?user=u&password=pw&sslmode=require',
      'postgres://h/d?user=u&password=***&sslmode=require',
    ],
    ['postgres://h/d?password=pw', 'postgres://h/d?password=***'],
    [
      'connect ECONNREFUSED for postgres://u:pw1@a/d and mysql://v:pw2@b/e failed',
      'connect ECONNREFUSED for postgres://u:***@a/d and mysql://v:***@b/e failed',
    ],
    ['not a url u:p@h', 'not a url u:p@h'],
    ['duckdb:./data/geo.duckdb', 'duckdb:./data/geo.duckdb'],
  ])('%s -> %s', (input, want) => {
    expect(maskUrlPassword(input)).toBe(want);
    // The names the config and the warehouse target use are the same function.
    expect(configMask(input)).toBe(want);
    expect(targetMask(input)).toBe(want);
  });

  it('urlPasswords finds every password, raw and decoded, for registration', () => {
    expect(urlPasswords('postgres://u:p%40ss@h/d')).toEqual(['p%40ss', 'p@ss']);
    expect(urlPasswords('postgres://h/d?password=a%20b')).toEqual(['a%20b', 'a b']);
    expect(urlPasswords('postgres://u@h/d')).toEqual([]);
  });
});

describe('secrets of any length', () => {
  it.each([['¤'], ['ÿ§'], ['Ω9x']])('%j is scrubbed', (secret) => {
    registerSecret(secret);
    expect(scrubSecrets(`before ${secret} after`)).toBe('before [REDACTED] after');
  });

  it('the empty string and non-text are ignored, not used to cut lines apart', () => {
    registerSecret('');
    registerSecret(undefined);
    registerSecret(null);
    expect(scrubSecrets('nothing secret here')).toBe('nothing secret here');
  });

  // A whitespace-only key once scrambled its own error ("apiKey:[REDACTED] expected...").
  it('blanks only are no secret: a line keeps its spaces, tabs and line breaks', () => {
    registerSecret(' ');
    registerSecret('   ');
    registerSecret('\t\r\n');
    const line = 'auth.apiKey: expected a non-empty string\n\tat line 2';
    expect(scrubSecrets(line)).toBe(line);
    expect(scrubWith(line, [' ', '\t'])).toBe(line);
  });

  it('a secret that contains another is replaced whole', () => {
    registerSecret('abc-123');
    registerSecret('abc-123-long-secret');
    expect(scrubSecrets('x abc-123-long-secret y')).toBe('x [REDACTED] y');
  });
});

describe('errors in logs keep their evidence, scrubbed at any depth', () => {
  const KEY = 'sk-deep-secret-4821';
  const DB_PW = 'pg-deep-pw-7731';
  registerSecret(KEY);
  registerSecret(DB_PW);

  it('class, code, message, stack, context and the whole cause chain', () => {
    const root = Object.assign(new Error(`connect ECONNREFUSED postgres://geo:${DB_PW}@db/geo`), {
      code: 'ECONNREFUSED',
      config: { password: 'literal-pw-1', host: 'db' },
    });
    const transport = new NetworkError({
      endpoint: 'GET /api/v2/geo/task/results',
      params: { task_id: 7, date: '2026-11-20' },
      cause: root,
    });
    const top = new Error(`unit failed with key ${KEY}`, { cause: transport });
    const { log, json } = capture();
    log.error({ err: top }, 'unit failed');
    const [line] = json();
    const text = JSON.stringify(line);
    for (const s of [KEY, DB_PW, 'literal-pw-1']) expect(text).not.toContain(s);

    const err = line!.err as Record<string, unknown>;
    expect(err).toMatchObject({ type: 'Error', message: 'unit failed with key [REDACTED]' });
    expect(err.stack).toMatch(/^Error: unit failed with key \[REDACTED\]\n\s+at /);
    const cause = err.cause as Record<string, unknown>;
    expect(cause).toMatchObject({
      type: 'NetworkError',
      code: transport.code,
      endpoint: 'GET /api/v2/geo/task/results',
      params: { task_id: 7, date: '2026-11-20' },
      retryable: true,
    });
    expect(cause.stack).toMatch(/^NetworkError: /);
    const rootOut = cause.cause as Record<string, unknown>;
    expect(rootOut).toMatchObject({
      type: 'Error',
      code: 'ECONNREFUSED',
      message: 'connect ECONNREFUSED postgres://geo:***@db/geo',
      config: { password: '[REDACTED]', host: 'db' },
    });
    expect(rootOut.stack).toContain('postgres://geo:***@db/geo');
  });

  it('errors inside arrays and context objects, AggregateError members, non-Error causes', () => {
    const agg = new AggregateError(
      [new NotFoundError({ endpoint: 'GET /api/v2/geo/prompt/products', params: { prompt_task_id: 3 } })],
      `all failed for ${KEY}`,
      { cause: { reason: `token ${KEY}`, token: 'tok-literal-9' } },
    );
    const { log, json } = capture();
    log.warn({ failures: [{ unit: { task_id: 1 }, error: agg }] }, 'failures');
    const [line] = json();
    const text = JSON.stringify(line);
    for (const s of [KEY, 'tok-literal-9']) expect(text).not.toContain(s);
    const out = (line!.failures as { error: Record<string, unknown> }[])[0]!.error;
    expect(out).toMatchObject({
      type: 'AggregateError',
      message: 'all failed for [REDACTED]',
      cause: { reason: 'token [REDACTED]', token: '[REDACTED]' },
      errors: [{ type: 'NotFoundError', code: 'NOT_FOUND', status: 404, params: { prompt_task_id: 3 } }],
    });
  });

  it('secrets deeper than any fixed depth never pass unscrubbed; cycles do not break a line', () => {
    let deep: Record<string, unknown> = { note: `key ${KEY}`, nested: { apiKey: 'literal-key-5' } };
    for (let i = 0; i < 30; i++) deep = { level: i, inner: deep, items: [deep] };
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    const { log, json } = capture();
    log.info({ deep, cyclic }, 'deep');
    const text = JSON.stringify(json()[0]);
    for (const s of [KEY, 'literal-key-5']) expect(text).not.toContain(s);
    expect(text).toContain('[Circular]');
    expect(scrubDeep({ a: [{ b: { password: 'x' } }] })).toEqual({ a: [{ b: { password: '[REDACTED]' } }] });
  });

  it('child bindings and messages are scrubbed too', () => {
    const { log, lines } = capture();
    log
      .child({ warehouse: `postgres://geo:${DB_PW}@db/geo`, nested: { token: 'bind-tok-3' } })
      .info(`using ${KEY}`);
    const text = lines.join('');
    for (const s of [KEY, DB_PW, 'bind-tok-3']) expect(text).not.toContain(s);
    expect(text).toContain('postgres://geo:***@db/geo');
  });
});

describe('response payloads on errors', () => {
  it('are kept when small and summarized when large', async () => {
    const { InvalidResponseError } = await import('../../src/api/errors.ts');
    const small = new InvalidResponseError({
      endpoint: 'GET /x',
      reason: 'bad',
      raw: { a: 1 },
      retryable: false,
    });
    const big = new InvalidResponseError({
      endpoint: 'GET /x',
      reason: 'bad',
      raw: { data: 'y'.repeat(5000) },
      retryable: false,
    });
    expect(scrubDeep(small)).toMatchObject({ type: 'InvalidResponseError', raw: { a: 1 } });
    expect(scrubDeep(big)).toMatchObject({ raw: '[payload of 5011 characters omitted]' });
  });
});
