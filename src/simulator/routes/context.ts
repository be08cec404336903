/** What a route handler gets: the world, the auth store, the parsed request. */
import type { AuthStore } from '../auth.ts';
import type { Params, Reply } from '../http.ts';
import type { SimWorld } from '../world.ts';

/** Marker of a request body that is not JSON. */
export const BAD_JSON = Symbol('bad-json');

export interface Ctx {
  world: SimWorld;
  auth: AuthStore;
  /** SimulatorOptions.unstableTotals. */
  unstableTotals: boolean;
  /** FaultOptions.resultsPerPageCap. */
  resultsPerPageCap?: number | undefined;
  query: Params;
  /** Parsed JSON body of a POST (undefined when empty, BAD_JSON when unparsable). */
  body: unknown;
  token: string | null;
  /** The `{project_id}` path segment of the diagnosis endpoints. */
  pathId: string | null;
}

export type Handler = (ctx: Ctx) => Reply;
