/**
 * `owned` of the aggregates' domain rows, which depends on the monitoring task's brand_urls: the
 * hosts a task has now, and deciding `owned` again for a task whose hosts changed, against the
 * refreshes under way (rollups.ts computes `owned` with the same normalisation when it refreshes).
 */
import { DIALECT_SQL, ownedBy, siteOf } from '../dialect-sql.ts';
import type { Connection, Driver } from './driver.ts';
import { brandHostsSql } from './rollups.ts';

/** Each monitoring task's brand_urls hosts, normalised, as one sorted text per task. */
export async function hostsOf(
  driver: Driver,
  c: Connection,
  projectIds: readonly number[],
): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  if (projectIds.length === 0) return out;
  const rows = await c.rows<{ project_id: number; host: string }>(
    `SELECT project_id, host FROM (${brandHostsSql(driver, 1)}) h ORDER BY project_id, host`,
    [projectIds],
  );
  for (const r of rows) out.set(r.project_id, `${out.get(r.project_id) ?? ''}${r.host}\n`);
  return out;
}

/**
 * Decides `owned` again for every (monitoring task, domain) of the aggregates of these tasks,
 * whose brand_urls hosts changed: once per pair, against the task's hosts now.
 */
export async function decideOwnership(
  driver: Driver,
  c: Connection,
  projectIds: readonly number[],
): Promise<void> {
  // PostgreSQL: wait for the transactions writing aggregate rows now (they may have read the old
  // hosts: maintainRollups takes its writer's lock before reading them) and hold off new ones
  // until this commits, so every row is decided against the hosts it will be read with. (DuckDB
  // runs one transaction at a time.) It holds the writers off while it updates the task's rows:
  // rare (a change of brand_urls' hosts), and a year of one task's domain rows is seconds.
  const lock = DIALECT_SQL[driver.dialect].lockAgainstWriters('geo.rollup_domains_daily');
  if (lock) await c.execute(lock);
  await c.execute(
    `UPDATE geo.rollup_domains_daily SET owned = o.owned
     FROM (
       SELECT d.project_id, d.domain, COALESCE(bool_or(${ownedBy(siteOf('d.domain'), 'h.host')}), false) AS owned
       FROM (SELECT DISTINCT project_id, domain FROM geo.rollup_domains_daily
             WHERE ${driver.inIds('project_id', 1)}) d
       LEFT JOIN (${brandHostsSql(driver, 1)}) h ON h.project_id = d.project_id
       GROUP BY d.project_id, d.domain
     ) o
     WHERE geo.rollup_domains_daily.project_id = o.project_id AND geo.rollup_domains_daily.domain = o.domain
       AND geo.rollup_domains_daily.owned <> o.owned`,
    [projectIds],
  );
}
