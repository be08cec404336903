/** `geo-sync whoami` and `geo-sync diagnose`. */
import { sleep } from '../../abort.ts';
import { isGeoApiError } from '../../api/errors.ts';
import type { SiteDiagnosis } from '../../api/schemas/diagnosis.ts';
import { createApi, openMigratedWarehouse, UsageError } from '../../app.ts';
import { toSiteDiagnosisRow } from '../../transform/account.ts';
import { type CommonOpts, stopSignal } from '../common.ts';
import { configFrom, loggerFor } from './common.ts';
import { withApi } from './with-api.ts';

/** `whoami`. */
export async function whoami(opts: CommonOpts): Promise<void> {
  await withApi(opts, async (api) => {
    const [user, balance] = await bothOrDecisive(api.client.user(), api.client.balance());
    process.stdout.write(
      [
        `user:       ${user.name} <${user.email}> (id ${user.id}, uuid ${user.uuid})`,
        `balance:    ${balance.amount}`,
        `last login: ${user.last_login_time}`,
        `created:    ${user.created_at}`,
        user.block_reason ? `BLOCKED:    ${user.block_reason}` : '',
      ]
        .filter(Boolean)
        .join('\n') + '\n',
    );
  });
}

/**
 * Both answers, or the more telling failure: a refusal (401, 403: the key or account is wrong)
 * as soon as it comes, else, once both have settled, a transient failure (5xx, timeout: another
 * try would likely get past it). Promise.all reported whichever failed first, so a wrong key
 * could be shown as a server hiccup.
 */
async function bothOrDecisive<A, B>(a: Promise<A>, b: Promise<B>): Promise<[A, B]> {
  const refused = new Promise<never>((_resolve, reject) => {
    for (const p of [a, b]) p.catch((e: unknown) => isGeoApiError(e) && !e.retryable && reject(e));
  });
  const [ra, rb] = await Promise.race([Promise.allSettled([a, b] as const), refused]);
  if (ra.status === 'rejected') throw ra.reason;
  if (rb.status === 'rejected') throw rb.reason;
  return [ra.value, rb.value];
}

function describeDiagnosis(d: SiteDiagnosis): string {
  const parts = [`status ${d.status}`];
  if (d.diagnosis_id !== null && d.diagnosis_id !== undefined) parts.push(`diagnosis_id ${d.diagnosis_id}`);
  if (d.progress_percent !== null && d.progress_percent !== undefined) parts.push(`${d.progress_percent}%`);
  if (d.current_step) parts.push(`step: ${d.current_step}`);
  if (d.url) parts.push(`url ${d.url}`);
  if (d.is_current_url === false) parts.push('(the project URL changed since: consider --force-refresh)');
  if (d.result_ready) parts.push(`result ready, composite score ${d.result?.composite_score ?? 'n/a'}`);
  if (d.status === 'failed')
    parts.push(`error: ${typeof d.error === 'string' ? d.error : JSON.stringify(d.error ?? null)}`);
  return parts.join(', ');
}

/** The spec's meanings of the diagnosis errors, for a person at a terminal. */
function explainDiagnosisError(e: unknown, customerId: number): Error {
  if (!isGeoApiError(e)) return e as Error;
  switch (e.code) {
    case 'FORBIDDEN':
      return new Error(
        `project ${customerId}: 403 forbidden: the account is blocked, or the key is not the project owner's or an administrator's (web sharing does not grant API permission)`,
      );
    case 'NOT_FOUND':
      return new Error(
        `project ${customerId}: 404: no such page project, or this key may not access it (use the page project ID, the number after /partner/)`,
      );
    case 'BAD_REQUEST':
      return new Error(
        `project ${customerId}: ${e.status ?? 422} refused by the server: ${e.serverMessage ?? e.message}`,
      );
    default:
      return e;
  }
}

export interface DiagnoseOpts extends CommonOpts {
  customer: number;
  forceRefresh: boolean;
  wait: boolean;
  pollSeconds: number;
  timeoutMinutes: number;
}

/** `diagnose`. */
export async function diagnose(opts: DiagnoseOpts): Promise<number> {
  const config = configFrom(opts);
  const logger = loggerFor(config);
  const signal = stopSignal(logger);
  const api = createApi(config, logger, { signal });
  const warehouse = await openMigratedWarehouse(config, logger, {
    signal,
    interruptible: true,
  }).catch(async (e: unknown) => {
    await api.close();
    throw e;
  });
  try {
    let d: SiteDiagnosis;
    try {
      const started = await api.client.startSiteDiagnosis({
        project_id: opts.customer,
        ...(opts.forceRefresh ? { force_refresh: true } : {}),
      });
      d = started.diagnosis;
      process.stdout.write(
        `${started.httpStatus === 202 || d.created ? 'new diagnosis created' : 'existing diagnosis reused'}: ${describeDiagnosis(d)}\n`,
      );
      const deadline = Date.now() + opts.timeoutMinutes * 60_000;
      while (opts.wait && !d.result_ready && d.status !== 'failed') {
        if (Date.now() > deadline)
          throw new UsageError(
            `gave up waiting after ${opts.timeoutMinutes} minutes; run again with --wait to keep polling`,
          );
        await sleep(opts.pollSeconds * 1000, signal);
        d = await api.client.getSiteDiagnosis({ project_id: opts.customer });
        process.stdout.write(`  ${new Date().toISOString()} ${describeDiagnosis(d)}\n`);
      }
    } catch (e) {
      throw explainDiagnosisError(e, opts.customer);
    }
    const row = toSiteDiagnosisRow(opts.customer, d, new Date());
    if (row) await warehouse.upsertSiteDiagnoses([row]);
    process.stdout.write(`stored in geo.site_diagnoses (${warehouse.description})\n`);
    return d.status === 'failed' ? 1 : 0;
  } finally {
    await warehouse.close();
    await api.close();
  }
}
