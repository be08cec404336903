/**
 * Telling "the service is not there" (exit 1, named by its setting) from other failures, and the
 * PostgreSQL connect timeout read from the URL: table-driven.
 */
import { describe, expect, it } from 'vitest';
import {
  connectFailure,
  connectTimeoutMs,
  DEFAULT_CONNECT_TIMEOUT_MS,
} from '../../src/load/postgres/pool.ts';
import { UnreachableError, unreachableReason } from '../../src/unreachable.ts';

const sys = (code: string, message: string) => Object.assign(new Error(message), { code });

describe('unreachableReason', () => {
  it.each([
    [
      sys('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.9:5499'),
      'connection refused: connect ECONNREFUSED 127.0.0.9:5499',
    ],
    [
      sys('ENOTFOUND', 'getaddrinfo ENOTFOUND db.invalid'),
      'host name not found: getaddrinfo ENOTFOUND db.invalid',
    ],
    [sys('EAI_AGAIN', 'getaddrinfo EAI_AGAIN db'), 'host name lookup failed (DNS): getaddrinfo EAI_AGAIN db'],
    [
      sys('EHOSTUNREACH', 'connect EHOSTUNREACH 10.0.0.1:5432'),
      'no route to host: connect EHOSTUNREACH 10.0.0.1:5432',
    ],
    [sys('ENETUNREACH', 'connect ENETUNREACH'), 'network unreachable: connect ENETUNREACH'],
    [
      sys('ETIMEDOUT', 'connect ETIMEDOUT 10.0.0.1:5432'),
      'connection timed out: connect ETIMEDOUT 10.0.0.1:5432',
    ],
    // Node's dual-stack connect: an AggregateError with an empty message, the codes on its members.
    [
      Object.assign(new AggregateError([sys('ECONNREFUSED', 'connect ECONNREFUSED ::1:5499')], ''), {
        code: 'ECONNREFUSED',
      }),
      'connection refused: connect ECONNREFUSED ::1:5499',
    ],
    // Wrapped: found in the cause chain.
    [
      new Error('request failed', { cause: sys('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:1') }),
      'connection refused: connect ECONNREFUSED 127.0.0.1:1',
    ],
    // A code alone (undici's transport failure).
    [{ code: 'UND_ERR_CONNECT_TIMEOUT' }, 'connection timed out: UND_ERR_CONNECT_TIMEOUT'],
  ])('%s', (e, reason) => expect(unreachableReason(e)).toBe(reason));

  it.each([
    [
      'a refused password',
      Object.assign(new Error('password authentication failed for user "geo"'), { code: '28P01' }),
    ],
    ['a reset mid-answer', sys('ECONNRESET', 'read ECONNRESET')],
    ['no error at all', undefined],
    ['a string', 'ECONNREFUSED'],
  ])('%s is not unreachable', (_, e) => expect(unreachableReason(e)).toBeUndefined());

  it('names the setting, masks the password, in one line', () => {
    const e = new UnreachableError(
      'GEO_LOCK_URL (lockUrl)',
      'PostgreSQL at postgres://geo:s3cret@db:5432/geo',
      'connection refused: connect ECONNREFUSED 10.0.0.1:5432',
    );
    expect(e.message).toBe(
      'GEO_LOCK_URL (lockUrl): cannot reach PostgreSQL at postgres://geo:***@db:5432/geo (connection refused: connect ECONNREFUSED 10.0.0.1:5432)',
    );
    expect(e.code).toBe('UNREACHABLE');
  });
});

describe('connectTimeoutMs (libpq connect_timeout, seconds)', () => {
  it.each([
    ['postgres://u@h/db', DEFAULT_CONNECT_TIMEOUT_MS],
    ['postgres://u@h/db?connect_timeout=3', 3000],
    ['postgres://u@h/db?sslmode=disable&connect_timeout=1', 1000],
    // 0: as long as the operating system waits (libpq's meaning).
    ['postgres://u@h/db?connect_timeout=0', 0],
    ['postgres://u@h/db?connect_timeout=soon', DEFAULT_CONNECT_TIMEOUT_MS],
    ['not a url', DEFAULT_CONNECT_TIMEOUT_MS],
  ])('%s -> %i ms', (url, ms) => expect(connectTimeoutMs(url)).toBe(ms));

  it("pg's connect timeout is said with the time waited", () => {
    const url = 'postgres://u@h/db?connect_timeout=2';
    expect(connectFailure(new Error('timeout expired'), url)).toBe('no answer within 2 s');
    expect(connectFailure(new Error('Connection terminated due to connection timeout'), url)).toBe(
      'no answer within 2 s',
    );
    expect(connectFailure(new Error('Connection terminated unexpectedly'), url)).toBeUndefined();
  });
});
