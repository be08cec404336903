/** What goes on the wire: headers, query strings, bodies, and auth by key, token or login. */
import { describe, expect, it } from 'vitest';
import { InvalidParamsError } from '../../src/api/errors.ts';
import { API_KEY, ok, pageBody, platformTask, replies, resultItem, route, setup } from './helpers.ts';

const EMAIL = 'demo@geo-sync.local';
const PASSWORD = 'demo-password-secret';
const TOKEN = 'tok-abcdef0123456789';
const loginOk = ok({ token: TOKEN, token_type: 'Bearer', user: { id: 1, name: 'Demo', email: EMAIL } });
const user = {
  id: 1,
  name: 'Demo',
  email: EMAIL,
  uuid: 'u-1',
  last_login_time: '2025-03-01 10:00:00',
  amount: 12.5,
  block_reason: null,
  created_at: '2024-01-01 00:00:00',
};

describe('headers on the wire', () => {
  it('GET: Bearer key and Accept, no Content-Type; the query carries the spec names', async () => {
    const { pool, client, calls } = setup();
    route(pool, 'GET', '/api/v2/geo/task/results', () => ({
      body: pageBody([resultItem(1)], { current_page: 1, last_page: 1 }),
    }));
    await client.taskResults({ task_id: 700, date: '2025-02-28' });
    const [call] = calls();
    expect(call?.method).toBe('GET');
    expect(call?.headers).toMatchObject({ authorization: `Bearer ${API_KEY}`, accept: 'application/json' });
    expect(call?.headers).not.toHaveProperty('content-type');
    expect(call?.searchParams).toEqual({ task_id: '700', date: '2025-02-28', per_page: '100' });
    expect(call?.body ?? null).toBeNull();
  });

  it('POST with a body: Content-Type application/json and the exact JSON body', async () => {
    const { pool, client, calls } = setup();
    route(pool, 'POST', '/api/v2/geo/project/create', () => ({
      body: ok({ number_id: 5, project_ids: [51, 52] }),
    }));
    const created = await client.legacyProjectCreate({
      brand: 'Acme',
      brand_desc: 'Acme,Rival',
      diy_prompt: 'best phone?',
      ai_platform: 'deepseek,kimi_back',
      week_restart: 0,
    });
    expect(created).toEqual({ number_id: 5, project_ids: [51, 52] });
    const [call] = calls();
    expect(call?.headers).toMatchObject({
      authorization: `Bearer ${API_KEY}`,
      accept: 'application/json',
      'content-type': 'application/json',
    });
    expect(JSON.parse(String(call?.body))).toEqual({
      brand: 'Acme',
      brand_desc: 'Acme,Rival',
      diy_prompt: 'best phone?',
      ai_platform: 'deepseek,kimi_back',
      week_restart: 0,
    });
  });

  it('POST site-diagnosis sends {} or {"force_refresh":true}, path project_id filled, 202 vs 200', async () => {
    const { pool, client, calls } = setup();
    replies(pool, 'POST', '/api/v2/projects/7/site-diagnosis', [
      {
        status: 202,
        body: ok({ status: 'queued', created: true, diagnosis_id: 1, result_ready: false, result: null }),
      },
      {
        status: 200,
        body: ok({ status: 'queued', created: false, diagnosis_id: 1, result_ready: false, result: null }),
      },
    ]);
    const first = await client.startSiteDiagnosis({ project_id: 7 });
    const second = await client.startSiteDiagnosis({ project_id: 7, force_refresh: true });
    expect(first.httpStatus).toBe(202);
    expect(first.diagnosis.created).toBe(true);
    expect(second.httpStatus).toBe(200);
    expect(calls().map((c) => c.body)).toEqual(['{}', '{"force_refresh":true}']);
    expect(calls().every((c) => c.headers?.['content-type'] === 'application/json')).toBe(true);
  });

  it('logout (POST without body) sends no Content-Type', async () => {
    const { pool, client, calls } = setup();
    route(pool, 'POST', '/api/v2/auth/logout', () => ({ body: { success: true, message: 'logged out' } }));
    expect(await client.logout()).toBe('logged out');
    expect(calls()[0]?.headers).not.toHaveProperty('content-type');
    expect(calls()[0]?.headers).toMatchObject({ authorization: `Bearer ${API_KEY}` });
  });

  it('a path in the base URL prefixes every endpoint path', async () => {
    const { pool, client, calls } = setup({ baseUrl: 'http://geo.test/proxy/' });
    route(pool, 'GET', '/proxy/api/v2/geo/task/info', () => ({ body: ok(platformTask(700)) }));
    await client.taskInfo({ task_id: 700 });
    expect(calls()[0]?.path).toBe('/proxy/api/v2/geo/task/info');
  });

  it('an existing token is sent as the bearer', async () => {
    const { pool, client, calls } = setup({ auth: { token: TOKEN } });
    route(pool, 'GET', '/api/v2/auth/user', () => ({ body: ok(user) }));
    await client.user();
    expect(calls()[0]?.headers).toMatchObject({ authorization: `Bearer ${TOKEN}` });
  });
});

describe('login', () => {
  it('logs in lazily once (no Authorization on login), then uses the token; logout forgets it', async () => {
    const { pool, client, calls } = setup({ auth: { email: EMAIL, password: PASSWORD } });
    route(pool, 'POST', '/api/v2/auth/login', () => ({ body: loginOk }));
    route(pool, 'GET', '/api/v2/auth/user', () => ({ body: ok(user) }));
    route(pool, 'POST', '/api/v2/auth/logout', () => ({ body: { success: true, message: 'bye' } }));

    const users = await Promise.all([client.user(), client.user(), client.user()]);
    expect(users.map((u) => u.email)).toEqual([EMAIL, EMAIL, EMAIL]);
    const [login, ...rest] = calls();
    expect(login?.path).toBe('/api/v2/auth/login');
    expect(login?.headers).not.toHaveProperty('authorization');
    expect(login?.headers).toMatchObject({ accept: 'application/json', 'content-type': 'application/json' });
    expect(JSON.parse(String(login?.body))).toEqual({ email: EMAIL, password: PASSWORD });
    expect(rest.map((c) => c.headers?.authorization)).toEqual([
      `Bearer ${TOKEN}`,
      `Bearer ${TOKEN}`,
      `Bearer ${TOKEN}`,
    ]);

    expect(await client.logout()).toBe('bye');
    expect(calls().at(-1)?.headers).toMatchObject({ authorization: `Bearer ${TOKEN}` });
    // The next request logs in again rather than send a revoked token.
    await client.user();
    expect(
      calls()
        .map((c) => c.path)
        .slice(-2),
    ).toEqual(['/api/v2/auth/login', '/api/v2/auth/user']);
  });

  it('login() returns the user, never the token', async () => {
    const { pool, client } = setup({ auth: { email: EMAIL, password: PASSWORD } });
    route(pool, 'POST', '/api/v2/auth/login', () => ({ body: loginOk }));
    const r = await client.login();
    expect(r).toEqual({ token_type: 'Bearer', user: { id: 1, name: 'Demo', email: EMAIL } });
    expect(JSON.stringify(r)).not.toContain(TOKEN);
  });

  it('logout with login auth and no token yet sends nothing', async () => {
    const { client, calls } = setup({ auth: { email: EMAIL, password: PASSWORD } });
    expect(await client.logout()).toBeUndefined();
    expect(calls()).toHaveLength(0);
  });
});

describe('parameters are refused before any request', () => {
  // The MockAgent has no interceptors and refuses the network: any request would fail loudly,
  // and the call history proves none was made.
  it.each<[string, (c: ReturnType<typeof setup>['client']) => Promise<unknown>, RegExp]>([
    ['missing required task_id', (c) => c.taskResults({} as never), /task_id/],
    ['task_id as a string', (c) => c.taskInfo({ task_id: '700' as never }), /task_id/],
    ['per_page above 100', (c) => c.taskResults({ task_id: 1, per_page: 101 }), /per_page/],
    [
      'sources per_page above 1000',
      (c) => c.promptSearches({ prompt_task_id: 1, per_page: 1001 }),
      /per_page/,
    ],
    ['page 0', (c) => c.customerProjects({ customer_id: 1, page: 0 }), /page/],
    ['a date that is not a day', (c) => c.taskPrompts({ task_id: 1, date: '2025-02-30' }), /date/],
    ['an unknown parameter', (c) => c.promptDetail({ prompt_task_id: 1, task_id: 2 } as never), /task_id/],
    ['status outside the filter values', (c) => c.customerProjects({ customer_id: 1, status: 5 }), /status/],
    [
      'an unknown platform',
      (c) => c.legacyProjectCreate({ brand: 'A', brand_desc: 'A', diy_prompt: 'q', ai_platform: 'chatgpt' }),
      /ai_platform/,
    ],
    ['legacy limit above 1000', (c) => c.legacyTaskSearches({ task_id: 1, limit: 5000 }), /limit/],
  ])('%s', async (_name, call, field) => {
    const { client, calls } = setup();
    const err = await call(client).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidParamsError);
    expect((err as InvalidParamsError).message).toMatch(field);
    expect((err as InvalidParamsError).attempts).toBe(0);
    expect(calls()).toHaveLength(0);
    expect(client.stats.requests).toBe(0);
    expect(client.stats.errorsByCode.INVALID_PARAMS).toBe(1);
  });
});
