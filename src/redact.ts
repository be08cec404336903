/**
 * Keeping secrets out of logs, error messages and stored payloads: one registry of secret
 * values, one masker for passwords in URLs, one scrubber for values of any shape (errors with
 * their cause chains, arrays, context objects), used by the logger, the command line's error
 * line and the API client alike.
 */

export const REDACTED = '[REDACTED]';

/** Member names whose values are secrets wherever they appear. */
export const SECRET_FIELD =
  /^(token|access_token|refresh_token|api_?key|password|passwd|secret|client_secret|authorization|cookie)$/i;

const secretValues = new Set<string>();
/** Longest first: a secret that contains another is replaced whole, not around the shorter one. */
let ordered: string[] = [];

/**
 * Registers a secret value so it is scrubbed from every log line and error line. Any length
 * counts (a short password is still a password); the empty string and blanks only are no secret
 * (replacing them would cut every line apart, the error saying the key is blank first), nor is
 * anything that is not text.
 */
export function registerSecret(value: unknown): void {
  if (typeof value !== 'string' || value.trim() === '' || secretValues.has(value)) return;
  secretValues.add(value);
  ordered = byLengthDescending(secretValues);
}

function byLengthDescending(values: Iterable<string>): string[] {
  return [...values].filter((s) => s.trim() !== '').sort((a, b) => b.length - a.length);
}

/** `text` with each of `secrets` replaced by [REDACTED], longest first (blank ones ignored). */
export function scrubWith(text: string, secrets: Iterable<string>): string {
  return replaceEach(text, byLengthDescending(secrets));
}

function replaceEach(text: string, longestFirst: readonly string[]): string {
  let out = text;
  for (const s of longestFirst) if (out.includes(s)) out = out.split(s).join(REDACTED);
  return out;
}

/** `text` with every registered secret replaced and every password in a URL masked. */
export function scrubSecrets(text: string): string {
  return maskUrlPassword(replaceEach(text, ordered));
}

/**
 * `scheme://user:password@host` anywhere in a text; the password runs to the last `@` of the
 * authority, so a password with a raw `@` in it is masked whole.
 */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/?#@]*):[^\s/?#]*@/gi;
/** A `password` query parameter (libpq and JDBC style URLs). */
const URL_PASSWORD_PARAM = /([?&]password=)[^&\s#]*/gi;

/**
 * The one masker for passwords in URLs: `postgres://u:secret@h/db` -> `postgres://u:***@h/db`,
 * `...?password=secret` -> `...?password=***`. Works on any text, so URLs inside error messages
 * are masked too; text without a URL is returned as it is.
 */
export function maskUrlPassword(text: string): string {
  return text.replace(URL_USERINFO, '$1:***@').replace(URL_PASSWORD_PARAM, '$1***');
}

/** The passwords in the URLs of `text`, decoded, for registering as secrets. */
export function urlPasswords(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/\b[a-z][a-z0-9+.-]*:\/\/[^\s:/?#@]*:([^\s/?#]*)@/gi))
    if (m[1]) out.push(m[1], safeDecode(m[1]));
  for (const m of text.matchAll(/[?&]password=([^&\s#]*)/gi)) if (m[1]) out.push(m[1], safeDecode(m[1]));
  return [...new Set(out)];
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** Past this depth a value is cut (with a marker), never passed on unscrubbed. */
const MAX_DEPTH = 10;

/**
 * A copy of any value safe to log: strings scrubbed, secret-named members redacted, errors
 * turned into plain objects that keep their evidence (class, code, message, stack, own context
 * such as endpoint and status, the cause chain, an AggregateError's errors), at any depth.
 */
export function scrubDeep(value: unknown): unknown {
  return scrub(value, 0, new Set());
}

function scrub(value: unknown, depth: number, path: Set<object>): unknown {
  if (typeof value === 'string') return scrubSecrets(value);
  if (typeof value === 'bigint') return value.toString();
  if (value === null || typeof value !== 'object') return value;
  if (path.has(value)) return '[Circular]';
  if (depth > MAX_DEPTH) return '[Truncated]';
  path.add(value);
  try {
    if (value instanceof Error) return scrubError(value, depth, path);
    if (Array.isArray(value)) return value.map((v) => scrub(v, depth + 1, path));
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') return scrub(toJSON.call(value), depth + 1, path);
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value))
      out[k] = SECRET_FIELD.test(k) && v !== null && v !== undefined ? REDACTED : scrub(v, depth + 1, path);
    return out;
  } finally {
    path.delete(value);
  }
}

/** Past this size a response payload kept on an error is summarized in logs, not copied whole. */
const MAX_RAW_CHARS = 2000;

/** An error's `raw` response payload: kept when small, else its size (a page can be megabytes). */
function rawPayload(v: unknown, depth: number, path: Set<object>): unknown {
  let size: number;
  try {
    size = typeof v === 'string' ? v.length : (JSON.stringify(v)?.length ?? 0);
  } catch {
    size = Infinity;
  }
  return size <= MAX_RAW_CHARS ? scrub(v, depth + 1, path) : `[payload of ${size} characters omitted]`;
}

function scrubError(e: Error, depth: number, path: Set<object>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  // Own context first (code, status, endpoint, params, ...), then the fields every error has.
  for (const [k, v] of Object.entries(e)) {
    if (k === 'cause' || k === 'errors') continue;
    if (SECRET_FIELD.test(k) && v !== null && v !== undefined) out[k] = REDACTED;
    else if (k === 'raw') out[k] = rawPayload(v, depth, path);
    else out[k] = scrub(v, depth + 1, path);
  }
  const type = e.constructor?.name || e.name;
  out.type = type;
  if (e.name !== type) out.name = scrubSecrets(String(e.name));
  out.message = scrubSecrets(e.message);
  const code = (e as { code?: unknown }).code;
  if (code !== undefined) out.code = scrub(code, depth + 1, path);
  if (e.stack) out.stack = scrubSecrets(e.stack);
  if (e.cause !== undefined) out.cause = scrub(e.cause, depth + 1, path);
  if (e instanceof AggregateError) out.errors = scrub(e.errors, depth + 1, path);
  return out;
}
