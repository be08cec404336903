/**
 * Prometheus metrics of a `worker` process (`worker --metrics-port N`), served like the
 * scheduler's (../sync/metrics.ts): how its jobs ended, so an operator hears of a fleet whose
 * jobs fail (deploy/prometheus/geo-sync.rules.yml). A private Registry, as there.
 */
import { Counter, Gauge, Registry } from 'prom-client';
import type { WorkerResult } from './worker.ts';

const OUTCOMES: readonly (keyof WorkerResult)[] = ['completed', 'failed', 'released', 'lost'];

export class WorkerMetrics {
  readonly registry = new Registry();
  private readonly jobs: Counter<'outcome'>;

  constructor() {
    const registers = [this.registry];
    this.jobs = new Counter({
      name: 'geo_worker_jobs_total',
      help: 'Jobs this worker settled, by outcome: completed, failed (retried while retries are left), released (handed back: interrupted), lost (expired meanwhile, another attempt owns it)',
      labelNames: ['outcome'],
      registers,
    });
    // Present from the first scrape, so rates and increases work from the first job on.
    for (const outcome of OUTCOMES) this.jobs.inc({ outcome }, 0);
    new Gauge({
      name: 'geo_worker_start_timestamp_seconds',
      help: 'When this worker process started (Unix time, seconds)',
      registers,
    }).set(Date.now() / 1000);
  }

  observe(outcome: keyof WorkerResult): void {
    this.jobs.inc({ outcome });
  }
}
