/** The human summary a run ends with. */
import type { RunSummary } from './run.ts';

export function formatSummary(s: RunSummary): string {
  const c = s.counters;
  const seconds = (Date.parse(s.finishedAt) - Date.parse(s.startedAt)) / 1000;
  const dates =
    s.dates.length === 1
      ? s.dates[0]
      : `${s.dates[0]} .. ${s.dates[s.dates.length - 1]} (${s.dates.length} days)`;
  const lines = [
    `run ${s.runId}: ${s.status.toUpperCase()} in ${seconds.toFixed(1)} s, dates ${dates}`,
    `scope: ${s.scope.customers} projects, ${s.scope.monitoringTasks} monitoring tasks, ${s.scope.platformTasks} platform tasks`,
    `units: ${c.unitsDone} done, ${c.unitsFailed} failed, ${c.unitsSkipped} skipped as already finished (--force re-syncs them)`,
    `executions: ${c.executionsRead} read, ${c.executionsUnchanged} unchanged (not re-read; --reread reads them)`,
    `requests: ${s.api.requests} (${s.api.retries} retries, ${s.api.rateLimited} rate-limited)`,
    `rejects: ${c.rejects} quarantined in geo.sync_rejects; ${c.goneExecutions} executions deleted upstream meanwhile`,
  ];
  const n = c.notAsked;
  if (n.crossChecks || n.products || n.screenshots)
    lines.push(
      `not asked (could bring nothing): ${n.crossChecks} task/prompts (every stored execution listed), ${n.products} prompt/products (platform unsupported), ${n.screenshots} prompt/screenshot (listed without one)`,
    );
  lines.push('rows written:');
  const rows = Object.entries(c.rows).sort(([a], [b]) => a.localeCompare(b));
  const width = Math.max(0, ...rows.map(([t]) => t.length));
  for (const [t, n] of rows) lines.push(`  ${t.padEnd(width)}  ${n}`);
  if (c.childrenNotFound || c.childrenInvalid)
    lines.push(
      `unread children: ${c.childrenNotFound} not found (404, reason child_not_found), ${c.childrenInvalid} invalid (quarantined); their executions and stored rows kept`,
    );
  if (c.executionsNotStored)
    lines.push(
      `executions not stored: ${c.executionsNotStored} (their rows failed to write; see geo.sync_rejects, reason write_failed); their units completed, the other executions stored`,
    );
  if (c.recordsNotStored)
    lines.push(
      `records not stored: ${c.recordsNotStored} tasks, diagnoses or finance records (their rows failed to write; see geo.sync_rejects, reason write_failed)`,
    );
  if (c.textValuesChanged)
    lines.push(
      `text: ${c.textValuesChanged} values stored changed (U+0000 dropped, lone surrogates as U+FFFD), the same on both warehouses`,
    );
  if (c.rankValuesKeptRaw)
    lines.push(
      `rank numbers: ${c.rankValuesKeptRaw} stored as NULL (no integer of their column: a dash, a fraction, text), the value sent kept in execution_ranks.raw_values`,
    );
  if (c.executionsListedTwice)
    lines.push(
      `listed twice: ${c.executionsListedTwice} executions listed again in their unit (the list shifted between pages); the copy listed last was read and kept whole`,
    );
  if (c.unitsListMismatch)
    lines.push(
      `list mismatches: ${c.unitsListMismatch} units where task/results and task/prompts disagreed; nothing deleted for them`,
    );
  const unreadable = s.scope.unreadable;
  if (unreadable.length > 0) {
    const ids = unreadable.slice(0, 20).map((u) => u.project_id);
    const more = unreadable.length > ids.length ? `, ... (${unreadable.length - ids.length} more)` : '';
    lines.push(
      `unreadable: ${unreadable.length} monitoring tasks the key may not read (project_id ${ids.join(', ')}${more})`,
    );
  }
  if (c.diagnosesNotStarted)
    lines.push(`site diagnoses: ${c.diagnosesNotStarted} projects not started (nothing stored)`);
  for (const f of s.failedUnits.slice(0, 10))
    lines.push(`failed unit task_id=${f.unit.task_id} date=${f.unit.date}: ${f.error}`);
  if (s.error) lines.push(`error: ${s.error}`);
  return lines.join('\n');
}
