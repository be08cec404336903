/**
 * Monitoring tasks the key may not read (`scope.unreadable`) are reported in the
 * run summary; the summary's existing lines keep their exact format (bench/memory.ts parses
 * `requests: N` and the `rows written:` block).
 */
import { describe, expect, it } from 'vitest';
import { NotFoundError } from '../../src/api/errors.ts';
import type { MonitoringTask, PlatformTask } from '../../src/api/schemas/index.ts';
import type { ApiPort } from '../../src/extract/port.ts';
import { resolveScope } from '../../src/extract/scope.ts';
import { newCounters } from '../../src/sync/context.ts';
import type { RunSummary } from '../../src/sync/run.ts';
import { formatSummary } from '../../src/sync/summary.ts';
import { parseSummary } from '../../bench/memory.ts';
import { monitoringTask, platformTask } from '../api/helpers.ts';

/** A port whose project/tasks answers 404 for the monitoring tasks in `unreadable`. */
function port(tasks: MonitoringTask[], unreadable: number[]): ApiPort {
  return {
    async *monitoringTasks() {
      yield* tasks;
    },
    async platformTasks(project_id: number): Promise<PlatformTask[]> {
      if (unreadable.includes(project_id))
        throw new NotFoundError({ endpoint: 'GET /api/v2/geo/project/tasks', params: { project_id } });
      return [{ ...(platformTask(project_id * 10) as PlatformTask), project_id }];
    },
  } as Partial<ApiPort> as ApiPort;
}

function summary(scope: RunSummary['scope']): RunSummary {
  const counters = { ...newCounters(), unitsDone: 2, rows: { prompt_executions: 40, execution_ranks: 90 } };
  return {
    runId: 'r1',
    status: 'success',
    dates: ['2026-11-20'],
    scope,
    counters,
    api: { requests: 123, retries: 4, rateLimited: 1 },
    startedAt: '2026-11-21T00:00:00.000Z',
    finishedAt: '2026-11-21T00:00:02.500Z',
    error: null,
    failedUnits: [],
  };
}

describe('unreadable monitoring tasks in the summary', () => {
  it('are collected by the scope and listed in a line of their own', async () => {
    const tasks = [1, 2, 3].map((id) => monitoringTask(id) as MonitoringTask);
    const scope = await resolveScope(port(tasks, [2, 3]), [7]);
    expect(scope.unreadable.map((u) => u.project_id)).toEqual([2, 3]);
    expect(scope.unreadable[0]!.reason).toMatch(/not found \(404\)/);

    const text = formatSummary(
      summary({ customers: 1, monitoringTasks: 3, platformTasks: 1, unreadable: scope.unreadable }),
    );
    expect(text.split('\n')).toEqual([
      'run r1: SUCCESS in 2.5 s, dates 2026-11-20',
      'scope: 1 projects, 3 monitoring tasks, 1 platform tasks',
      'units: 2 done, 0 failed, 0 skipped as already finished (--force re-syncs them)',
      'executions: 0 read, 0 unchanged (not re-read; --reread reads them)',
      'requests: 123 (4 retries, 1 rate-limited)',
      'rejects: 0 quarantined in geo.sync_rejects; 0 executions deleted upstream meanwhile',
      'rows written:',
      '  execution_ranks    90',
      '  prompt_executions  40',
      'unreadable: 2 monitoring tasks the key may not read (project_id 2, 3)',
    ]);
    expect(parseSummary(text)).toEqual({
      requests: 123,
      rows: { execution_ranks: 90, prompt_executions: 40 },
    });
  });

  it('a long list is cut after 20 IDs with the count of the rest; none means no line', () => {
    const unreadable = Array.from({ length: 25 }, (_, i) => ({ project_id: 100 + i, reason: '404' }));
    const text = formatSummary(summary({ customers: 1, monitoringTasks: 25, platformTasks: 0, unreadable }));
    expect(text).toContain(
      `unreadable: 25 monitoring tasks the key may not read (project_id ${unreadable
        .slice(0, 20)
        .map((u) => u.project_id)
        .join(', ')}, ... (5 more))`,
    );
    const none = formatSummary(
      summary({ customers: 1, monitoringTasks: 1, platformTasks: 1, unreadable: [] }),
    );
    expect(none).not.toContain('unreadable');
  });
});
