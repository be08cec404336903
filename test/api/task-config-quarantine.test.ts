/**
 * A monitoring task configuration (legacy project/detail) whose timestamp is not
 * one is quarantined with its reason and raw payload; the other configurations are stored and
 * the run goes on (it used to fail the whole run).
 */
import { describe, expect, it } from 'vitest';
import type { RejectedRecord } from '../../src/api/decode.ts';
import type { MonitoringTask } from '../../src/api/schemas/index.ts';
import { apiPortFromClient } from '../../src/extract/client-port.ts';
import type { Scope } from '../../src/extract/scope.ts';
import { silentLogger } from '../../src/log.ts';
import { syncTaskConfig } from '../../src/sync/account-data.ts';
import type { RunContext } from '../../src/sync/context.ts';
import type { MonitoringTaskConfigRow } from '../../src/transform/rows.ts';
import { monitoringTask, ok, route, setup } from './helpers.ts';

const detail = (number_id: number, created_at: string) => ({
  number_id,
  brand_name: 'b',
  brand_cate_desc: 'c',
  brand_desc_list: 'x\ny',
  status: 1,
  status_name: 's',
  created_at,
  projects: [{ project_id: number_id * 10, model_key: 'k', model_name: 'n', prompts: ['q'] }],
  prompts: ['q'],
  week_restart: 0,
  only_rank: 0,
  rank_match: 1,
  brand_urls: [],
  emails: [],
});

describe('syncTaskConfig', () => {
  it('quarantines a configuration whose created_at is no timestamp and stores the others', async () => {
    const { pool, client } = setup();
    const bodies: Record<string, unknown> = {
      '1': detail(1, '2025-12-31T16:30:00Z'),
      '2': detail(2, '31/12/2025 16:30'),
    };
    route(pool, 'GET', '/api/v2/geo/project/detail', (q) => ({ body: ok(bodies[q.get('number_id') ?? '']) }));
    const rejects: RejectedRecord[] = [];
    const stored: MonitoringTaskConfigRow[] = [];
    const ctx = {
      api: apiPortFromClient(client),
      logger: silentLogger,
      reject: (r: RejectedRecord) => rejects.push(r),
      wrote: () => undefined,
      // The run's write of a list of records (its isolation of a refused one is not exercised here).
      writeRecords: async <R>(rows: readonly R[], write: (rows: readonly R[]) => Promise<unknown>) => {
        if (rows.length) await write(rows);
        return rows.length;
      },
      warehouse: {
        updateMonitoringTaskConfig: async (rows: MonitoringTaskConfigRow[]) => {
          stored.push(...rows);
          return { textValuesChanged: 0 };
        },
        updatePlatformTaskPrompts: async () => ({ textValuesChanged: 0 }),
      },
    } as unknown as RunContext;
    const scope = { monitoringTasks: [1, 2].map((id) => monitoringTask(id) as MonitoringTask) } as Scope;

    await syncTaskConfig(ctx, scope);
    expect(stored.map((r) => r.project_id)).toEqual([1]);
    expect(rejects).toHaveLength(1);
    expect(rejects[0]).toMatchObject({
      endpoint: 'GET /api/v2/geo/project/detail',
      params: { number_id: 2 },
      raw: { data: bodies['2'] },
    });
    expect(rejects[0]!.reason).toMatch(/created_at: expected YYYY-MM-DD HH:MM:SS/);
  });
});
