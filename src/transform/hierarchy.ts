/** Monitoring tasks and platform tasks -> rows. */
import type { MonitoringTask, PlatformTask } from '../api/schemas/hierarchical.ts';
import type { LegacyMonitoringTaskDetail } from '../api/schemas/legacy.ts';
import type {
  MonitoringTaskConfigRow,
  MonitoringTaskRow,
  PlatformTaskPromptsRow,
  PlatformTaskRow,
} from './rows.ts';
import { apiTimestampToIso } from './time.ts';

export function toMonitoringTaskRow(t: MonitoringTask): MonitoringTaskRow {
  return {
    project_id: t.project_id,
    customer_id: t.customer_id,
    project_name: t.project_name,
    brand_cate_desc: t.brand_cate_desc,
    brand_desc_list: t.brand_desc_list,
    status: t.status,
    status_name: t.status_name,
    created_at: apiTimestampToIso(t.created_at),
    task_count: t.task_count,
    prompts: [...t.prompts],
  };
}

export function toPlatformTaskRow(t: PlatformTask): PlatformTaskRow {
  return {
    task_id: t.task_id,
    project_id: t.project_id,
    customer_id: t.customer_id,
    task_name: t.task_name,
    model_key: t.model_key,
    model_name: t.model_name,
    engine: t.engine,
    status: t.status,
    status_name: t.status_name,
  };
}

/**
 * Legacy project detail -> configuration of the monitoring task and per-platform prompts.
 * Renames (spec 1): legacy `number_id` is the monitoring task (`project_id`), and
 * `projects[].project_id` is a platform task (`task_id`).
 */
export function fromLegacyDetail(d: LegacyMonitoringTaskDetail): {
  config: MonitoringTaskConfigRow;
  platformPrompts: PlatformTaskPromptsRow[];
} {
  return {
    config: {
      project_id: d.number_id,
      week_restart: d.week_restart,
      only_rank: d.only_rank,
      rank_match: d.rank_match,
      brand_urls: [...d.brand_urls],
      emails: [...d.emails],
    },
    platformPrompts: d.projects.map((p) => ({ task_id: p.project_id, prompts: [...p.prompts] })),
  };
}
