/**
 * Hostile answers, as an independent review reproduced them: the real CLI against the
 * simulator, with a small proxy in front of it playing the hostile server.
 *
 * - A giant answer: an execution's screenshot answer and one platform task's listing
 *   over the size cap (here 1 MiB, GEO_MAX_RESPONSE_BYTES) fail their requests at once with
 *   RESPONSE_TOO_LARGE: the screenshot is quarantined, the listing fails its unit, the run ends
 *   partial (exit 3) and is recorded as such; `schedule` goes on ticking after such a run.
 * - A key with CR or LF: exit 2 at configuration, one line naming GEO_API_KEY; a login
 *   token with CR that the server hands out fails its requests at once, and whoami exits.
 * - A wrong key while the other endpoint whoami asks answers 503, or not at all: whoami
 *   reports the 401, as soon as it comes.
 * - An unknown member nested 4,000 arrays deep in an execution's listed item, sources,
 *   product cards and screenshot: the unit finishes, the run succeeds, and the next run finds the
 *   execution unchanged.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.ts';
import { runCli, startCli } from '../helpers/cli.ts';
import { startProxy, type RunningProxy } from '../helpers/proxy.ts';
import { withWarehouse } from '../helpers/sync.ts';
import { duckdbTarget, warehouseTargets, type WarehouseTarget } from '../helpers/targets.ts';

/** Far above the simulator's largest answer (a sources page of a few hundred KiB). */
const CAP = 1024 * 1024;

/**
 * Answers 200 with a JSON body that never ends, as fast as the socket takes it: only a cap
 * counted as the bytes come ends the request (without one it runs into the timeout, and is
 * retried), and only counting keeps the client from holding it all.
 */
function endlessAnswer(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/json' }); // chunked: no Content-Length
  res.write('{"success":true,"data":{"padding":"');
  const chunk = 'x'.repeat(64 * 1024);
  const pump = () => {
    while (!res.destroyed) if (!res.write(chunk)) return void res.once('drain', pump);
  };
  pump();
}

const query = (url: URL, name: string) => Number(url.searchParams.get(name));

interface Picked {
  date: string;
  /** A platform task with executions, whose listing is served too large. */
  bigListing: number;
  /** An execution of another task with sources, cards and a screenshot. */
  execution: number;
  executions: number;
}

/**
 * The day's tasks and executions: one task's listing to inflate, one execution of another. The
 * simulator's day is the real yesterday, so what it holds changes with the date: the execution
 * is the first of another task listed with a screenshot that also has sources and cards
 * (`deep`: the deep tests need them), or else the first with a screenshot (the scheduler's test
 * needs only that). A day's world without one fails the test saying so.
 */
function pick(sim: RunningSimulator, deep: boolean): Picked {
  const date = sim.world.dates()[0]!;
  const tasks = sim.world.allPlatformTasks().filter((t) => [...sim.world.executions(t.task_id, date)].length);
  const bigListing = tasks[0]!.task_id;
  const withShot = tasks
    .slice(1)
    .flatMap((t) => [...sim.world.executions(t.task_id, date)])
    .filter((e) => e.screenshot_url !== null);
  // Best with cards and sources (the deep tests need them), else any with a screenshot.
  const chosen =
    withShot.find(
      (e) =>
        sim.world.products(e.prompt_task_id).cards.length > 0 &&
        sim.world.sources(e.prompt_task_id).length > 0,
    ) ?? (deep ? undefined : withShot[0]);
  if (!chosen)
    throw new Error(
      `this day's world has no execution with a screenshot${deep ? ', cards and sources' : ''} on ${date} outside the first task`,
    );
  const execution = chosen.prompt_task_id;
  const executions = tasks.reduce((n, t) => n + [...sim.world.executions(t.task_id, date)].length, 0);
  return { date, bigListing, execution, executions };
}

function envFor(baseUrl: string, target: string): Record<string, string> {
  return {
    GEO_BASE_URL: baseUrl,
    GEO_API_KEY: 'sim-key',
    GEO_WAREHOUSE: target,
    GEO_REQUESTS_PER_SECOND: '10000',
    GEO_CONCURRENCY: '16',
    GEO_MAX_RESPONSE_BYTES: String(CAP),
    GEO_ENRICH_DIAGNOSIS: 'false',
    GEO_ENRICH_FINANCE: 'false',
    GEO_ENRICH_TASK_CONFIG: 'false',
  };
}

/** A giant answer for the chosen execution's screenshot and for the chosen task's listing. */
function giantAnswers(p: Picked) {
  return (req: IncomingMessage, res: ServerResponse, url: URL): boolean => {
    const screenshot =
      url.pathname === '/api/v2/geo/prompt/screenshot' && query(url, 'prompt_task_id') === p.execution;
    const listing = url.pathname === '/api/v2/geo/task/results' && query(url, 'task_id') === p.bigListing;
    if (!screenshot && !listing) return false;
    req.resume();
    endlessAnswer(res);
    return true;
  };
}

async function lastRuns(target: string): Promise<Record<string, unknown>[]> {
  return withWarehouse(target, (w) =>
    w.query(
      `SELECT status, CAST(finished_at AS VARCHAR) AS finished_at, units_failed, rejects, error
       FROM geo.sync_runs ORDER BY started_at`,
    ),
  );
}

for (const t of warehouseTargets('hostile-answers')) {
  describe.skipIf(t.skip)(`hostile answers through the CLI on ${t.dialect}`, () => {
    let sim: RunningSimulator;
    let picked: Picked;
    const targets: WarehouseTarget[] = [];
    const proxies: RunningProxy[] = [];

    beforeAll(async () => {
      // 30: an execution with a screenshot, cards and sources outside the first task, whatever
      // the day (the world changes with it; with 12 a day, about one day in 25 had none, with 24
      // one in 400).
      sim = await startSimulator({ seed: 27, days: 1, executionsPerDay: 30 });
      picked = pick(sim, true);
    });
    afterAll(async () => {
      for (const p of proxies) await p.close();
      await sim?.close();
      for (const target of targets) await target.drop();
    });

    async function fresh(): Promise<string> {
      const target = warehouseTargets(`hostile-${targets.length}`).find((x) => x.dialect === t.dialect)!;
      targets.push(target);
      return target.create();
    }

    // A giant answer: the screenshot answer once made `sync` die with exit 13 and no message,
    // its run left `running` in geo.sync_runs for good.
    it('answers over the size cap: the screenshot quarantined, the listing fails its unit, exit 3 with a message', async () => {
      const proxy = await startProxy(sim.url, { answer: giantAnswers(picked) });
      proxies.push(proxy);
      const target = await fresh();
      const r = await runCli(['sync', '--date', picked.date, '--no-progress'], envFor(proxy.url, target));
      expect(r.code, r.stderr.slice(-3000)).toBe(3);
      expect(r.stdout).toMatch(/: PARTIAL in /);
      expect(r.stdout).toMatch(
        new RegExp(
          `failed unit task_id=${picked.bigListing} date=${picked.date}: response too large \\(aborted after \\d+ bytes; limit 1 MiB, GEO_MAX_RESPONSE_BYTES\\): GET /api/v2/geo/task/results`,
        ),
      );
      expect(r.stdout).toContain('1 invalid (quarantined)');
      // Named in the log: the code of the typed error and its reason.
      expect(r.stderr).toMatch(/"code":"RESPONSE_TOO_LARGE"/);
      // Each giant answer was asked for once: the error is not retried.
      expect(proxy.hits.get('/api/v2/geo/prompt/screenshot')).toBeGreaterThan(0);
      expect(r.stderr).not.toMatch(/"msg":"retrying request"/);

      const runs = await lastRuns(target);
      expect(runs).toHaveLength(1);
      expect(runs[0]).toMatchObject({ status: 'partial', units_failed: 1 });
      expect(runs[0]!.finished_at).not.toBeNull();
      const rejects = await withWarehouse(target, (w) =>
        w.query(`SELECT endpoint, reason FROM geo.sync_rejects`),
      );
      expect(rejects).toEqual([
        {
          endpoint: 'GET /api/v2/geo/prompt/screenshot',
          reason: expect.stringMatching(
            /^invalid_child: response too large \(aborted after \d+ bytes; limit 1 MiB, GEO_MAX_RESPONSE_BYTES\)/,
          ),
        },
      ]);
      // The execution itself, and every execution of the units that finished, are stored.
      const [stored] = await withWarehouse(target, (w) =>
        w.query(
          `SELECT count(*) AS n, count(*) FILTER (WHERE prompt_task_id = $1) AS picked
           FROM geo.prompt_executions WHERE task_id <> $2`,
          [picked.execution, picked.bigListing],
        ),
      );
      const bigListingExecutions = [...sim.world.executions(picked.bigListing, picked.date)].length;
      expect(Number(stored!.n)).toBe(picked.executions - bigListingExecutions);
      expect(Number(stored!.picked)).toBe(1);
    }, 120_000);

    /** A proxy adding an unknown member `depth` arrays deep to the picked execution's answers. */
    /**
     * Deep members in the picked execution's listed item, sources, screenshot and its first
     * DEEP_CARDS cards: enough to prove each card is quarantined alone, few enough that the
     * products answer stays under the size cap whatever the day's cards (34 cards 20,000 levels
     * deep are 1.4 MB).
     */
    const DEEP_CARDS = 3;
    function deepProxy(depth: number): Promise<RunningProxy> {
      const deep = `${'['.repeat(depth)}"bottom"${']'.repeat(depth)}`;
      const marker = '"__deep_member__"';
      const withDeep = (o: Record<string, unknown>) => (o.deep_unknown = '__deep_member__');
      const ofPicked = (url: URL) => query(url, 'prompt_task_id') === picked.execution;
      return startProxy(sim.url, {
        rewrite(url, body) {
          const json = JSON.parse(body) as { data: Record<string, unknown> };
          if (url.pathname === '/api/v2/geo/task/results') {
            const page = json.data as { data: Record<string, unknown>[] };
            const item = page.data.find((i) => i.prompt_task_id === picked.execution);
            if (!item) return undefined;
            withDeep(item);
          } else if (url.pathname === '/api/v2/geo/prompt/searches' && ofPicked(url)) {
            for (const s of (json.data as { data: Record<string, unknown>[] }).data) withDeep(s);
          } else if (url.pathname === '/api/v2/geo/prompt/products' && ofPicked(url)) {
            for (const c of (json.data as { products: Record<string, unknown>[] }).products.slice(
              0,
              DEEP_CARDS,
            ))
              withDeep(c);
          } else if (url.pathname === '/api/v2/geo/prompt/screenshot' && ofPicked(url)) {
            withDeep(json.data);
          } else return undefined;
          return JSON.stringify(json).split(marker).join(deep);
        },
      });
    }

    // A deep member: `RangeError: Maximum call stack size exceeded` in canonicalJson failed the
    // unit on every run.
    it('an unknown member nested 4,000 arrays deep in an execution and its children: success, then unchanged', async () => {
      const proxy = await deepProxy(4000);
      proxies.push(proxy);
      const target = await fresh();
      const env = envFor(proxy.url, target);
      const first = await runCli(['sync', '--date', picked.date, '--no-progress'], env);
      expect(first.code, first.stderr.slice(-3000)).toBe(0);
      expect(first.stdout).toMatch(/: SUCCESS in /);
      expect(first.stderr).not.toContain('Maximum call stack size exceeded');

      const [row] = await withWarehouse(target, (w) =>
        w.query(
          `SELECT (SELECT count(*) FROM geo.prompt_executions) AS executions,
                  (SELECT count(*) FROM geo.product_cards WHERE prompt_task_id = $1) AS cards,
                  (SELECT count(*) FROM geo.product_cards
                    WHERE prompt_task_id = $1 AND CAST(card AS VARCHAR) LIKE '%deep_unknown%') AS deep_cards,
                  (SELECT count(*) FROM geo.execution_sources WHERE prompt_task_id = $1) AS sources`,
          [picked.execution],
        ),
      );
      expect(Number(row!.executions)).toBe(picked.executions);
      const cards = sim.world.products(picked.execution).cards.length;
      // The cards keep what the server sent (the deep member too), as for any member the spec
      // does not name.
      expect(Number(row!.cards)).toBe(cards);
      expect(Number(row!.deep_cards)).toBe(Math.min(DEEP_CARDS, cards));
      expect(Number(row!.sources)).toBe(sim.world.sources(picked.execution).length);

      // The same answers again: the deep item's fingerprint matches, its children are not re-read.
      const second = await runCli(['sync', '--date', picked.date, '--force', '--no-progress'], env);
      expect(second.code, second.stderr.slice(-3000)).toBe(0);
      const [run] = await withWarehouse(target, (w) =>
        w.query(
          `SELECT executions_read, executions_unchanged FROM geo.sync_runs ORDER BY started_at DESC LIMIT 1`,
        ),
      );
      expect(Number(run!.executions_unchanged)).toBe(picked.executions);
      expect(Number(run!.executions_read)).toBe(0);
    }, 120_000);

    it('20,000 levels deep, past what a JSON column takes: only the cards are quarantined, cut, with the reason', async () => {
      const proxy = await deepProxy(20_000);
      proxies.push(proxy);
      const target = await fresh();
      const r = await runCli(['sync', '--date', picked.date, '--no-progress'], envFor(proxy.url, target));
      expect(r.code, r.stderr.slice(-3000)).toBe(3);
      const cards = Math.min(DEEP_CARDS, sim.world.products(picked.execution).cards.length);
      expect(cards).toBeGreaterThan(0);
      const rejects = await withWarehouse(target, (w) =>
        w.query(`SELECT endpoint, reason, CAST(raw AS VARCHAR) AS raw FROM geo.sync_rejects`),
      );
      expect(rejects).toHaveLength(cards);
      for (const x of rejects) {
        expect(x.endpoint).toBe('GET /api/v2/geo/prompt/products');
        expect(x.reason).toBe('nested deeper than 5000 levels, the deepest JSON geo-sync stores');
        expect(x.raw).toContain('[nested deeper than 5000 levels: not kept]');
      }
      const [row] = await withWarehouse(target, (w) =>
        w.query(
          `SELECT (SELECT count(*) FROM geo.prompt_executions) AS executions,
                  (SELECT units_failed FROM geo.sync_runs) AS units_failed`,
        ),
      );
      expect(Number(row!.executions)).toBe(picked.executions);
      expect(Number(row!.units_failed)).toBe(0);
    }, 120_000);
  });
}

describe('a giant answer and the scheduler', () => {
  let sim: RunningSimulator;
  const wh = duckdbTarget('hostile-schedule');
  beforeAll(async () => {
    sim = await startSimulator({ seed: 27, days: 1, executionsPerDay: 6 });
  });
  afterAll(async () => {
    await sim?.close();
    await wh.drop();
  });

  // A giant answer: `schedule` once finished 38 of 39 units, then waited on the last one for
  // ever, skipping every later tick.
  it('schedule keeps ticking after a run whose unit met an answer over the cap', async () => {
    const picked = pick(sim, false);
    const proxy = await startProxy(sim.url, { answer: giantAnswers(picked) });
    const target = await wh.create();
    const p = startCli(
      ['schedule', '--cron', '* * * * * *', '--lookback-days', '0'],
      envFor(proxy.url, target),
    );
    try {
      await p.waitForLog(/"msg":"warehouse closed until the next run"/, 3);
    } finally {
      p.child.kill('SIGTERM');
      await proxy.close();
    }
    const r = await p.done;
    expect([0, 130], r.stderr.slice(-2000)).toContain(r.code);
    const runs = await lastRuns(target);
    expect(runs.length).toBeGreaterThanOrEqual(3);
    // The last run may have been cut short by the stop; every other one ended partial.
    for (const run of runs.filter((x) => x.status !== 'interrupted')) {
      expect(run).toMatchObject({ status: 'partial', units_failed: 1 });
      expect(run.finished_at).not.toBeNull();
    }
    expect(runs.filter((x) => x.status === 'running')).toEqual([]);
  }, 120_000);
});

describe('a bad key: with CR or LF, or wrong', () => {
  let sim: RunningSimulator;
  beforeAll(async () => {
    sim = await startSimulator({ seed: 27, days: 1, executionsPerDay: 2 });
  });
  afterAll(async () => {
    await sim?.close();
  });

  // A key with CR or LF: whoami once retried, timed out and exited 13 after 65 s with no
  // output; sync exited 1 with `network error (UND_ERR_INVALID_ARG)`.
  it.each([
    ['whoami', ['whoami']],
    ['sync', ['sync', '--dry-run']],
  ])('%s: exit 2 at configuration, one line naming GEO_API_KEY, the key never shown', async (_name, args) => {
    const r = await runCli(args, { GEO_BASE_URL: sim.url, GEO_API_KEY: 'sim-key\r' });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      'config: GEO_API_KEY (apiKey): contains a carriage return (CR) at the end (a file saved with Windows line endings?): remove it\n',
    );
    expect(sim.stats.total).toBe(0);
  });

  // A blank key once scrambled its own error (`auth.apiKey:[REDACTED] expected[REDACTED]a...`).
  it('a key of blanks only: exit 2 and a readable line', async () => {
    const r = await runCli(['whoami'], { GEO_BASE_URL: sim.url, GEO_API_KEY: '   ' });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'config: GEO_API_KEY (apiKey): is blank (only whitespace): give the value, or leave it unset\n',
    );
  });

  it('a login token with CR from the server fails its requests at once, not retried, and whoami exits', async () => {
    // The server, not the configuration, hands out the bad value: the transport refuses to send it.
    const proxy = await startProxy(sim.url, {
      rewrite: (url, body) =>
        url.pathname === '/api/v2/auth/login'
          ? body.replace(/"token":"([^"]+)"/, '"token":"$1\\r"')
          : undefined,
    });
    try {
      const r = await runCli(['whoami'], {
        GEO_BASE_URL: proxy.url,
        GEO_EMAIL: 'demo@geo-sync.local',
        GEO_PASSWORD: 'demo-password',
        GEO_API_KEY: undefined,
      });
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toMatch(
        /^error: request not sent \(the authorization header cannot be sent: its value contains a carriage return \(CR\) at the end\): GET \/api\/v2\/(auth\/user|finance\/balance)\n/m,
      );
      // Only the login reached the server: the refused requests were never sent, nor retried.
      expect(proxy.hits.get('/api/v2/auth/user')).toBeUndefined();
      expect(proxy.hits.get('/api/v2/finance/balance')).toBeUndefined();
    } finally {
      await proxy.close();
    }
  }, 30_000);

  // whoami asks two endpoints at once. It reported whichever failed first, so a wrong key could
  // show as a server hiccup (seen in CI under injected 5xx); then it waited for the other
  // request even after the refusal, up to that request's timeout.
  it.each([
    {
      name: 'while the other endpoint answers 503 (the 503s at once, the 401 late)',
      authUser: { status: 503, message: 'Service Unavailable', afterMs: 0 },
      balanceAfterMs: 500,
      authUserHits: 2,
    },
    {
      name: 'as soon as it comes, while the other request is still unanswered',
      authUser: null, // never answered, within its 60 s timeout
      balanceAfterMs: 0,
      authUserHits: 1,
    },
  ])(
    'whoami with a wrong key reports the 401, $name',
    async ({ authUser, balanceAfterMs, authUserHits }) => {
      const proxy = await startProxy(sim.url, {
        answer: (_req, res, url) => {
          const reply =
            url.pathname === '/api/v2/auth/user'
              ? authUser
              : { status: 401, message: 'Unauthenticated.', afterMs: balanceAfterMs };
          if (reply)
            setTimeout(() => {
              res.writeHead(reply.status, { 'content-type': 'application/json' });
              res.end(JSON.stringify({ success: false, message: reply.message }));
            }, reply.afterMs);
          return true;
        },
      });
      try {
        const r = await runCli(['whoami'], {
          GEO_BASE_URL: proxy.url,
          GEO_API_KEY: 'sk-wrong-key-123456',
          GEO_MAX_ATTEMPTS: '2',
          GEO_RETRY_BASE_DELAY_MS: '1',
          GEO_TIMEOUT_MS: '60000',
        });
        expect(r.code, r.stderr).toBe(1);
        expect(r.stderr).toMatch(/^error: unauthorized \(401\).*GET \/api\/v2\/finance\/balance/m);
        expect(r.stderr).not.toContain('sk-wrong-key-123456');
        expect(proxy.hits.get('/api/v2/auth/user')).toBe(authUserHits);
      } finally {
        await proxy.close();
      }
    },
    30_000,
  );
});
