/**
 * A service that a setting names cannot be reached: the connection was refused, the host name does
 * not resolve, or nothing answered in time. The message names the setting as the user gave it
 * (`GEO_WAREHOUSE (warehouse)`, `--warehouse (warehouse)`, `--config geo.json: warehouse`), what
 * was tried (URLs with their password masked) and why, in one line. The command exits 1, a
 * failure: the service may be down or not up yet, so a service manager may try again, where a
 * setting that cannot work (exit 2) would only fail again. A host name that does not resolve is
 * counted as unreachable too: a typo and a DNS server (or a container) that is not up yet look the
 * same from here.
 */
import { maskUrlPassword } from './redact.ts';

export class UnreachableError extends Error {
  readonly code = 'UNREACHABLE' as const;

  constructor(
    /** Where the address came from, e.g. `GEO_LOCK_URL (lockUrl)`. */
    readonly setting: string,
    /** What was tried, e.g. `PostgreSQL at postgres://geo:***@db/geo`. */
    readonly target: string,
    /** Why, e.g. `connection refused: connect ECONNREFUSED 127.0.0.9:5499`. */
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(maskUrlPassword(`${setting}: cannot reach ${target} (${reason})`), options);
    this.name = 'UnreachableError';
  }
}

/** Socket and DNS codes that mean nothing could be reached there, in words. */
const UNREACHABLE_CODES: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'host name lookup failed (DNS)',
  EHOSTUNREACH: 'no route to host',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
};

/** The errors behind `e`: itself, its causes, an AggregateError's members (Node's dual-stack connect). */
function* chain(e: unknown, depth = 0): Generator<unknown> {
  if (depth > 5 || e === null || e === undefined) return;
  yield e;
  if (e instanceof AggregateError) for (const x of e.errors) yield* chain(x, depth + 1);
  if (e instanceof Error && e.cause !== undefined) yield* chain(e.cause, depth + 1);
}

/**
 * Why `e` means its service could not be reached (`connection refused: connect ECONNREFUSED
 * 127.0.0.9:5499`), or undefined when it is another failure (a refused password, a bad answer).
 */
export function unreachableReason(e: unknown): string | undefined {
  let found: { words: string; detail: string } | undefined;
  for (const x of chain(e)) {
    const code = (x as { code?: unknown }).code;
    const words = typeof code === 'string' ? UNREACHABLE_CODES[code] : undefined;
    if (!words) continue;
    // The first error that says it in words (an AggregateError's own message is empty).
    if (x instanceof Error && x.message) return `${words}: ${x.message.split('\n')[0]}`;
    found ??= { words, detail: code as string };
  }
  return found && `${found.words}: ${found.detail}`;
}
