/**
 * Validation of a response the moment it arrives. Two levels, because they fail differently:
 *
 * - The body and its envelope or page object (`decodeBody`): if these are wrong, nothing in the
 *   answer can be trusted, so the whole call fails with `InvalidResponseError` naming the first
 *   bad field path. Not JSON at all is retryable (truncated or garbled); JSON of the wrong shape
 *   is not (the server would send it again).
 * - The items of a list (`decodeItems`): one bad record must not cost its page, so items are
 *   checked one by one; a bad one goes to `onReject` with its raw value and the reason, the rest
 *   are returned. Nothing is dropped silently: without `onReject` the bad item throws.
 */
import type { z } from 'zod';
import { cutBelow, jsonDepthExceeds } from '../json-text.ts';
import type { EndpointId } from './endpoints.ts';
import { InvalidResponseError } from './errors.ts';

/** A list item that failed validation, handed to `onReject` for quarantine. */
export interface RejectedRecord {
  /** `"GET /api/v2/geo/task/results"` */
  endpoint: EndpointId;
  /** The request's parameters (never a secret). */
  params: Record<string, unknown>;
  /** Zod issue path (inside the item) and message, e.g. `prompt_task_id: Invalid input: ...`. */
  reason: string;
  /** The item as received. */
  raw: unknown;
}

export interface DecodeContext {
  readonly endpoint: EndpointId;
  readonly params: Readonly<Record<string, unknown>>;
  readonly onReject?: ((r: RejectedRecord) => void) | undefined;
  /** Removes secrets from a payload before it is kept on an error (a login answer holds a token). */
  readonly redact?: ((raw: unknown) => unknown) | undefined;
}

/** How much of a non-JSON body is kept on the error: enough to recognise a proxy's error page. */
const MAX_RAW_TEXT = 4096;

export function parseJson(text: string, ctx: DecodeContext): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new InvalidResponseError({
      endpoint: ctx.endpoint,
      params: ctx.params,
      reason: text.trim() === '' ? 'empty body, expected JSON' : 'body is not JSON',
      raw: text.length > MAX_RAW_TEXT ? `${text.slice(0, MAX_RAW_TEXT)}...` : text,
      retryable: true,
      cause: e,
    });
  }
}

/** Validates the whole body (envelope, page object); a mismatch fails the call, not retryable. */
export function decodeBody<S extends z.ZodType>(schema: S, body: unknown, ctx: DecodeContext): z.output<S> {
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  throw new InvalidResponseError({
    endpoint: ctx.endpoint,
    params: ctx.params,
    field: issue ? formatPath(issue.path) || '(body)' : '(body)',
    reason: issue?.message ?? 'does not match the schema',
    raw: ctx.redact ? ctx.redact(body) : body,
    retryable: false,
  });
}

/**
 * Validates list items one by one. `at` is where the list sits in the body (`data.data`), so an
 * error without `onReject` names the full path (`data.data[3].prompt_task_id`).
 */
export function decodeItems<S extends z.ZodType>(
  schema: S,
  items: readonly unknown[],
  at: string,
  ctx: DecodeContext,
  /** Items stored whole as JSON: one nested deeper than this is refused (json-text.ts). */
  opts: { maxDepth?: number } = {},
): z.output<S>[] {
  const out: z.output<S>[] = [];
  items.forEach((item, i) => {
    const tooDeep = opts.maxDepth !== undefined && jsonDepthExceeds(item, opts.maxDepth);
    const r = tooDeep ? null : schema.safeParse(item);
    if (r?.success) {
      out.push(r.data);
      return;
    }
    const issue = r?.error.issues[0];
    const inner = issue ? formatPath(issue.path) : '';
    const message = tooDeep
      ? `nested deeper than ${opts.maxDepth} levels, the deepest JSON geo-sync stores`
      : (issue?.message ?? 'does not match the schema');
    if (tooDeep) item = cutBelow(item, opts.maxDepth!);
    if (!ctx.onReject) {
      throw new InvalidResponseError({
        endpoint: ctx.endpoint,
        params: ctx.params,
        field: `${at}[${i}]${inner ? `.${inner}` : ''}`,
        reason: `${message} (no onReject handler to quarantine the item)`,
        raw: item,
        retryable: false,
      });
    }
    ctx.onReject({
      endpoint: ctx.endpoint,
      params: { ...ctx.params },
      reason: inner ? `${inner}: ${message}` : message,
      raw: item,
    });
  });
  return out;
}

/** `['data', 'data', 3, 'rank_details', 0, 'position']` -> `data.data[3].rank_details[0].position`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let s = '';
  for (const p of path) {
    if (typeof p === 'number') s += `[${p}]`;
    else s += s === '' ? String(p) : `.${String(p)}`;
  }
  return s;
}

/** All issues of a zod error on one line, `path: message; ...` (for parameter problems). */
export function describeIssues(error: z.ZodError): string {
  return error.issues.map((i) => `${formatPath(i.path) || '(params)'}: ${i.message}`).join('; ');
}
