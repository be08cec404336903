/**
 * Every API-data table of a warehouse, and the per-day aggregates, as sorted, comparable rows (without `synced_at`, which
 * records when a row was written, not what it says). Two warehouses hold the same data exactly
 * when their dumps are equal.
 */
import { rollupsMatchSqls } from '../../src/load/core/rollups.ts';
import { ROLLUP_TABLES } from '../../src/load/tables.ts';
import { withWarehouse } from './sync.ts';

const TABLES: Record<string, { columns: string; order: string }> = {
  monitoring_tasks: {
    columns:
      'project_id, customer_id, project_name, brand_cate_desc, brand_desc_list, status, status_name, CAST(created_at AS VARCHAR) AS created_at, task_count, CAST(prompts AS VARCHAR) AS prompts, week_restart, only_rank, rank_match',
    order: 'project_id',
  },
  platform_tasks: {
    columns:
      'task_id, project_id, customer_id, task_name, model_key, model_name, engine, status, status_name',
    order: 'task_id',
  },
  prompt_executions: {
    columns:
      'prompt_task_id, task_id, project_id, customer_id, prompt_name, CAST(date_time AS VARCHAR) AS date_time, hours, status, model, engine, brand_exposure, screenshot_url, result_status, answer, think, rank_exposure, rank_exposure_number, CAST(created_at AS VARCHAR) AS created_at, CAST(updated_at AS VARCHAR) AS updated_at',
    order: 'prompt_task_id',
  },
  execution_ranks: {
    columns: 'prompt_task_id, ordinal, brand, brand_short, position, visibility, score, raw_values',
    order: 'prompt_task_id, ordinal',
  },
  execution_sources: {
    columns:
      'source_id, prompt_task_id, task_id, project_id, customer_id, url, title, domain, cite_index, snippet, upstream_task_id, site_name, site_icon, published_at, task_ai_id',
    order: 'source_id',
  },
  execution_screenshots: {
    columns: 'prompt_task_id, task_id, project_id, customer_id, screenshot_status, screenshot_url',
    order: 'prompt_task_id',
  },
  execution_products: { columns: 'prompt_task_id, supported, result_status, total', order: 'prompt_task_id' },
  product_cards: {
    columns: 'prompt_task_id, position, product_name, price, shop, source, link',
    order: 'prompt_task_id, position',
  },
};

// The per-day aggregates too: kept by the sync, they must equal what a fresh sync leaves.
for (const spec of ROLLUP_TABLES) {
  TABLES[spec.table] = {
    columns: spec.columns
      .map((c) => (c.kind === 'date' ? `CAST(${c.name} AS VARCHAR) AS ${c.name}` : c.name))
      .join(', '),
    order: spec.key.join(', '),
  };
}

export async function dumpData(target: string): Promise<Record<string, unknown[]>> {
  return withWarehouse(target, async (w) => {
    const out: Record<string, unknown[]> = {};
    for (const [table, { columns, order }] of Object.entries(TABLES)) {
      const rows = await w.query(`SELECT ${columns} FROM geo.${table} ORDER BY ${order}`);
      out[table] = rows.map((r) => Object.values(r).map((v) => (typeof v === 'bigint' ? Number(v) : v)));
    }
    return out;
  });
}

export function rowCounts(dump: Record<string, unknown[]>): Record<string, number> {
  return Object.fromEntries(Object.entries(dump).map(([t, rows]) => [t, rows.length]));
}

/**
 * The per-day aggregates of `from`..`to` that differ from a recomputation from the execution
 * tables (check rollups_match): none when every transaction kept them with its rows.
 */
export async function rollupMismatches(target: string, from: string, to: string): Promise<unknown[]> {
  return withWarehouse(target, async (w) => {
    const rows: unknown[] = [];
    for (const sql of rollupsMatchSqls(w)) rows.push(...(await w.query(sql, [from, to])));
    return rows;
  });
}
