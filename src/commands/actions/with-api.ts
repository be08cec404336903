/**
 * For the commands that only talk to the API (`whoami`, `tasks ...`): the configuration, its
 * logger and an API client that stops on SIGINT/SIGTERM, closed when `fn` settles. Apart from
 * ./common.ts, so that commands which never call the API do not load its client.
 */
import type { Api } from '../../api-handle.ts';
import { createApi } from '../../app.ts';
import { stopSignal, type CommonOpts } from '../common.ts';
import { configFrom, loggerFor } from './common.ts';

export async function withApi<T>(opts: CommonOpts, fn: (api: Api) => Promise<T>): Promise<T> {
  const config = configFrom(opts);
  const logger = loggerFor(config);
  // Ended when `fn` fails: a request still under way then (whoami's other half, after the key
  // was refused) is abandoned, not waited for until its timeout as the client's close would.
  const failed = new AbortController();
  const api = createApi(config, logger, { signal: AbortSignal.any([stopSignal(logger), failed.signal]) });
  try {
    return await fn(api);
  } catch (e) {
    failed.abort(e);
    throw e;
  } finally {
    await api.close();
  }
}
