/**
 * `geo-sync report` through the real command line, on both warehouses filled by
 * a real sync of the simulator: the charts (inline SVG) and their tables are there, every number
 * in the tables equals SQL over the warehouse's base tables, and nothing is fetched from a network.
 */
import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.ts';
import { runCli } from '../helpers/cli.ts';
import { syncOnce, withWarehouse } from '../helpers/sync.ts';
import { warehouseTargets } from '../helpers/targets.ts';

const unescape = (s: string) =>
  s
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&quot;', '"')
    .replaceAll('&#39;', "'")
    .replaceAll('&amp;', '&');

/** The body rows of `<table data-table="name">`, each as its cells' text. */
function tableRows(html: string, name: string): string[][] {
  const m = new RegExp(`<table data-table="${name}">([\\s\\S]*?)</table>`).exec(html);
  if (!m) throw new Error(`no table ${name}`);
  const body = /<tbody>([\s\S]*?)<\/tbody>/.exec(m[1]!)![1]!;
  return [...body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((r) =>
    [...r[1]!.matchAll(/<t[hd][^>]*>([\s\S]*?)<\/t[hd]>/g)].map((c) => unescape(c[1]!)),
  );
}

function tableHead(html: string, name: string): string[] {
  const m = new RegExp(`<table data-table="${name}">[\\s\\S]*?<thead>([\\s\\S]*?)</thead>`).exec(html)!;
  return [...m[1]!.matchAll(/<th[^>]*>([\s\S]*?)<\/th>/g)].map((c) => unescape(c[1]!));
}

const percent = (n: number) => `${(n * 100).toFixed(1)}%`;

for (const target of warehouseTargets('report')) {
  describe.skipIf(target.skip)(`report from ${target.dialect}`, () => {
    let sim: RunningSimulator;
    let url: string;
    let days: string[];
    let dir: string;

    beforeAll(async () => {
      url = await target.create();
      sim = await startSimulator({ seed: 12, days: 2, executionsPerDay: 20 });
      days = sim.world.dates();
      await syncOnce({ baseUrl: sim.url, target: url, dates: days });
      dir = mkdtempSync(join(tmpdir(), 'geo-report-'));
    }, 60_000);
    afterAll(async () => {
      await sim?.close();
      await target.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    const q = (sql: string, params: (string | number)[] = []) =>
      withWarehouse(url, (w) => w.query(sql, params));

    /** Executions in the report's scope, as a SQL condition on prompt_executions `e`. */
    function scope(from?: string, to?: string, customer?: number) {
      const params: (string | number)[] = [];
      const parts = ['TRUE'];
      if (from) parts.push(`e.date_time >= CAST($${params.push(from)} AS DATE)`);
      if (to) parts.push(`e.date_time <= CAST($${params.push(to)} AS DATE)`);
      if (customer !== undefined) parts.push(`e.customer_id = $${params.push(customer)}`);
      return { where: parts.join(' AND '), params };
    }

    async function checkNumbers(html: string, from?: string, to?: string, customer?: number) {
      const s = scope(from, to, customer);

      const executions = await q(
        `SELECT CAST(e.date_time AS VARCHAR) AS day, CAST(count(*) AS BIGINT) AS n,
                CAST(sum(CASE WHEN e.result_status = 'missing' THEN 1 ELSE 0 END) AS BIGINT) AS missing
           FROM geo.prompt_executions e WHERE ${s.where} GROUP BY e.date_time ORDER BY e.date_time`,
        s.params,
      );
      expect(executions.length).toBeGreaterThan(0);
      expect(tableRows(html, 'executions')).toEqual(
        executions.map((r) => [
          String(r.day),
          String(r.n),
          String(r.missing),
          percent(Number(r.missing) / Number(r.n)),
        ]),
      );
      const total = executions.reduce((a, r) => a + Number(r.n), 0);

      const ranked = new Map(
        (
          await q(
            `SELECT r.brand, CAST(count(DISTINCT r.prompt_task_id) AS BIGINT) AS n
               FROM geo.execution_ranks r JOIN geo.prompt_executions e ON e.prompt_task_id = r.prompt_task_id
              WHERE r.position IS NOT NULL AND ${s.where} GROUP BY r.brand`,
            s.params,
          )
        ).map((r) => [String(r.brand), Number(r.n)]),
      );
      const shares = tableRows(html, 'brand-share');
      expect(shares.length).toBe(Math.min(15, ranked.size));
      for (const [brand, n, all, share] of shares) {
        expect([n, all, share], brand).toEqual([
          String(ranked.get(brand!)),
          String(total),
          percent(ranked.get(brand!)! / total),
        ]);
      }
      // The table holds the brands ranked most often.
      const top = [...ranked.values()].sort((a, b) => b - a).slice(0, shares.length);
      expect(shares.map((r) => Number(r[1]))).toEqual(top);

      const domains = new Map(
        (
          await q(
            `SELECT s.domain, CAST(count(*) AS BIGINT) AS citations, CAST(count(DISTINCT s.prompt_task_id) AS BIGINT) AS citing
               FROM geo.execution_sources s JOIN geo.prompt_executions e ON e.prompt_task_id = s.prompt_task_id
              WHERE ${s.where} GROUP BY s.domain`,
            s.params,
          )
        ).map((r) => [String(r.domain), [String(r.citations), String(r.citing)]]),
      );
      const domainRows = tableRows(html, 'domains');
      expect(domainRows.length).toBe(Math.min(15, domains.size));
      for (const [domain, citations, citing] of domainRows)
        expect([citations, citing], domain).toEqual(domains.get(domain!));

      const ranks = await q(
        `SELECT e.engine, CAST(e.date_time AS VARCHAR) AS day, r.brand,
                CAST(avg(r.position) AS DOUBLE PRECISION) AS avg, CAST(count(r.position) AS BIGINT) AS n
           FROM geo.execution_ranks r JOIN geo.prompt_executions e ON e.prompt_task_id = r.prompt_task_id
          WHERE r.position IS NOT NULL AND ${s.where} GROUP BY e.engine, e.date_time, r.brand`,
        s.params,
      );
      const byCell = new Map(ranks.map((r) => [`${r.engine}|${r.day}|${r.brand}`, r]));
      const engines = [...new Set(ranks.map((r) => String(r.engine)))];
      let cells = 0;
      for (const engine of engines) {
        const head = tableHead(html, `ranks-${engine}`);
        for (const [brand, ...values] of tableRows(html, `ranks-${engine}`)) {
          values.forEach((text, i) => {
            const want = byCell.get(`${engine}|${head[i + 1]}|${brand}`);
            if (text === '') return expect(want, `${engine} ${brand} ${head[i + 1]}`).toBeUndefined();
            const m = /^(\d+\.\d\d) \((\d+)\)$/.exec(text)!;
            expect(Math.abs(Number(m[1]) - Number(want!.avg)), text).toBeLessThanOrEqual(0.0051);
            expect(m[2]).toBe(String(want!.n));
            cells++;
          });
        }
      }
      expect(cells).toBeGreaterThan(0);

      // Share of voice per platform, from the base tables.
      const voice = await q(
        `SELECT p.model_name AS platform, r.brand, CAST(count(r.position) AS BIGINT) AS items
           FROM geo.execution_ranks r JOIN geo.prompt_executions e ON e.prompt_task_id = r.prompt_task_id
           JOIN geo.platform_tasks p ON p.task_id = e.task_id
          WHERE ${s.where} GROUP BY p.model_name, r.brand`,
        s.params,
      );
      const expectedVoice: string[][] = [];
      for (const platform of [...new Set(voice.map((v) => String(v.platform)))].sort()) {
        const items = voice
          .filter((v) => v.platform === platform)
          .map((v) => ({ brand: String(v.brand), n: Number(v.items) }))
          // A brand without a valid rank item has no share of voice: the table leaves it out.
          .filter((v) => v.n > 0)
          .sort((a, b) => b.n - a.n || (a.brand < b.brand ? -1 : a.brand > b.brand ? 1 : 0));
        const total = items.reduce((a, v) => a + v.n, 0);
        for (const v of items.slice(0, 8))
          expectedVoice.push([
            platform,
            v.brand,
            String(v.n),
            String(total),
            percent(total > 0 ? v.n / total : 0),
          ]);
      }
      expect(expectedVoice.length).toBeGreaterThan(0);
      expect(tableRows(html, 'share-of-voice')).toEqual(expectedVoice);

      // Own-site citations: the hosts of brand_urls worked out here, with URL.
      const cites = await q(
        `SELECT p.model_name AS platform, s.domain, e.project_id, CAST(count(*) AS BIGINT) AS n
           FROM geo.execution_sources s JOIN geo.prompt_executions e ON e.prompt_task_id = s.prompt_task_id
           JOIN geo.platform_tasks p ON p.task_id = e.task_id
          WHERE ${s.where} GROUP BY p.model_name, s.domain, e.project_id`,
        s.params,
      );
      // Own-site matching normalises both sides alike: lower case, no user@, :port, "www." or trailing dots.
      const site = (s: string) =>
        new URL(s.includes('://') ? s.trim() : `http://${s.trim()}`).hostname
          .toLowerCase()
          .replace(/^www\./, '')
          .replace(/\.+$/, '');
      const hosts = new Map<number, string[]>();
      for (const m of await q('SELECT project_id, brand_urls FROM geo.monitoring_tasks')) {
        const urls = (
          typeof m.brand_urls === 'string' ? JSON.parse(m.brand_urls) : (m.brand_urls ?? [])
        ) as string[];
        hosts.set(Number(m.project_id), urls.map(site));
      }
      const ownedBy = new Map<string, [number, number]>();
      for (const c of cites) {
        const d = site(String(c.domain));
        const own = (hosts.get(Number(c.project_id)) ?? []).some((h) => d === h || d.endsWith(`.${h}`));
        const e = ownedBy.get(String(c.platform)) ?? [0, 0];
        e[own ? 0 : 1] += Number(c.n);
        ownedBy.set(String(c.platform), e);
      }
      const ownedRows = [...ownedBy]
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([platform, [own, third]]) => [
          platform,
          String(own),
          String(third),
          percent(own / (own + third)),
        ]);
      expect(ownedRows.some((r) => r[1] !== '0')).toBe(true);
      expect(tableRows(html, 'owned-citations')).toEqual(ownedRows);

      // Question ranks: each cell from the base tables (best, average of each run's best, runs ranked).
      const questionHead = tableHead(html, 'question-ranks');
      const perRun = await q(
        `SELECT e.prompt_name AS question, r.brand, e.prompt_task_id, min(r.position) AS best
           FROM geo.execution_ranks r JOIN geo.prompt_executions e ON e.prompt_task_id = r.prompt_task_id
          WHERE r.position IS NOT NULL AND ${s.where} GROUP BY e.prompt_name, r.brand, e.prompt_task_id`,
        s.params,
      );
      // N: every run of the question in the range on the platform tasks where the brand is named,
      // also on the days it is not.
      const questionRuns = new Map(
        (
          await q(
            `SELECT n.question, n.brand, CAST(sum(n.runs) AS BIGINT) AS runs FROM (
               SELECT named.question, named.brand, named.task_id,
                      (SELECT count(*) FROM geo.prompt_executions e
                        WHERE e.prompt_name = named.question AND e.task_id = named.task_id AND ${s.where}) AS runs
                 FROM (SELECT DISTINCT e.prompt_name AS question, r.brand, e.task_id
                         FROM geo.execution_ranks r JOIN geo.prompt_executions e ON e.prompt_task_id = r.prompt_task_id
                        WHERE ${s.where}) named
             ) n GROUP BY n.question, n.brand`,
            s.params,
          )
        ).map((r) => [`${r.question}|${r.brand}`, Number(r.runs)]),
      );
      // What summing question_rank_daily.runs gave: the runs of the days the brand is named only.
      const namedDayRuns = new Map(
        (
          await q(
            `SELECT n.question, n.brand, CAST(sum(n.runs) AS BIGINT) AS runs FROM (
               SELECT named.question, named.brand,
                      (SELECT count(*) FROM geo.prompt_executions e
                        WHERE e.prompt_name = named.question AND e.task_id = named.task_id
                          AND e.date_time = named.day) AS runs
                 FROM (SELECT DISTINCT e.prompt_name AS question, r.brand, e.task_id, e.date_time AS day
                         FROM geo.execution_ranks r JOIN geo.prompt_executions e ON e.prompt_task_id = r.prompt_task_id
                        WHERE ${s.where}) named
             ) n GROUP BY n.question, n.brand`,
            s.params,
          )
        ).map((r) => [`${r.question}|${r.brand}`, Number(r.runs)]),
      );
      let questionCells = 0;
      let notNamedEveryRun = 0;
      for (const [question, ...cellsText] of tableRows(html, 'question-ranks')) {
        cellsText.forEach((text, i) => {
          const runs = perRun
            .filter((p) => p.question === question && p.brand === questionHead[i + 1])
            .map((p) => Number(p.best));
          if (text === '') return expect(runs, `${question} ${questionHead[i + 1]}`).toEqual([]);
          const m = /^(\d+) \/ (\d+\.\d\d) \((\d+) of (\d+)\)$/.exec(text)!;
          expect(Number(m[4]), text).toBe(questionRuns.get(`${question}|${questionHead[i + 1]}`));
          expect(Number(m[1]), text).toBe(Math.min(...runs));
          expect(
            Math.abs(Number(m[2]) - runs.reduce((a, b) => a + b, 0) / runs.length),
            text,
          ).toBeLessThanOrEqual(0.0051);
          expect(Number(m[3]), text).toBe(runs.length);
          questionCells++;
          if (Number(m[4]) > namedDayRuns.get(`${question}|${questionHead[i + 1]}`)!) notNamedEveryRun++;
        });
      }
      expect(questionCells).toBeGreaterThan(0);
      return { engines, notNamedEveryRun };
    }

    it('writes charts with their numbers beside them, equal to SQL over the warehouse', async () => {
      const out = join(dir, 'all', 'report.html');
      const r = await runCli(['report', '--out', out], { GEO_WAREHOUSE: url });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('report written to');
      const html = readFileSync(out, 'utf8');
      const { engines, notNamedEveryRun } = await checkNumbers(html);
      // Some question ran on a day its brand was not named: those runs are in N too.
      expect(notNamedEveryRun).toBeGreaterThan(0);

      // One section per chart: each with an inline SVG and a table.
      const sections = [...html.matchAll(/<section id="([^"]+)">([\s\S]*?)<\/section>/g)];
      expect(sections.map((s) => s[1])).toEqual([
        'executions',
        'brand-share',
        'domains',
        'share-of-voice',
        'owned-citations',
        'question-ranks',
        ...engines.sort().map((e) => `ranks-${e}`),
      ]);
      const tablesOnly = new Set(['share-of-voice', 'owned-citations', 'question-ranks']);
      for (const [, id, body] of sections) {
        if (!tablesOnly.has(id!)) expect(body, id).toMatch(/<svg[^>]*>[\s\S]*<\/svg>/);
        expect(body, id).toContain('<table data-table=');
      }
      // Chinese brand names are in the charts and tables, with a CJK-capable font stack.
      expect(html).toMatch(/<text[^>]*>[^<]*[\u4e00-\u9fff]/);
      expect(html).toMatch(/font-family: [^;]*"Noto Sans CJK SC"/);
    });

    it('opens offline: no script, and nothing loaded from a network', async () => {
      const html = readFileSync(join(dir, 'all', 'report.html'), 'utf8');
      expect(html).not.toMatch(/<script/i);
      expect(html).not.toMatch(/<(link|img|iframe|object|embed)\b/i);
      expect(html).not.toMatch(/@import|@font-face|url\(/i);
      expect(html).not.toMatch(/\b(src|href|xlink:href)\s*=\s*["']?\s*(https?:)?\/\//i);
      expect(html).toContain(`<meta http-equiv="Content-Security-Policy" content="default-src 'none';`);
    });

    it('--from/--to and --customer narrow every chart', async () => {
      const day = days[1]!;
      const [row] = await q(
        'SELECT customer_id, count(*) AS n FROM geo.prompt_executions WHERE customer_id IS NOT NULL GROUP BY customer_id ORDER BY n DESC, customer_id LIMIT 1',
      );
      const customer = Number(row!.customer_id);
      const out = join(dir, 'one', 'report.html');
      const r = await runCli(
        ['report', '--out', out, '--from', day, '--to', day, '--customer', String(customer)],
        { GEO_WAREHOUSE: url },
      );
      expect(r.code, r.stderr).toBe(0);
      const html = readFileSync(out, 'utf8');
      expect(tableRows(html, 'executions').map((r) => r[0])).toEqual([day]);
      await checkNumbers(html, day, day, customer);
    });

    // The report was once written in place, so a reader of the previous one (a
    // browser, a shared drive's sync) saw it truncated and half written meanwhile.
    it.skipIf(target.dialect !== 'duckdb')(
      'writes the new report aside and renames it over the previous one',
      async () => {
        const out = join(dir, 'aside', 'report.html');
        mkdirSync(dirname(out), { recursive: true });
        writeFileSync(out, 'the previous report');
        const before = statSync(out).ino;
        const reader = openSync(out, 'r');
        try {
          const day = days[1]!;
          const r = await runCli(['report', '--out', out, '--from', day, '--to', day], {
            GEO_WAREHOUSE: url,
          });
          expect(r.code, r.stderr).toBe(0);
          // The previous file was replaced, not rewritten: its reader still has it whole.
          expect(readFileSync(reader, 'utf8')).toBe('the previous report');
        } finally {
          closeSync(reader);
        }
        expect(statSync(out).ino).not.toBe(before);
        expect(readFileSync(out, 'utf8')).toMatch(/^<!doctype html>/i);
        expect(readdirSync(dirname(out))).toEqual(['report.html']);
      },
    );
  });
}

describe('report flags', () => {
  it.each([
    [[], /required option '--out/],
    [
      ['--out', '/tmp/r.html', '--from', '2026-11-02', '--to', '2026-11-01'],
      /--from 2026-11-02 is after --to 2026-11-01/,
    ],
    [['--out', '/tmp/r.html', '--customer', 'abc'], /expected an ID/],
  ])('%j exits 2 with one clear line', async (args, message) => {
    const r = await runCli(['report', ...args], { GEO_WAREHOUSE: 'duckdb:/nonexistent/never-opened.duckdb' });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(
      r.stderr
        .trim()
        .split('\n')
        .filter((l) => !l.startsWith('(run with --help')).length,
    ).toBe(1);
  });
});
