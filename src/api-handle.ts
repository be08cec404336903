/**
 * The API as a run holds it: the client, the port the extractors read through, where quarantined
 * list items go, and how to let go of it. app.ts builds one (createApi); the sync, the
 * distributed worker and library pipelines receive it. Its own module, below all of them.
 */
import type { GeoClient, RejectedRecord } from './api/client.ts';
import type { ApiPort } from './extract/port.ts';

export interface Api {
  client: GeoClient;
  port: ApiPort;
  /** Where quarantined list items go; a run rebinds it to its own run context. */
  setRejectSink(sink: (r: RejectedRecord) => void): void;
  close(): Promise<void>;
}
