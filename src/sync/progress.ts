/**
 * Seeing a run work: a progress bar on a TTY (units done of total, rows, requests/s, ETA);
 * otherwise a progress line every `intervalMs` through the logger.
 */
import cliProgress from 'cli-progress';
import type { Logger } from 'pino';
import type { Progress } from './run.ts';

export interface ProgressReporter {
  update(p: Progress): void;
  stop(): void;
}

export function createProgressReporter(opts: {
  tty: boolean;
  logger: Logger;
  intervalMs?: number;
  stream?: NodeJS.WritableStream;
}): ProgressReporter {
  const started = Date.now();
  let last: Progress = { unitsDone: 0, unitsTotal: 0, rows: 0, requests: 0 };
  const rate = () => last.requests / Math.max(0.001, (Date.now() - started) / 1000);

  if (opts.tty) {
    const bar = new cliProgress.SingleBar(
      {
        format: 'units {bar} {value}/{total} | {rows} rows | {rps} req/s | ETA {eta_formatted}',
        hideCursor: true,
        stream: opts.stream ?? process.stderr,
        etaBuffer: 20,
      },
      cliProgress.Presets.shades_classic,
    );
    let startedBar = false;
    return {
      update(p) {
        last = p;
        const payload = { rows: p.rows, rps: rate().toFixed(0) };
        if (!startedBar) {
          bar.start(p.unitsTotal, p.unitsDone, payload);
          startedBar = true;
        } else {
          bar.setTotal(p.unitsTotal);
          bar.update(p.unitsDone, payload);
        }
      },
      stop() {
        if (startedBar) bar.stop();
      },
    };
  }

  const timer = setInterval(() => {
    opts.logger.info(
      {
        unitsDone: last.unitsDone,
        unitsTotal: last.unitsTotal,
        rows: last.rows,
        requests: last.requests,
        requestsPerSecond: Math.round(rate()),
      },
      'progress',
    );
  }, opts.intervalMs ?? 15_000);
  timer.unref();
  return {
    update(p) {
      last = p;
    },
    stop() {
      clearInterval(timer);
    },
  };
}
