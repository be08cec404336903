/**
 * Timestamps at the client: a record whose timestamp is not one is quarantined with its
 * reason and raw payload; timestamps with a zone or a fraction are accepted and mean that instant.
 */
import { describe, expect, it } from 'vitest';
import { toMonitoringTaskRow } from '../../src/transform/hierarchy.ts';
import { monitoringTask, pageBody, route, setup } from './helpers.ts';

const PROJECTS = '/api/v2/geo/customer/projects';

describe('timestamps in a list', () => {
  it('bad ones are quarantined; zones and fractions read as their instants', async () => {
    const { pool, client, rejected } = setup();
    const items = [
      { ...monitoringTask(1), created_at: '2026-01-01 00:30:00' },
      { ...monitoringTask(2), created_at: '2025-12-31T16:30:00.5Z' },
      { ...monitoringTask(3), created_at: '2025-12-31T12:30:00-04:00' },
      { ...monitoringTask(4), created_at: 'last tuesday' },
      { ...monitoringTask(5), created_at: '2026-02-30 10:00:00' },
    ];
    route(pool, 'GET', PROJECTS, () => ({ body: pageBody(items, { current_page: 1, last_page: 1 }) }));
    const page = await client.customerProjects({ customer_id: 7 });
    expect(page.items.map((t) => t.project_id)).toEqual([1, 2, 3]);
    expect(page.items.map((t) => toMonitoringTaskRow(t).created_at)).toEqual([
      '2026-01-01T00:30:00+08:00',
      '2026-01-01T00:30:00.5+08:00',
      '2026-01-01T00:30:00+08:00',
    ]);
    expect(rejected.map((r) => (r.raw as { project_id: number }).project_id)).toEqual([4, 5]);
    for (const r of rejected) {
      expect(r.endpoint).toBe(`GET ${PROJECTS}`);
      expect(r.reason).toMatch(/^created_at: expected YYYY-MM-DD HH:MM:SS/);
    }
  });
});
