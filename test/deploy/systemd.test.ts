/**
 * deploy/systemd/ as an operator installs it. `systemd-analyze verify` (Debian's
 * systemd package) passes on both units, with no warning, and `systemd-analyze security` rates
 * their exposure; the settings the README promises (SIGTERM, the stop timeout a run in flight
 * needs, restart on failure but not on bad settings, the root-only environment file, no
 * privileges) are there.
 *
 * The units name the installation directory /opt/geo-sync: verified here with it mapped to this
 * checkout, so the programs they run exist (verify checks ExecStart).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { requireProgram } from '../helpers/programs.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');
const DIR = join(ROOT, 'deploy', 'systemd');
// The operators' page on running unattended carries the copy-paste steps.
const README = readFileSync(join(ROOT, 'docs', 'running-unattended.md'), 'utf8');
const analyze = requireProgram('systemd-analyze', 'systemd');

const unit = (name: string) => readFileSync(join(DIR, name), 'utf8');
/** The unit as installed, /opt/geo-sync being this checkout (and node where this one is). */
const installed = (text: string) =>
  text
    .replaceAll('/opt/geo-sync', ROOT)
    .replaceAll('/usr/bin/node', existsSync('/usr/bin/node') ? '/usr/bin/node' : process.execPath);

/** `Key=value` settings of a unit (the last of each key). */
function settings(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^([A-Za-z]+)=(.*)$/.exec(line);
    if (m) out.set(m[1]!, m[2]!);
  }
  return out;
}

describe.skipIf(!analyze)('deploy/systemd with systemd-analyze', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'geo-systemd-'));
  const files = {
    'geo-sync.service': installed(unit('geo-sync.service')),
    // A template is verified through an instance: the metrics port 9465.
    'geo-sync-worker@9465.service': installed(unit('geo-sync-worker@.service')),
  };
  for (const [name, text] of Object.entries(files)) writeFileSync(join(tmp, name), text);
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('systemd-analyze verify passes without a warning', () => {
    const r = spawnSync(analyze!, ['verify', '--man=no', ...Object.keys(files).map((f) => join(tmp, f))], {
      encoding: 'utf8',
    });
    expect({ code: r.status, output: `${r.stdout}${r.stderr}`.trim() }).toEqual({ code: 0, output: '' });
  });

  it.each(Object.keys(files))('%s: systemd-analyze security rates its exposure OK or better', (name) => {
    const r = spawnSync(analyze!, ['security', '--offline=true', '--no-pager', join(tmp, name)], {
      encoding: 'utf8',
    });
    const m = /Overall exposure level for .*: (\d+(?:\.\d+)?) (\S+)/.exec(`${r.stdout}${r.stderr}`);
    expect(m, r.stdout + r.stderr).not.toBeNull();
    expect(Number(m![1])).toBeLessThanOrEqual(2.5);
  });
});

describe('the units say what the README says', () => {
  it.each(['geo-sync.service', 'geo-sync-worker@.service'])('%s', (name) => {
    const s = settings(unit(name));
    expect(s.get('ExecStart')).toMatch(
      /^\/usr\/bin\/node \/opt\/geo-sync\/bin\/geo-sync\.js (schedule|worker) --metrics-port/,
    );
    expect(s.get('EnvironmentFile')).toBe('/etc/geo-sync/geo-sync.env');
    expect(s.get('KillSignal')).toBe('SIGTERM');
    expect(s.get('TimeoutStopSec')).toBe('60s');
    expect(s.get('SuccessExitStatus')).toBe('130');
    expect(s.get('Restart')).toBe('on-failure');
    expect(s.get('RestartPreventExitStatus')).toBe('2');
    expect(s.get('DynamicUser')).toBe('yes');
    expect(s.get('NoNewPrivileges')).toBe('yes');
    expect(s.get('CapabilityBoundingSet')).toBe('');
    expect(s.get('ProtectSystem')).toBe('strict');
    // The README's copy-paste steps install this unit and keep the environment file root's.
    expect(README).toContain(`deploy/systemd/${name}`);
  });

  it('the README gives the stop timeout and the root-only environment file', () => {
    expect(README).toMatch(/TimeoutStopSec=60s/);
    expect(README).toMatch(/install -m 0600 -o root -g root .*\/etc\/geo-sync\/geo-sync\.env/);
  });
});
