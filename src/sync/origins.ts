/**
 * Where a small-table row's record came from (the endpoint that answered it, and parameters that
 * name it): what geo.sync_rejects says of a row the warehouse refused (RunContext.writeRecords).
 */
import { endpointId } from '../api/endpoints.ts';
import type {
  BalanceSnapshotRow,
  DeductionRow,
  MonitoringTaskConfigRow,
  MonitoringTaskRow,
  PlatformTaskPromptsRow,
  PlatformTaskRow,
  SiteDiagnosisRow,
} from '../transform/rows.ts';
import type { RecordOrigin } from './context.ts';

/** A monitoring task of a project comes from customer/projects; a historical one (no project) from the legacy list. */
export const monitoringTaskOrigin = (r: MonitoringTaskRow): RecordOrigin =>
  r.customer_id === null
    ? { endpoint: endpointId('legacyProjectList'), params: { number_id: r.project_id } }
    : {
        endpoint: endpointId('customerProjects'),
        params: { customer_id: r.customer_id, project_id: r.project_id },
      };

export const platformTaskOrigin = (r: PlatformTaskRow): RecordOrigin => ({
  endpoint: endpointId('projectTasks'),
  params: { project_id: r.project_id, customer_id: r.customer_id, task_id: r.task_id },
});

export const taskConfigOrigin = (r: MonitoringTaskConfigRow): RecordOrigin => ({
  endpoint: endpointId('legacyProjectDetail'),
  params: { number_id: r.project_id },
});

/** A platform task's prompts, from the legacy detail of its monitoring task. */
export const platformPromptsOrigin = (r: PlatformTaskPromptsRow): RecordOrigin => ({
  endpoint: endpointId('legacyProjectDetail'),
  params: { task_id: r.task_id },
});

export const siteDiagnosisOrigin = (r: SiteDiagnosisRow): RecordOrigin => ({
  endpoint: endpointId('getSiteDiagnosis'),
  params: { project_id: r.customer_id, diagnosis_id: r.diagnosis_id },
});

export const balanceOrigin = (r: BalanceSnapshotRow): RecordOrigin => ({
  endpoint: endpointId('balance'),
  params: { taken_at: r.taken_at },
});

export const deductionOrigin = (r: DeductionRow): RecordOrigin => ({
  endpoint: endpointId('deductionDetails'),
  params: { id: r.id },
});
