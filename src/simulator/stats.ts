/** Request counters (SimulatorStats): per endpoint, in flight, and faults injected. */

export interface FaultCounts {
  rateLimited: number;
  serverErrors: number;
  resets: number;
  malformed: number;
  slow: number;
}

export interface SimulatorStats {
  /** Requests received. */
  total: number;
  /** Key = EndpointId (`GET /api/v2/geo/task/results`); unknown paths count under `unknown`. */
  byEndpoint: Record<string, number>;
  /** Received and not yet answered (latency waits included). */
  inFlight: number;
  peakInFlight: number;
  faults: FaultCounts;
  reset(): void;
}

export class Stats implements SimulatorStats {
  total = 0;
  byEndpoint: Record<string, number> = {};
  inFlight = 0;
  peakInFlight = 0;
  faults: FaultCounts = { rateLimited: 0, serverErrors: 0, resets: 0, malformed: 0, slow: 0 };

  begin(endpoint: string): void {
    this.total++;
    this.byEndpoint[endpoint] = (this.byEndpoint[endpoint] ?? 0) + 1;
    if (++this.inFlight > this.peakInFlight) this.peakInFlight = this.inFlight;
  }

  end(): void {
    this.inFlight--;
  }

  /** Zero the counters; requests still in flight stay counted as in flight. */
  reset(): void {
    this.total = 0;
    this.byEndpoint = {};
    this.peakInFlight = this.inFlight;
    this.faults = { rateLimited: 0, serverErrors: 0, resets: 0, malformed: 0, slow: 0 };
  }
}
