/**
 * deploy/prometheus/ as an operator loads it. promtool (Debian's prometheus package)
 * checks the configuration and the rules and runs the rules' unit tests, in which each alert
 * fires when it should and stays silent when it should not. Every metric the rules name exists in
 * the scheduler's or the worker's registry and in the README's metrics table.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { WorkerMetrics } from '../../src/distributed/metrics.ts';
import { SyncMetrics } from '../../src/sync/metrics.ts';
import { requireProgram } from '../helpers/programs.ts';

const DIR = fileURLToPath(new URL('../../deploy/prometheus/', import.meta.url));
// The operators' page on Prometheus documents every metric.
const README = readFileSync(fileURLToPath(new URL('../../docs/prometheus.md', import.meta.url)), 'utf8');
const RULES = readFileSync(`${DIR}geo-sync.rules.yml`, 'utf8');
const TESTS = readFileSync(`${DIR}geo-sync.rules.test.yml`, 'utf8');
const promtool = requireProgram('promtool', 'prometheus');

const alerts = [...RULES.matchAll(/- alert: (\w+)/g)].map((m) => m[1]!);

function run(args: string[]) {
  const r = spawnSync(promtool!, args, { cwd: DIR, encoding: 'utf8' });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

describe.skipIf(!promtool)('deploy/prometheus with promtool', () => {
  it('promtool check config and check rules pass', () => {
    const config = run(['check', 'config', 'prometheus.yml']);
    expect(config.code, config.out).toBe(0);
    const rules = run(['check', 'rules', 'geo-sync.rules.yml']);
    expect(rules.code, rules.out).toBe(0);
    expect(rules.out).toMatch(new RegExp(`SUCCESS: ${alerts.length} rules found`));
  });

  it('promtool test rules passes', () => {
    const r = run(['test', 'rules', 'geo-sync.rules.test.yml']);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toMatch(/SUCCESS/);
  });
});

describe('the alert rules', () => {
  it('cover what an operator must hear about', () => {
    expect(alerts.sort()).toEqual(
      [
        'GeoSyncDataCheckFailing',
        'GeoSyncLastRunFailed',
        'GeoSyncLastRunPartial',
        'GeoSyncRateLimited',
        'GeoSyncRecordsQuarantined',
        'GeoSyncSchedulerAbsent',
        'GeoSyncSchedulerDown',
        'GeoSyncStale',
        'GeoSyncWorkerJobsFailing',
      ].sort(),
    );
  });

  it.each(alerts)('%s is tested firing and silent', (alert) => {
    const cases = [
      ...TESTS.matchAll(new RegExp(`alertname: ${alert}\\n\\s*exp_alerts:(.*)\\n(\\s*- exp_labels)?`, 'g')),
    ];
    expect(
      cases.some((c) => c[1]!.trim() === '[]'),
      'a case where it stays silent',
    ).toBe(true);
    expect(
      cases.some((c) => c[2] !== undefined),
      'a case where it fires',
    ).toBe(true);
  });

  it('name only metrics the scheduler or a worker serves, each in the README', async () => {
    const served = new Set<string>([
      'up',
      ...(await new SyncMetrics().registry.getMetricsAsJSON()).map((m) => m.name),
      ...(await new WorkerMetrics().registry.getMetricsAsJSON()).map((m) => m.name),
    ]);
    const named = new Set([...RULES.matchAll(/\b(geo_[a-z_]+|up)\b(?=[{\s)]|$)/gm)].map((m) => m[1]!));
    expect([...named].filter((n) => !served.has(n))).toEqual([]);
    const undocumented = [...served].filter((n) => n !== 'up' && !README.includes(`\`${n}`));
    expect(undocumented).toEqual([]);
  });
});
