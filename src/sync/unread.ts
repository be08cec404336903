/**
 * Children of a listed execution that could not be read (404, or a response that does not match
 * the spec and will not on a retry): each is quarantined in geo.sync_rejects with the endpoint,
 * parameters, reason and raw payload, and counted. The execution itself is written from its list
 * item and its stored child rows are kept (addToBatch marks them `kept`). An execution deleted
 * upstream (every read 404, prompt/detail too) is only counted and logged.
 */
import type { RejectedRecord } from '../api/client.ts';
import { InvalidResponseError } from '../api/errors.ts';
import type { EndpointId } from '../api/endpoints.ts';
import type { ExecutionBundle } from '../extract/execution.ts';
import type { RunContext } from './context.ts';

/** Reject reason of a child that answered 404 while its execution is listed. */
export const CHILD_NOT_FOUND = 'child_not_found';

export function quarantineUnread(ctx: RunContext, b: ExecutionBundle, log: RunContext['logger']): void {
  const id = b.item.prompt_task_id;
  if (b.goneUpstream) {
    // Deleted upstream while still listed: no record is bad, and nothing the user can change, so
    // nothing is quarantined and the run is not partial for it. Counted, logged, rows kept.
    ctx.counters.goneExecutions++;
    log.warn(
      { prompt_task_id: id, children: b.unread.map((u) => u.child) },
      'listed execution answers 404 on its own endpoints (deleted upstream): stored rows kept until no longer listed',
    );
    return;
  }
  for (const u of b.unread) {
    const e = u.error;
    const record: RejectedRecord = {
      endpoint: e.endpoint as EndpointId,
      params: { ...(e.params ?? { prompt_task_id: id }) },
      reason: u.kind === 'not_found' ? CHILD_NOT_FOUND : `invalid_child: ${e.message}`,
      raw:
        u.kind === 'invalid' && e instanceof InvalidResponseError
          ? e.raw
          : // A body over the size cap has no status worth naming and was never kept.
            {
              prompt_task_id: id,
              child: u.child,
              status: e.status ?? null,
              message: e.serverMessage ?? null,
            },
    };
    ctx.reject(record);
    if (u.kind === 'not_found') ctx.counters.childrenNotFound++;
    else ctx.counters.childrenInvalid++;
    log.warn(
      {
        prompt_task_id: id,
        child: u.child,
        kind: u.kind,
        endpoint: e.endpoint,
        code: e.code,
        reason: record.reason,
      },
      'child could not be read: quarantined, its stored rows kept',
    );
  }
}
