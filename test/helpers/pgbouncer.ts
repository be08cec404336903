/**
 * A real PgBouncer (Debian's package) in front of the test PostgreSQL, started by a test file on a
 * free loopback port with its own configuration in a temporary directory, and stopped after.
 * Each alias is a database name of the pooler with its own pool mode and size:
 *
 *   const bouncer = await startPgBouncer({ tx: { database: 'geo_test_x', mode: 'transaction', size: 4 } });
 *   bouncer.url('tx')   // postgres://postgres@127.0.0.1:<port>/tx
 *
 * PgBouncer refuses to run as root: as root (CI, these machines) it is started as the `postgres`
 * user (spawn's uid/gid), its directory handed to that user; as anyone else, as that user.
 * `server_round_robin = 1` makes a transaction pool hand a client's transactions to its servers
 * in turn, so anything that relies on a session outliving a transaction fails at once instead of
 * now and then.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chownSync, mkdtempSync, readdirSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { killOnExit } from './children.ts';
import { PG_ADMIN_URL } from './postgres.ts';
import { freePort, unprivilegedUser } from './programs.ts';

export interface PoolAlias {
  /** The PostgreSQL database the alias stands for. */
  database: string;
  mode: 'session' | 'transaction' | 'statement';
  /** Server connections of the pool. */
  size: number;
  /**
   * Server connections kept open however idle the pool is: with round robin, one client's
   * statements then go to these in turn from the first on.
   */
  min?: number;
}

export interface RunningPgBouncer {
  port: number;
  /** The alias's URL through the pooler. */
  url(alias: string): string;
  /** Everything PgBouncer logged (stderr). */
  log(): string;
  /**
   * Null while PgBouncer runs; once it has exited without stop(), how (its exit code or signal)
   * and the end of its log: what a test that then finds the pooler's port closed should say.
   */
  died(): string | null;
  stop(): Promise<void>;
}

export async function startPgBouncer(
  bin: string,
  aliases: Record<string, PoolAlias>,
): Promise<RunningPgBouncer> {
  const target = new URL(PG_ADMIN_URL);
  const user = decodeURIComponent(target.username || 'postgres');
  const password = decodeURIComponent(target.password);
  const dir = mkdtempSync(join(tmpdir(), 'geo-pgbouncer-'));
  const as = unprivilegedUser();
  const databases = Object.entries(aliases).map(
    ([alias, a]) =>
      `${alias} = host=${target.hostname} port=${target.port || 5432} dbname=${a.database} user=${user}` +
      `${password ? ` password=${password}` : ''} pool_mode=${a.mode} pool_size=${a.size}` +
      (a.min ? ` min_pool_size=${a.min}` : ''),
  );
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    writeFileSync(
      join(dir, 'pgbouncer.ini'),
      [
        '[databases]',
        ...databases,
        '[pgbouncer]',
        'listen_addr = 127.0.0.1',
        `listen_port = ${port}`,
        'unix_socket_dir =',
        'auth_type = trust',
        `auth_file = ${join(dir, 'users.txt')}`,
        'max_client_conn = 200',
        'server_round_robin = 1',
        // pg sends none it refuses; PgBouncer would refuse any other startup parameter.
        'ignore_startup_parameters = extra_float_digits',
        '',
      ].join('\n'),
    );
    writeFileSync(join(dir, 'users.txt'), `"${user}" ""\n`);
    if (as) {
      chownSync(dir, as.uid, as.gid);
      for (const f of readdirSync(dir)) chownSync(join(dir, f), as.uid, as.gid);
    }
    chmodSync(dir, 0o700);
    const child = killOnExit(
      spawn(bin, [join(dir, 'pgbouncer.ini')], {
        stdio: ['ignore', 'ignore', 'pipe'],
        ...(as ? { uid: as.uid, gid: as.gid } : {}),
      }),
    );
    let log = '';
    const listening = new Promise<boolean>((resolve) => {
      child.stderr!.on('data', (d: Buffer) => {
        log += d.toString();
        if (/listening on 127\.0\.0\.1/.test(log)) resolve(true);
      });
      child.once('exit', () => resolve(false));
    });
    if (await listening) return running(child, port, user, () => log, dir);
    // The port was taken between freePort() and the bind: try another, a few times.
    if (attempt >= 3 || !/Address already in use/i.test(log))
      throw new Error(`pgbouncer did not start:\n${log}`);
  }
}

function running(
  child: ChildProcess,
  port: number,
  user: string,
  log: () => string,
  dir: string,
): RunningPgBouncer {
  let stopping = false;
  let died: string | null = null;
  // 'close', not 'exit': its stderr read to the end, the FATAL line last.
  child.once('close', (code, signal) => {
    if (!stopping) died = `code ${code}`;
    if (!stopping && signal) died = signal;
  });
  return {
    port,
    url: (alias) => `postgres://${encodeURIComponent(user)}@127.0.0.1:${port}/${alias}`,
    log,
    died: () =>
      died && `pgbouncer exited (${died}) before the tests stopped it; its log ends:\n${log().slice(-3000)}`,
    async stop() {
      stopping = true;
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
