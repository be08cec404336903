/**
 * External programs the deployment tests run for real (PgBouncer, Prometheus, promtool,
 * systemd-analyze): Debian's packages, which .ci/run installs. A test never installs anything
 * itself. Missing: with CI=true the test fails loudly; elsewhere it is skipped with one message.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { delimiter, join } from 'node:path';

/** Where Debian puts them, PATH or not (pgbouncer is in /usr/sbin). */
const EXTRA_DIRS = ['/usr/sbin', '/usr/bin', '/sbin', '/bin'];

/** The program's path, or null when it is not installed. */
export function findProgram(name: string): string | null {
  const dirs = [...(process.env.PATH ?? '').split(delimiter).filter(Boolean), ...EXTRA_DIRS];
  for (const dir of dirs) {
    const p = join(dir, name);
    if (existsSync(p)) return p;
  }
  return null;
}

/**
 * The program's path; null (after one warning) when it is missing outside CI, so the suite can
 * skip. Under CI=true a missing program throws: .ci/run installs the Debian package named.
 */
export function requireProgram(name: string, debianPackage: string): string | null {
  const path = findProgram(name);
  if (path) return path;
  const why = `${name} is not installed (Debian package ${debianPackage}; .ci/run installs it)`;
  if (process.env.CI === 'true') throw new Error(`${why} and CI=true: the tests that run it cannot run`);
  console.warn(
    `[geo-sync tests] ${why}: skipping the tests that run it. Set CI=true to make this a failure.`,
  );
  return null;
}

/** A TCP port free on 127.0.0.1 now (for programs that cannot be given port 0). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * The uid and gid a daemon that refuses root (PgBouncer) runs as when the tests run as root:
 * the `postgres` user of Debian's PostgreSQL package, else `nobody`. Undefined when not root.
 */
export function unprivilegedUser(): { uid: number; gid: number; name: string } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  for (const name of ['postgres', 'nobody']) {
    const uid = spawnSync('id', ['-u', name], { encoding: 'utf8' });
    const gid = spawnSync('id', ['-g', name], { encoding: 'utf8' });
    if (uid.status === 0 && gid.status === 0)
      return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()), name };
  }
  throw new Error('running as root, and neither a postgres nor a nobody user exists to run PgBouncer as');
}
