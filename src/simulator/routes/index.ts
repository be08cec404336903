/**
 * The route table: one handler per endpoint of src/api/endpoints.ts, looked up by
 * `METHOD path` in a Map (no regex routing). The only path with a parameter, the diagnosis
 * `/api/v2/projects/{project_id}/site-diagnosis`, is matched by prefix and suffix.
 */
import type { EndpointId, EndpointName } from '../../api/endpoints.ts';
import { ENDPOINTS, endpointId } from '../../api/endpoints.ts';
import * as account from './account.ts';
import type { Handler } from './context.ts';
import * as diagnosis from './diagnosis.ts';
import * as h from './hierarchical.ts';
import * as legacy from './legacy.ts';

export const HANDLERS: Record<EndpointName, Handler> = {
  login: account.login,
  user: account.user,
  logout: account.logout,
  startSiteDiagnosis: diagnosis.startSiteDiagnosis,
  getSiteDiagnosis: diagnosis.getSiteDiagnosis,
  customerProjects: h.customerProjects,
  projectTasks: h.projectTasks,
  taskInfo: h.taskInfo,
  taskPrompts: h.taskPrompts,
  taskResults: h.taskResults,
  promptDetail: h.promptDetail,
  promptResult: h.promptResult,
  promptSearches: h.promptSearches,
  promptScreenshot: h.promptScreenshot,
  promptProducts: h.promptProducts,
  legacyProjectCreate: legacy.projectCreate,
  legacyProjectEdit: legacy.projectEdit,
  legacyProjectList: legacy.projectList,
  legacyProjectDetail: legacy.projectDetail,
  legacyTaskList: legacy.taskList,
  legacyTaskDetail: legacy.taskDetail,
  legacyTaskResult: legacy.taskResult,
  legacyTaskScreenshot: legacy.taskScreenshot,
  legacyTaskSearches: legacy.taskSearches,
  balance: account.balance,
  deductionDetails: account.deductionDetails,
};

export interface Route {
  name: EndpointName;
  id: EndpointId;
  auth: boolean;
  /** Legacy endpoints answer failures with `{success: false, message}`. */
  legacy: boolean;
  handler: Handler;
  /** `{project_id}` of the diagnosis path. */
  pathId: string | null;
}

const DIAG_PREFIX = '/api/v2/projects/';
const DIAG_SUFFIX = '/site-diagnosis';

export class Router {
  private readonly table = new Map<string, Route>();
  private readonly diag = new Map<string, Route>();

  constructor() {
    for (const name of Object.keys(ENDPOINTS) as EndpointName[]) {
      const e = ENDPOINTS[name];
      const route: Route = {
        name,
        id: endpointId(name),
        auth: e.auth,
        legacy: e.group === 'legacy' || e.group === 'auth',
        handler: HANDLERS[name],
        pathId: null,
      };
      if (e.path.includes('{project_id}')) this.diag.set(e.method, route);
      else this.table.set(`${e.method} ${e.path}`, route);
    }
  }

  match(method: string, path: string): Route | undefined {
    const r = this.table.get(`${method} ${path}`);
    if (r) return r;
    if (path.startsWith(DIAG_PREFIX) && path.endsWith(DIAG_SUFFIX)) {
      const d = this.diag.get(method);
      const id = path.slice(DIAG_PREFIX.length, path.length - DIAG_SUFFIX.length);
      if (d && id !== '' && !id.includes('/')) return { ...d, pathId: id };
    }
    return undefined;
  }
}
