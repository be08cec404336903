/**
 * Per-run reads outside the daily hierarchy: monitoring task configuration (legacy detail),
 * the latest site diagnosis of each project (GET only: it never triggers one), the balance and
 * the deduction records (whole history the first time, then from the last day seen).
 */
import type { EndpointId } from '../api/endpoints.ts';
import { InvalidResponseError, isGeoApiError } from '../api/errors.ts';
import type { Scope } from '../extract/scope.ts';
import { toBalanceSnapshotRow, toDeductionRow, toSiteDiagnosisRow } from '../transform/account.ts';
import { fromLegacyDetail } from '../transform/hierarchy.ts';
import type {
  DeductionRow,
  MonitoringTaskConfigRow,
  PlatformTaskPromptsRow,
  SiteDiagnosisRow,
} from '../transform/rows.ts';
import { addDays } from '../transform/time.ts';
import type { RunContext } from './context.ts';
import {
  balanceOrigin,
  deductionOrigin,
  platformPromptsOrigin,
  siteDiagnosisOrigin,
  taskConfigOrigin,
} from './origins.ts';
import { isFatal } from './unit.ts';

/** Days re-read before the newest deduction already stored: records can land late. */
export const DEDUCTION_OVERLAP_DAYS = 2;

const tolerated = (e: unknown) => isGeoApiError(e) && (e.code === 'NOT_FOUND' || e.code === 'FORBIDDEN');

/**
 * A single record read outside the daily walk (a task's configuration, a diagnosis, the balance)
 * that does not match its schema (say, a created_at that is no timestamp, an amount NUMERIC(18,4)
 * would round): one bad record, quarantined with its reason and raw payload; the run goes on and
 * ends partial. True when `e` was such a record.
 */
function quarantined(ctx: RunContext, e: unknown): boolean {
  if (!(e instanceof InvalidResponseError) || e.retryable) return false;
  ctx.reject({ endpoint: e.endpoint as EndpointId, params: { ...e.params }, reason: e.message, raw: e.raw });
  return true;
}

export async function syncTaskConfig(ctx: RunContext, scope: Scope): Promise<void> {
  const configs: MonitoringTaskConfigRow[] = [];
  const prompts: PlatformTaskPromptsRow[] = [];
  await Promise.all(
    scope.monitoringTasks.map(async (t) => {
      try {
        const { config, platformPrompts } = fromLegacyDetail(
          await ctx.api.legacyMonitoringTaskDetail(t.project_id),
        );
        configs.push(config);
        prompts.push(...platformPrompts);
      } catch (e) {
        if (quarantined(ctx, e)) return;
        if (!tolerated(e)) throw e;
        ctx.logger.warn({ project_id: t.project_id, err: e }, 'monitoring task configuration not readable');
      }
    }),
  );
  await ctx.writeRecords(configs, (rows) => ctx.warehouse.updateMonitoringTaskConfig(rows), taskConfigOrigin);
  await ctx.writeRecords(
    prompts,
    (rows) => ctx.warehouse.updatePlatformTaskPrompts(rows),
    platformPromptsOrigin,
  );
}

export async function syncDiagnoses(ctx: RunContext, customers: readonly number[]): Promise<void> {
  const rows: SiteDiagnosisRow[] = [];
  await Promise.all(
    customers.map(async (customerId) => {
      try {
        const d = await ctx.api.siteDiagnosis(customerId);
        const row = toSiteDiagnosisRow(customerId, d, ctx.now());
        if (row) rows.push(row);
        else ctx.counters.diagnosesNotStarted++;
      } catch (e) {
        if (quarantined(ctx, e)) return;
        // Diagnosis is limited to the project owner or an administrator (spec 5.6): a key that
        // may read the monitoring data may still get 403/404 here. Not fatal for the sync.
        if (isFatal(e) && isGeoApiError(e) && e.code === 'UNAUTHORIZED') throw e;
        if (!tolerated(e)) throw e;
        ctx.logger.warn({ customer_id: customerId, err: e }, 'site diagnosis not readable');
      }
    }),
  );
  ctx.addRows(
    'site_diagnoses',
    await ctx.writeRecords(rows, (r) => ctx.warehouse.upsertSiteDiagnoses(r), siteDiagnosisOrigin),
  );
}

export async function syncFinance(ctx: RunContext): Promise<void> {
  const balance = await ctx.api.balance().catch((e: unknown) => {
    if (quarantined(ctx, e)) return null;
    throw e;
  });
  if (balance) {
    ctx.addRows(
      'balance_snapshots',
      await ctx.writeRecords(
        [toBalanceSnapshotRow(balance, ctx.now(), ctx.runId)],
        ([row]) => ctx.warehouse.insertBalanceSnapshot(row!),
        balanceOrigin,
      ),
    );
  }

  const latest = await ctx.warehouse.latestDeductionDay();
  const params = latest ? { start_date: addDays(latest, -DEDUCTION_OVERLAP_DAYS) } : {};
  let batch: DeductionRow[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    ctx.addRows(
      'deductions',
      await ctx.writeRecords(batch, (rows) => ctx.warehouse.upsertDeductions(rows), deductionOrigin),
    );
    batch = [];
  };
  for await (const d of ctx.api.deductions(params)) {
    batch.push(toDeductionRow(d));
    if (batch.length >= 1000) await flush();
  }
  await flush();
  await ctx.flushRejects();
}
