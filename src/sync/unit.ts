/**
 * One unit of work: a platform task on one day. Reads every page of task/results, each
 * execution's children, transforms, and writes in bounded batches; then closes the unit
 * (deletes executions no longer listed, records the checkpoint) in one transaction, only when
 * every execution of the unit was written. A failed unit leaves no checkpoint and is redone by
 * the next run; batches already written are whole (each parent with its children).
 */
import { isGeoApiError } from '../api/errors.ts';
import { fetchExecution, type ExecutionBundle } from '../extract/execution.ts';
import { prefetch } from '../extract/prefetch.ts';
import { unitKey, type Unit } from './planner.ts';
import { addToBatch, emptyBatch } from './batch.ts';
import { executionWindow, type RunContext } from './context.ts';
import { quarantineUnread } from './unread.ts';
import { fingerprintOf } from './fingerprint.ts';
import { needsCrossCheck, readCrossCheck, type CrossCheck } from './cross-check.ts';
import type { StoredUnitExecutions } from '../load/warehouse.ts';

export type UnitOutcome = { status: 'done'; executions: number } | { status: 'failed'; error: string };

/**
 * A unit whose reading is over. Its outcome settles when its checkpoint commits (or fails): the
 * caller moves on to the next unit meanwhile, so many units share one group-commit transaction.
 */
export interface ReadUnit {
  outcome: Promise<UnitOutcome>;
}

const settled = (outcome: UnitOutcome): ReadUnit => ({ outcome: Promise.resolve(outcome) });

/**
 * Errors after which nothing else in the run can succeed: the key itself is refused. A 401 always
 * is; a 403 inside a unit may be the key's (a blocked account) or only that platform task's
 * (listed, yet not readable by this key): `keyRefusal` asks the API which (see RunContext).
 */
export function isFatal(e: unknown): boolean {
  return isGeoApiError(e) && e.code === 'UNAUTHORIZED';
}

export function isForbidden(e: unknown): boolean {
  return isGeoApiError(e) && e.code === 'FORBIDDEN';
}

type Settled =
  { ok: true; bundle: ExecutionBundle; fingerprint: string } | { ok: false; id: number; error: unknown };

export async function runUnit(ctx: RunContext, unit: Unit): Promise<ReadUnit> {
  const { api, config, logger } = ctx;
  const log = logger.child({ task_id: unit.task_id, date: unit.date });
  const seen = new Set<number>();
  // How this run reads children: the bundle's options, and part of each fingerprint.
  const reading = {
    legacySources: config.enrich.legacySources,
    executionTimes: config.enrich.executionTimes,
  };
  // What the listing says it holds (its last page's total), kept with the checkpoint for `check`.
  let listedTotal: number | null = null;
  const window: Promise<Settled>[] = [];
  const maxInFlight = executionWindow(config.batchSize);
  const slots = ctx.executionSlots;
  let batch = emptyBatch();
  let failed = 0;
  let fatal: unknown = null;
  /** A 403 on a child: the key's (fatal) or this task's (the unit fails), asked at the end. */
  let fatalCandidate: unknown = null;

  // The cross-check (task/prompts), asked once the listing is read and only where a deletion is
  // at stake (needsCrossCheck).
  let crossCheck: Promise<CrossCheck> | null = null;

  // The unit's stored executions, read while the first page is on its way: for change detection
  // the fingerprints of those stored with complete children (off with `changeDetection: false`;
  // a run's --reread passes a config saying so), for the cross-check every stored id.
  const stored: Promise<StoredUnitExecutions> | null =
    config.changeDetection || config.enrich.crossCheck ? ctx.storedExecutions(unit) : null;
  stored?.catch(() => undefined);

  const flush = async () => {
    if (batch.executions.length === 0) return;
    const b = batch;
    batch = emptyBatch();
    await ctx.writer.add(unit.task_id, unit.date, b);
  };

  const settleOne = async (s: Settled) => {
    slots.release();
    if (s.ok) {
      // A listed execution is written from its list item even when a child could not be read:
      // that child is quarantined and its stored rows kept. Executions leave the warehouse only
      // through the unit's "no longer listed" rule.
      quarantineUnread(ctx, s.bundle, log);
      ctx.noteRankRawValues(s.bundle.item.prompt_task_id, s.bundle.item.rank_details);
      addToBatch(batch, s.bundle, s.fingerprint);
      if (batch.executions.length >= config.batchSize) await flush();
      return;
    }
    if (isFatal(s.error)) fatal ??= s.error;
    if (isForbidden(s.error)) fatalCandidate ??= s.error;
    failed++;
    ctx.counters.failedExecutions++;
    log.error({ prompt_task_id: s.id, err: s.error }, 'execution could not be read');
  };

  try {
    // Awaited once the first page is in: the page's request never waits for the warehouse.
    let unchanged: Map<number, string> | null | undefined;
    for await (const page of prefetch(api.resultPages(unit.task_id, unit.date))) {
      listedTotal = page.total;
      if (ctx.signal?.aborted) throw ctx.signal.reason ?? new Error('aborted');
      unchanged ??= stored && config.changeDetection ? (await stored).complete : null;
      for (const item of page.items) {
        const again = seen.has(item.prompt_task_id);
        seen.add(item.prompt_task_id);
        // Hashed once: compared here, written with the execution's rows when it is read.
        const fingerprint = fingerprintOf(item, reading);
        // Listed twice: offset paging shifted while its answer was saved again. The copy listed
        // last wins whole (its page was served later): it is always read, whatever the stored
        // fingerprint says (an earlier, older copy may have been read), and its rows replace the
        // earlier copy's in the batch (addToBatch), the group commit (merged) or the warehouse.
        if (again) {
          ctx.counters.executionsListedTwice++;
          log.warn(
            { prompt_task_id: item.prompt_task_id },
            'execution listed twice by task/results (the list shifted between pages): the copy listed last is read and kept whole',
          );
        }
        // Unchanged since read whole: no child request, and its stored rows are left as they are
        // (their synced_at stays). It still counts as listed for the unit's deletion rule.
        else if (unchanged && unchanged.get(item.prompt_task_id) === fingerprint) {
          ctx.counters.executionsUnchanged++;
          continue;
        }
        ctx.counters.executionsRead++;
        // A slot of the run's window: settle this unit's own oldest first (which frees one), and
        // wait for other units only with nothing of its own in flight, so no unit waits holding slots.
        while (!slots.tryAcquire()) {
          if (window.length > 0) await settleOne(await window.shift()!);
          else await slots.released();
        }
        window.push(
          fetchExecution(api, item, reading, ctx.shortcuts).then(
            (bundle): Settled => ({ ok: true, bundle, fingerprint }),
            (error: unknown): Settled => ({ ok: false, id: item.prompt_task_id, error }),
          ),
        );
        while (window.length > maxInFlight) await settleOne(await window.shift()!);
        if (fatal) throw fatal;
      }
    }
    // Asked while the unit's last executions are read.
    if (stored && config.enrich.crossCheck) {
      const listed = { seen, rejected: ctx.rejectedIdsOf(unitKey(unit)), total: listedTotal };
      if (needsCrossCheck(listed, (await stored).ids)) crossCheck = readCrossCheck(api, unit);
      else ctx.counters.notAsked.crossChecks++;
    }
    while (window.length > 0) await settleOne(await window.shift()!);
    if (fatal) throw fatal;
    if (ctx.signal?.aborted) throw ctx.signal.reason ?? new Error('aborted');
    await flush();
  } catch (e) {
    // Let in-flight work settle so nothing of this unit is still running when it is reported.
    await Promise.allSettled(window);
    slots.release(window.length);
    await crossCheck;
    if (isFatal(e)) throw e;
    // A 403 of the key ends the run; a 403 on this task's data fails this unit only.
    if (isForbidden(e) || isForbidden(fatalCandidate)) {
      const refusal = await ctx.keyRefusal();
      if (refusal) throw refusal;
    }
    log.error({ err: e }, 'unit failed');
    return settled({ status: 'failed', error: e instanceof Error ? e.message : String(e) });
  }
  if (fatalCandidate) {
    const refusal = await ctx.keyRefusal();
    if (refusal) {
      await crossCheck;
      throw refusal;
    }
  }
  if (failed > 0) return settled({ status: 'failed', error: `${failed} execution(s) could not be read` });

  for (const id of ctx.rejectedIdsOf(unitKey(unit))) seen.add(id);
  const deleteUnlisted = await verifyListing(crossCheck, seen, ctx, unit, log);
  // Committed in the same transaction as the unit's last rows (or a later one), never alone
  // before them; refused if any of its rows failed to commit.
  const committed = ctx.writer.complete({
    task_id: unit.task_id,
    date: unit.date,
    seenPromptTaskIds: [...seen],
    deleteUnlisted,
    checkpoint: {
      task_id: unit.task_id,
      date: unit.date,
      run_id: ctx.runId,
      finished_at: ctx.now().toISOString(),
      executions: seen.size,
      listed_total: listedTotal,
    },
  });
  return {
    outcome: committed.then(
      async (): Promise<UnitOutcome> => {
        log.info({ executions: seen.size }, 'unit done');
        return { status: 'done', executions: seen.size };
      },
      (e: unknown): UnitOutcome => {
        log.error({ err: e }, 'unit failed: its rows could not be committed');
        return { status: 'failed', error: e instanceof Error ? e.message : String(e) };
      },
    ),
  };
}

/**
 * Offset paging under a list that changes between pages can skip a live execution, which the
 * unit's completion would then delete as "no longer listed". Where that can happen (a stored
 * execution unlisted, or a listing short of its total: needsCrossCheck), the unit's task/prompts
 * list (one full array, not paged) is read: its IDs count as seen too, and if it disagrees with
 * what task/results returned, the unit deletes nothing this time (its rows and checkpoint are
 * still written); the disagreement is logged and counted. Not read (null): the listing is whole
 * and holds every stored execution, so the completion deletes nothing. Without the cross-check
 * (GEO_ENRICH_CROSS_CHECK=false) deletion trusts task/results alone; if task/prompts could not
 * be read, nothing is deleted.
 */
async function verifyListing(
  crossCheck: Promise<CrossCheck> | null,
  seen: Set<number>,
  ctx: RunContext,
  unit: Unit,
  log: RunContext['logger'],
): Promise<boolean> {
  if (!crossCheck) return true;
  const listed = await crossCheck;
  if ('error' in listed) {
    log.warn({ err: listed.error }, 'task/prompts could not be read: nothing deleted for this unit');
    return false;
  }
  const ids = listed.ids;
  // Items task/prompts served but the client quarantined are still listed upstream.
  for (const id of ctx.rejectedIdsOf(unitKey(unit))) ids.add(id);
  const onlyPrompts = [...ids].filter((id) => !seen.has(id));
  const onlyResults = [...seen].filter((id) => !ids.has(id));
  for (const id of ids) seen.add(id);
  if (onlyPrompts.length === 0 && onlyResults.length === 0) return true;
  ctx.counters.crossCheckMismatches++;
  ctx.counters.unitsListMismatch++;
  log.warn(
    {
      listed: ids.size,
      read: seen.size - onlyPrompts.length,
      onlyInPrompts: onlyPrompts.slice(0, 20),
      onlyInResults: onlyResults.slice(0, 20),
    },
    'task/results and task/prompts disagree: nothing deleted for this unit',
  );
  return false;
}
