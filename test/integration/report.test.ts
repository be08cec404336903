/**
 * Issue 11 item 2: `geo-sync report` through the real command line, on both warehouses filled by
 * a real sync of the simulator: the charts (inline SVG) and their tables are there, every number
 * in the tables equals SQL over the warehouse's base tables, and nothing is fetched from a network.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
      return { engines };
    }

    it('writes charts with their numbers beside them, equal to SQL over the warehouse', async () => {
      const out = join(dir, 'all', 'report.html');
      const r = await runCli(['report', '--out', out], { GEO_WAREHOUSE: url });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('report written to');
      const html = readFileSync(out, 'utf8');
      const { engines } = await checkNumbers(html);

      // One section per chart: each with an inline SVG and a table.
      const sections = [...html.matchAll(/<section id="([^"]+)">([\s\S]*?)<\/section>/g)];
      expect(sections.map((s) => s[1])).toEqual([
        'executions',
        'brand-share',
        'domains',
        ...engines.sort().map((e) => `ranks-${e}`),
      ]);
      for (const [, id, body] of sections) {
        expect(body, id).toMatch(/<svg[^>]*>[\s\S]*<\/svg>/);
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
