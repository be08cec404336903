/** Site diagnosis: the rows of spec 3.1 with an injected clock, plus validation (4.2). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SiteDiagnosis } from '../../src/api/schemas/diagnosis.ts';
import { envelope } from '../../src/api/schemas/envelope.ts';
import type { RunningSimulator } from '../../src/simulator/index.ts';
import { startSimulator } from '../../src/simulator/index.ts';
import { NOW, call, manualClock } from './helpers.ts';

const STEP = 1_000;
const Body = envelope(SiteDiagnosis);

async function diag(sim: RunningSimulator, customer: number, method: 'GET' | 'POST', body?: unknown) {
  const r = await call(sim, `/api/v2/projects/${customer}/site-diagnosis`, {
    method,
    ...(method === 'POST' ? { body: body ?? {} } : {}),
  });
  return { status: r.status, data: r.status < 300 ? Body.parse(r.body).data : null, json: r.json };
}

/** Two simulators: one whose new diagnoses all complete, one whose new diagnoses all fail. */
let ok: RunningSimulator;
let failing: RunningSimulator;
const clock = manualClock(NOW);
const failClock = manualClock(NOW);

beforeAll(async () => {
  ok = await startSimulator({
    now: clock.now,
    diagnosisStepMs: STEP,
    diagnosisFailureRate: 0,
    executionsPerDay: 10,
    days: 1,
  });
  failing = await startSimulator({
    now: failClock.now,
    diagnosisStepMs: STEP,
    diagnosisFailureRate: 1,
    executionsPerDay: 10,
    days: 1,
  });
});
afterAll(async () => {
  await ok.close();
  await failing.close();
});

describe('seeded starting states', () => {
  it('one project never diagnosed, one completed with a report, one on a changed URL', async () => {
    const [a, b, c] = ok.world.customerIds() as [number, number, number];
    const first = await diag(ok, a, 'GET');
    expect(first.data).toMatchObject({
      status: 'not_started',
      diagnosis_id: null,
      result: null,
      result_ready: false,
    });
    const second = await diag(ok, b, 'GET');
    expect(second.data).toMatchObject({ status: 'completed', result_ready: true, is_current_url: true });
    expect(Object.keys(second.data!.result!)).toEqual(
      expect.arrayContaining([
        'composite_score',
        'summary_text',
        'top_issues',
        'quick_wins',
        'modules_summary',
        'platform_scores',
        'observation',
        'page_diagnostics',
        'result_json',
      ]),
    );
    expect(ok.world.diagnoses(b).map((d) => d.status)).toEqual(['failed', 'completed']);
    const third = await diag(ok, c, 'GET');
    expect(third.data).toMatchObject({ status: 'completed', is_current_url: false });
    expect(third.data!.url).not.toBe(third.data!.project_url);
  });
});

describe('state machine (spec 3.1)', () => {
  it('not_started -> POST: 202 created, queued -> running -> completed by time; GET never triggers', async () => {
    const a = ok.world.customerIds()[0]!;
    // GET many times: nothing starts.
    for (let i = 0; i < 3; i++) expect((await diag(ok, a, 'GET')).data!.status).toBe('not_started');

    const post = await diag(ok, a, 'POST');
    expect(post.status).toBe(202);
    expect(post.data).toMatchObject({
      status: 'queued',
      created: true,
      result_ready: false,
      result: null,
      is_current_url: true,
    });
    expect(post.data!.url).toBe(post.data!.project_url);

    const seen: string[] = [];
    const steps: (string | null | undefined)[] = [];
    for (let i = 0; i < 6; i++) {
      const g = (await diag(ok, a, 'GET')).data!;
      seen.push(g.status);
      if (g.status === 'running') {
        steps.push(g.current_step);
        expect(g.progress_percent).toBeGreaterThan(0);
      }
      clock.advance(STEP);
    }
    expect(seen).toEqual(['queued', 'running', 'running', 'running', 'completed', 'completed']);
    expect(new Set(steps).size).toBe(3);
    const done = (await diag(ok, a, 'GET')).data!;
    expect(done).toMatchObject({ status: 'completed', result_ready: true, progress_percent: 100 });
    expect(done.result).not.toBeNull();
  });

  it('completed, no force_refresh, same URL: 200 created=false, the same diagnosis', async () => {
    const a = ok.world.customerIds()[0]!;
    const before = (await diag(ok, a, 'GET')).data!;
    const post = await diag(ok, a, 'POST');
    expect(post.status).toBe(200);
    expect(post.data).toMatchObject({
      status: 'completed',
      created: false,
      diagnosis_id: before.diagnosis_id,
    });
  });

  it('completed + force_refresh: a new diagnosis (202), history kept', async () => {
    const a = ok.world.customerIds()[0]!;
    const before = (await diag(ok, a, 'GET')).data!;
    const post = await diag(ok, a, 'POST', { force_refresh: true });
    expect(post.status).toBe(202);
    expect(post.data).toMatchObject({ status: 'queued', created: true });
    expect(post.data!.diagnosis_id).not.toBe(before.diagnosis_id);
    expect(ok.world.diagnoses(a).map((d) => d.diagnosis_id)).toEqual([
      before.diagnosis_id,
      post.data!.diagnosis_id,
    ]);
  });

  it('queued or running + POST (with or without force_refresh): reused, same state', async () => {
    const a = ok.world.customerIds()[0]!;
    const current = (await diag(ok, a, 'GET')).data!;
    expect(current.status).toBe('queued');
    for (const body of [{}, { force_refresh: true }]) {
      const post = await diag(ok, a, 'POST', body);
      expect(post.status).toBe(200);
      expect(post.data).toMatchObject({
        status: 'queued',
        created: false,
        diagnosis_id: current.diagnosis_id,
      });
    }
    clock.advance(STEP);
    for (const body of [{}, { force_refresh: true }]) {
      const post = await diag(ok, a, 'POST', body);
      expect(post.status).toBe(200);
      expect(post.data).toMatchObject({
        status: 'running',
        created: false,
        diagnosis_id: current.diagnosis_id,
      });
    }
  });

  it('a diagnosis on a changed project URL is not current; POST starts one on the current URL', async () => {
    const c = ok.world.customerIds()[2]!;
    const post = await diag(ok, c, 'POST');
    expect(post.status).toBe(202);
    expect(post.data).toMatchObject({ created: true, is_current_url: true });
    expect(post.data!.url).toBe(post.data!.project_url);
  });

  it('-> failed with an error and no result; GET does not fall back to an older report; POST creates anew', async () => {
    const b = failing.world.customerIds()[1]!; // has a completed report already
    const post = await diag(failing, b, 'POST', { force_refresh: true });
    expect(post.status).toBe(202);
    failClock.advance(10 * STEP);
    const g = (await diag(failing, b, 'GET')).data!;
    expect(g).toMatchObject({
      status: 'failed',
      result: null,
      result_ready: false,
      diagnosis_id: post.data!.diagnosis_id,
    });
    expect(g.error).toBeTruthy();
    const again = await diag(failing, b, 'POST');
    expect(again.status).toBe(202);
    expect(again.data).toMatchObject({ created: true, status: 'queued' });
    expect(failing.world.diagnoses(b).map((d) => d.status)).toEqual([
      'failed',
      'completed',
      'failed',
      'queued',
    ]);
  });
});

describe('validation (spec 4.2)', () => {
  it.each([
    ['url', { url: 'https://example.com' }],
    ['site_domain', { site_domain: 'example.com' }],
    ['unknown parameter', { foo: 1 }],
    ['force_refresh not a boolean', { force_refresh: 'yes' }],
  ])('POST with %s: 422', async (_, body) => {
    const r = await diag(ok, ok.world.customerIds()[1]!, 'POST', body);
    expect(r.status).toBe(422);
    expect(r.json.message).toEqual(expect.any(String));
  });

  it('POST with a body that is not JSON: 422; an empty body is fine', async () => {
    const path = `/api/v2/projects/${ok.world.customerIds()[1]}/site-diagnosis`;
    expect((await call(ok, path, { method: 'POST', raw: 'not json' })).status).toBe(422);
    expect((await call(ok, path, { method: 'POST', raw: '' })).status).toBeLessThan(300);
  });

  it('unknown or unreadable projects: 404 with a message', async () => {
    for (const id of [ok.world.unreadableCustomerId, 424242]) {
      for (const method of ['GET', 'POST'] as const) {
        const r = await diag(ok, id, method);
        expect(r.status).toBe(404);
        expect(r.json).toEqual({ message: expect.any(String) });
      }
    }
  });
});
