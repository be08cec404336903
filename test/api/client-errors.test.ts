/** Status and failure -> typed error, the retry table carried out, and no secret in any error. */
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  BadRequestError,
  ForbiddenError,
  type GeoApiError,
  InvalidResponseError,
  NetworkError,
  NotFoundError,
  RateLimitedError,
  ServerError,
  TimeoutError,
  UnauthorizedError,
} from '../../src/api/errors.ts';
import { API_KEY, ok, platformTask, replies, route, setup } from './helpers.ts';

const INFO = '/api/v2/geo/task/info';
const good = { body: ok(platformTask(700)) };

async function failure(p: Promise<unknown>): Promise<GeoApiError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  if (!e) throw new Error('expected the call to fail');
  return e as GeoApiError;
}

describe('errors that are not retried', () => {
  it.each([
    [401, UnauthorizedError, 'UNAUTHORIZED'],
    [403, ForbiddenError, 'FORBIDDEN'],
    [404, NotFoundError, 'NOT_FOUND'],
    [422, BadRequestError, 'BAD_REQUEST'],
  ] as const)('%i -> %s after exactly one request', async (status, type, code) => {
    const { pool, client, calls, clock } = setup();
    replies(pool, 'GET', INFO, [{ status, body: { success: false, message: 'nope' } }, good]);
    const err = await failure(client.taskInfo({ task_id: 700 }));
    expect(err).toBeInstanceOf(type);
    expect(err.code).toBe(code);
    expect(err.attempts).toBe(1);
    expect(err.status).toBe(status);
    expect(err.serverMessage).toBe('nope');
    expect(err.message).toContain('GET /api/v2/geo/task/info');
    expect(err.message).toContain('task_id=700');
    expect(calls()).toHaveLength(1);
    expect(clock.slept).toEqual([]);
  });

  it('400 on legacy create carries the server message', async () => {
    const { pool, client, calls } = setup();
    route(pool, 'POST', '/api/v2/geo/project/create', () => ({
      status: 400,
      body: { success: false, message: 'brand is empty' },
    }));
    const err = await failure(
      client.legacyProjectCreate({ brand: 'x', brand_desc: 'A', diy_prompt: 'q', ai_platform: 'qwen' }),
    );
    expect(err).toBeInstanceOf(BadRequestError);
    expect(err.serverMessage).toBe('brand is empty');
    expect(err.message).toContain('brand is empty');
    expect(calls()).toHaveLength(1);
  });

  it('a 200 with success=false is a refusal, not data', async () => {
    const { pool, client } = setup();
    route(pool, 'POST', '/api/v2/geo/project/edit', () => ({
      body: { success: false, message: 'no platform chosen' },
    }));
    const err = await failure(
      client.legacyProjectEdit({ number_id: 5, brand_desc: 'A', diy_prompt: 'q', ai_platform: 'qwen' }),
    );
    expect(err).toBeInstanceOf(BadRequestError);
    expect(err.serverMessage).toBe('no platform chosen');
  });

  it('legacy create is not repeated after a 5xx (it may have created the task)', async () => {
    const { pool, client, calls } = setup();
    replies(pool, 'POST', '/api/v2/geo/project/create', [{ status: 502, text: 'bad gateway' }]);
    const err = await failure(
      client.legacyProjectCreate({ brand: 'x', brand_desc: 'A', diy_prompt: 'q', ai_platform: 'qwen' }),
    );
    expect(err).toBeInstanceOf(ServerError);
    expect(calls()).toHaveLength(1);
  });
});

describe('retries', () => {
  it('5xx retried with jittered exponential backoff, then success', async () => {
    const { pool, client, calls, clock } = setup();
    replies(pool, 'GET', INFO, [{ status: 500 }, { status: 502 }, { status: 503, text: '<html>' }, good]);
    const t = await client.taskInfo({ task_id: 700 });
    expect(t.task_id).toBe(700);
    expect(calls()).toHaveLength(4);
    // random() = 0.5: half of 250, 500, 1000
    expect(clock.slept).toEqual([125, 250, 500]);
    expect(client.stats).toMatchObject({ requests: 4, retries: 3, rateLimited: 0, failures: 0 });
    expect(client.stats.errorsByCode).toEqual({ SERVER_ERROR: 3 });
    expect(client.stats.byEndpoint['GET /api/v2/geo/task/info']).toEqual({
      requests: 4,
      retries: 3,
      errors: 3,
    });
  });

  it('the budget spent: the last typed error, with attempts, endpoint and params', async () => {
    const { pool, client, calls } = setup({ retry: { maxAttempts: 3 } });
    replies(pool, 'GET', INFO, [
      { status: 500 },
      { status: 500 },
      { status: 504, body: { message: 'upstream slow' } },
    ]);
    const err = await failure(client.taskInfo({ task_id: 700 }));
    expect(err).toBeInstanceOf(ServerError);
    expect(err.status).toBe(504);
    expect(err.attempts).toBe(3);
    expect(err.message).toMatch(
      /server error \(504\): GET \/api\/v2\/geo\/task\/info \(task_id=700\) - upstream slow/,
    );
    expect(calls()).toHaveLength(3);
    expect(client.stats.failures).toBe(1);
  });

  it('429 with Retry-After in seconds: waits that long and pauses the whole queue', async () => {
    const { pool, client, calls, clock, queue } = setup();
    replies(pool, 'GET', INFO, [{ status: 429, headers: { 'retry-after': '3' } }, good]);
    await client.taskInfo({ task_id: 700 });
    expect(calls()).toHaveLength(2);
    expect(clock.slept).toEqual([3000]);
    expect(queue.pausesAsked).toEqual([3000]);
    expect(queue.stats.decreases).toBe(1);
    expect(client.stats.rateLimited).toBe(1);
  });

  it('429 with Retry-After as an HTTP date', async () => {
    const { pool, client, clock, queue } = setup();
    const at = new Date(clock.now() + 7000).toUTCString();
    replies(pool, 'GET', INFO, [{ status: 429, headers: { 'retry-after': at } }, good]);
    await client.taskInfo({ task_id: 700 });
    expect(clock.slept).toEqual([7000]);
    expect(queue.pausesAsked).toEqual([7000]);
  });

  it('429 without Retry-After: backoff, AIMD decrease, no pause', async () => {
    const { pool, client, clock, queue } = setup();
    replies(pool, 'GET', INFO, [{ status: 429 }, good]);
    await client.taskInfo({ task_id: 700 });
    expect(clock.slept).toEqual([125]);
    expect(queue.pausesAsked).toEqual([]);
    expect(queue.concurrency).toBe(4);
  });

  it('a Retry-After beyond maxRetryAfterMs fails at once with RateLimitedError', async () => {
    const { pool, client, calls } = setup({ retry: { maxRetryAfterMs: 60_000 } });
    replies(pool, 'GET', INFO, [{ status: 429, headers: { 'retry-after': '3600' } }, good]);
    const err = await failure(client.taskInfo({ task_id: 700 }));
    expect(err).toBeInstanceOf(RateLimitedError);
    expect((err as RateLimitedError).retryAfterMs).toBe(3_600_000);
    expect(calls()).toHaveLength(1);
  });

  it('a Retry-After above the cap (default 300 s) fails at once with RATE_LIMITED naming the wait', async () => {
    const { pool, client, calls, clock } = setup();
    replies(pool, 'GET', INFO, [{ status: 429, headers: { 'retry-after': '301' } }, good]);
    const err = await failure(client.taskInfo({ task_id: 700 }));
    expect(err).toBeInstanceOf(RateLimitedError);
    expect(err.code).toBe('RATE_LIMITED');
    expect(err.message).toMatch(
      /rate limited \(429\): the server asked to wait 301 s \(Retry-After\), more than the 300 s allowed \(GEO_MAX_RETRY_AFTER_SECONDS\): GET \/api\/v2\/geo\/task\/info \(task_id=700\)/,
    );
    expect(err.attempts).toBe(1);
    expect(calls()).toHaveLength(1);
    expect(clock.slept).toEqual([]);
  });

  it('a Retry-After at the cap is waited out', async () => {
    const { pool, client, clock } = setup({ retry: { maxRetryAfterMs: 300_000 } });
    replies(pool, 'GET', INFO, [{ status: 429, headers: { 'retry-after': '300' } }, good]);
    await client.taskInfo({ task_id: 700 });
    expect(clock.slept).toEqual([300_000]);
  });

  it('the stop signal ends a backoff at once and is not retried', async () => {
    const controller = new AbortController();
    const reason = new Error('interrupted by SIGINT');
    const { pool, client, calls } = setup({
      signal: controller.signal,
      clock: {
        now: () => Date.now(),
        sleep: (_ms, signal) =>
          new Promise((_resolve, reject) => {
            signal?.addEventListener('abort', () => reject(signal.reason as Error));
            controller.abort(reason);
          }),
      },
    });
    replies(pool, 'GET', INFO, [{ status: 503 }, good]);
    await expect(client.taskInfo({ task_id: 700 })).rejects.toBe(reason);
    expect(calls()).toHaveLength(1);
  });

  it('a non-JSON 200 is retried', async () => {
    const { pool, client, calls } = setup();
    replies(pool, 'GET', INFO, [{ text: '<html>gateway</html>' }, { text: '{"success":true,"da' }, good]);
    await client.taskInfo({ task_id: 700 });
    expect(calls()).toHaveLength(3);
    expect(client.stats.errorsByCode).toEqual({ INVALID_RESPONSE: 2 });
  });

  it('a schema mismatch is not retried, names the first bad field, keeps the raw body', async () => {
    const { pool, client, calls } = setup();
    const bad = ok({ ...platformTask(700), task_id: '700' });
    replies(pool, 'GET', INFO, [{ body: bad }, good]);
    const err = await failure(client.taskInfo({ task_id: 700 }));
    expect(err).toBeInstanceOf(InvalidResponseError);
    const e = err as InvalidResponseError;
    expect(e.retryable).toBe(false);
    expect(e.field).toBe('data.task_id');
    expect(e.message).toContain('GET /api/v2/geo/task/info');
    expect(e.message).toContain('data.task_id');
    expect(e.raw).toEqual(bad);
    expect(calls()).toHaveLength(1);
  });

  it('a connection reset is retried (NetworkError), then success', async () => {
    const { pool, client, calls } = setup();
    pool
      .intercept({ path: (p) => p.startsWith(INFO) })
      .replyWithError(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
    pool.intercept({ path: (p) => p.startsWith(INFO) }).reply(200, ok(platformTask(700)));
    await client.taskInfo({ task_id: 700 });
    expect(calls()).toHaveLength(2);
    expect(client.stats.errorsByCode).toEqual({ NETWORK: 1 });
  });

  it('network errors to the end: NetworkError naming the code', async () => {
    const { pool, client } = setup({ retry: { maxAttempts: 2 } });
    pool
      .intercept({ path: (p) => p.startsWith(INFO) })
      .replyWithError(Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }))
      .times(2);
    const err = await failure(client.taskInfo({ task_id: 700 }));
    expect(err).toBeInstanceOf(NetworkError);
    expect(err.message).toContain('ECONNREFUSED');
    expect(err.attempts).toBe(2);
  });

  it('a timeout (headers or body late) is retried (TimeoutError)', async () => {
    const { pool, client, calls } = setup({ timeoutMs: 300, retry: { maxAttempts: 2 } });
    pool
      .intercept({ path: (p) => p.startsWith(INFO) })
      .reply(200, ok(platformTask(700)))
      .delay(3000);
    pool.intercept({ path: (p) => p.startsWith(INFO) }).reply(200, ok(platformTask(700)));
    await client.taskInfo({ task_id: 700 });
    expect(calls()).toHaveLength(2);
    expect(client.stats.errorsByCode).toEqual({ TIMEOUT: 1 });

    pool
      .intercept({ path: (p) => p.startsWith(INFO) })
      .reply(200, ok(platformTask(700)))
      .delay(3000)
      .times(2);
    const err = await failure(client.taskInfo({ task_id: 700 }));
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err.message).toContain('timed out after 300 ms');
  });
});

describe('no secret in any error', () => {
  const PASSWORD = 'hunter2-very-secret';
  const TOKEN = 'tok-zyxw98765432';

  function expectClean(err: unknown, secrets: string[]) {
    const text = [String((err as Error).message), JSON.stringify(err), inspect(err, { depth: 8 })].join('\n');
    for (const s of secrets) expect(text).not.toContain(s);
  }

  it('401 whose body echoes the API key', async () => {
    const { pool, client } = setup();
    route(pool, 'GET', INFO, () => ({
      status: 401,
      body: { success: false, message: `bad key ${API_KEY}` },
    }));
    const err = await failure(client.taskInfo({ task_id: 700 }));
    expect(err.message).toContain('[REDACTED]');
    expectClean(err, [API_KEY]);
  });

  it('login refused: no password in the error', async () => {
    const { pool, client } = setup({ auth: { email: 'a@b.c', password: PASSWORD } });
    route(pool, 'POST', '/api/v2/auth/login', () => ({
      status: 401,
      body: { success: false, message: 'wrong password' },
    }));
    const err = await failure(client.user());
    expect(err).toBeInstanceOf(UnauthorizedError);
    expect(err.endpoint).toBe('POST /api/v2/auth/login');
    expectClean(err, [PASSWORD]);
  });

  it('login answer of the wrong shape: the token is redacted from raw', async () => {
    const { pool, client } = setup({ auth: { email: 'a@b.c', password: PASSWORD } });
    route(pool, 'POST', '/api/v2/auth/login', () => ({ body: ok({ token: TOKEN, token_type: 'Bearer' }) }));
    const err = await failure(client.login());
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect((err as InvalidResponseError).field).toBe('data.user');
    expectClean(err, [PASSWORD, TOKEN]);
    expect(inspect((err as InvalidResponseError).raw, { depth: 8 })).not.toContain(TOKEN);
  });

  it('after login, errors of later calls hold neither token nor password', async () => {
    const { pool, client } = setup({ auth: { email: 'a@b.c', password: PASSWORD } });
    route(pool, 'POST', '/api/v2/auth/login', () => ({
      body: ok({ token: TOKEN, token_type: 'Bearer', user: { id: 1, name: 'n', email: 'a@b.c' } }),
    }));
    route(pool, 'GET', INFO, () => ({ status: 403, body: { message: `token ${TOKEN} blocked` } }));
    const err = await failure(client.taskInfo({ task_id: 700 }));
    expect(err).toBeInstanceOf(ForbiddenError);
    expectClean(err, [PASSWORD, TOKEN]);
  });

  it('invalid login parameters do not echo the password', async () => {
    const { client } = setup();
    const err = await failure(client.login({ email: '', password: PASSWORD }));
    expectClean(err, [PASSWORD]);
  });

  it('the client object itself does not reveal its credentials', () => {
    const { client } = setup({ auth: { email: 'a@b.c', password: PASSWORD } });
    expect(inspect(client, { depth: 8 })).not.toContain(PASSWORD);
    expect(JSON.stringify(client.stats)).not.toContain(PASSWORD);
  });
});
