// Preloaded with `node --import` into a measured child process: on exit, appends one JSON line
// to the file named by BENCH_RSS_FILE with the process's peak resident set size
// (process.resourceUsage().maxRSS, KiB on Linux) and, sampled every 250 ms, the peaks of the V8
// heap and of memory outside it, to tell JS objects from native (DuckDB, buffers) memory.
import { appendFileSync } from 'node:fs';
import { setInterval } from 'node:timers';

const file = process.env.BENCH_RSS_FILE;
if (file) {
  const peak = { rss: 0, heapUsed: 0, heapTotal: 0, external: 0, arrayBuffers: 0, nonHeap: 0 };
  const sample = () => {
    const m = process.memoryUsage();
    peak.rss = Math.max(peak.rss, m.rss);
    peak.heapUsed = Math.max(peak.heapUsed, m.heapUsed);
    peak.heapTotal = Math.max(peak.heapTotal, m.heapTotal);
    peak.external = Math.max(peak.external, m.external);
    peak.arrayBuffers = Math.max(peak.arrayBuffers, m.arrayBuffers);
    // Resident memory that is not the V8 heap: native allocations (DuckDB's buffer pool, ...).
    peak.nonHeap = Math.max(peak.nonHeap, m.rss - m.heapTotal);
  };
  const timer = setInterval(sample, 250);
  timer.unref();
  process.on('exit', (code) => {
    sample();
    const mb = (n) => Math.round((n / 1048576) * 10) / 10;
    const { maxRSS } = process.resourceUsage();
    const line = {
      pid: process.pid,
      code,
      maxRssKiB: maxRSS,
      sampledPeakMb: Object.fromEntries(Object.entries(peak).map(([k, v]) => [k, mb(v)])),
    };
    appendFileSync(file, JSON.stringify(line) + '\n');
  });
}
