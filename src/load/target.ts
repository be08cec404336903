/**
 * The warehouse target (GEO_WAREHOUSE): `duckdb:<file path>` or a `postgres://` /
 * `postgresql://` URL. Descriptions never carry the password.
 */
import { resolve } from 'node:path';
import { maskUrlPassword } from '../redact.ts';

export type WarehouseTarget =
  | { dialect: 'duckdb'; /** Absolute path of the database file. */ path: string; description: string }
  | {
      dialect: 'postgres';
      url: string;
      /** The URL with the password masked. */
      description: string;
      /** The password, when the URL has one (for log scrubbing). */
      password: string | undefined;
    };

const ACCEPTED =
  'expected duckdb:<file path> (e.g. duckdb:./data/geo-sync.duckdb) or postgres://user[:password]@host[:port]/database (postgresql:// also accepted)';

export class WarehouseTargetError extends Error {
  readonly code = 'BAD_WAREHOUSE_TARGET';
  /** What is wrong, without the variable's name nor what is accepted. */
  readonly detail: string;
  constructor(detail: string) {
    super(`GEO_WAREHOUSE: ${detail}; ${ACCEPTED}`);
    this.name = 'WarehouseTargetError';
    this.detail = detail;
  }
}

/** What is wrong with `target` (for the config's one-line message), or undefined when it parses. */
export function warehouseTargetProblem(target: string): string | undefined {
  try {
    parseWarehouseTarget(target);
    return undefined;
  } catch (e) {
    if (e instanceof WarehouseTargetError)
      return `expected duckdb:<file path> or a postgres:// URL: ${e.detail}`;
    throw e;
  }
}

/** `postgres://u:secret@h/db` -> `postgres://u:***@h/db`: the one URL masker (redact.ts). */
export const maskPassword = maskUrlPassword;

export function parseWarehouseTarget(target: string, cwd: string = process.cwd()): WarehouseTarget {
  const text = target.trim();
  if (text === '') throw new WarehouseTargetError('no warehouse given');
  if (/^duckdb:/i.test(text)) {
    const file = text.slice('duckdb:'.length);
    if (file === '' || file.startsWith('//')) throw new WarehouseTargetError(`no file path in "${text}"`);
    if (file === ':memory:') {
      throw new WarehouseTargetError('an in-memory DuckDB keeps nothing; give a file path');
    }
    const path = resolve(cwd, file);
    return { dialect: 'duckdb', path, description: `duckdb:${path}` };
  }
  if (/^postgres(ql)?:\/\//i.test(text)) {
    let u: URL;
    try {
      u = new URL(text);
    } catch {
      throw new WarehouseTargetError(`"${maskPassword(text)}" is not a valid URL`);
    }
    if (!u.hostname && !u.searchParams.has('host')) {
      throw new WarehouseTargetError(`no host in "${maskPassword(text)}"`);
    }
    const password = u.password
      ? decodeURIComponent(u.password)
      : (u.searchParams.get('password') ?? undefined);
    return { dialect: 'postgres', url: text, description: maskPassword(text), password };
  }
  throw new WarehouseTargetError(`unsupported warehouse "${maskPassword(text)}"`);
}
