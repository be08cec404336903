/**
 * For tests that stop the real CLI with SIGINT/SIGTERM at a known moment: a server that never
 * answers, a PostgreSQL lock held by the test (so a command's query provably waits), and what a
 * stopped command must not leave behind.
 */
import { existsSync, readdirSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import pg from 'pg';
import { expect } from 'vitest';
import type { CliProcess, CliResult } from './cli.ts';

/**
 * A TCP server that accepts connections and never says a word: a host that never answers.
 * `connected()` resolves at its next connection.
 */
export async function silentServer(): Promise<{
  port: number;
  connected(): Promise<void>;
  close(): Promise<void>;
}> {
  const sockets = new Set<Socket>();
  let waiters: (() => void)[] = [];
  const server = createServer((s) => {
    for (const w of waiters) w();
    waiters = [];
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    connected: () => new Promise<void>((resolve) => waiters.push(resolve)),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A port nothing listens on (taken, then released). */
export async function closedPort(): Promise<number> {
  const s = await silentServer();
  await s.close();
  return s.port;
}

/**
 * Holds locks in an open transaction of its own (`LOCK TABLE ...`, `pg_advisory_xact_lock`), so a
 * command that needs them waits in a query until the test releases them (or its query is
 * cancelled).
 */
export async function holdLocks(url: string, statements: string[]): Promise<() => Promise<void>> {
  const c = new pg.Client(url);
  await c.connect();
  await c.query('BEGIN');
  for (const s of statements) await c.query(s);
  return async () => {
    await c.query('ROLLBACK').catch(() => undefined);
    await c.end();
  };
}

/**
 * Resolves once a connection of this database (the backend `pid`, when given) waits on a lock: a
 * command's query is in flight.
 */
export async function waitingOnLock(url: string, timeoutMs = 20_000, pid?: number): Promise<void> {
  const c = new pg.Client(url);
  await c.connect();
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const r = await c.query(
        `SELECT 1 FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()
            AND ($1::int IS NULL OR pid = $1)`,
        [pid ?? null],
      );
      if (r.rows.length > 0) return;
      if (Date.now() > deadline)
        throw new Error(
          `no ${pid === undefined ? 'geo-sync query' : `backend ${pid}`} came to wait on a lock`,
        );
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  } finally {
    await c.end();
  }
}

/** Whether the warehouse lock (the advisory lock of a run) is held by anyone on this database. */
export async function warehouseLockHeld(url: string): Promise<boolean> {
  const c = new pg.Client(url);
  await c.connect();
  try {
    const r = await c.query(
      `SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1
          AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    );
    return r.rows.length > 0;
  } finally {
    await c.end();
  }
}

/** Sends `signal` once `pattern` shows in the log, and returns how the process ended. */
export async function stopAt(p: CliProcess, pattern: RegExp, signal: NodeJS.Signals): Promise<CliResult> {
  await p.waitForLog(pattern);
  p.child.kill(signal);
  return p.done;
}

/** The command stopped as the README says: exit 130, the stop said on stderr. */
export function expectStopped(r: CliResult): void {
  expect(r.signal, r.stderr.slice(-2000)).toBeNull();
  expect(r.code, r.stderr.slice(-2000)).toBe(130);
  expect(r.stderr).toMatch(/^interrupted by SIG(TERM|INT)$/m);
}

/** Nothing of a DuckDB warehouse's lock beside its file. */
export function expectNoDuckDBLock(target: string): void {
  const file = target.slice('duckdb:'.length);
  expect(existsSync(`${file}.lock`), `${file}.lock left behind`).toBe(false);
}

/** Files a write-aside or an export leaves while it works: none may outlive a stop. */
export function leftovers(dir: string): string[] {
  return readdirSync(dir).filter((n) => n.startsWith('.') && /\.tmp$|^\.geo-sync-export/.test(n));
}
