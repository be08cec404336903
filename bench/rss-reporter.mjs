// Preloaded with `node --import` into a measured child process: on exit, appends one JSON line
// to the file named by BENCH_RSS_FILE with the process's peak resident set size
// (process.resourceUsage().maxRSS, KiB on Linux) and, sampled every 250 ms, the peaks of the V8
// heap and of memory outside it, to tell JS objects from native (DuckDB, buffers) memory.
//
// At the highest RSS sampled it also reads /proc/self/smaps and splits the resident memory by
// mapping (`atPeakMb`): the V8 heap (heapTotal), glibc's main heap ([heap]), the largest anonymous
// mapping (in a DuckDB run, the extents of DuckDB's own allocator, jemalloc, which hold its buffer
// pool: no such mapping exists in a PostgreSQL run), the other anonymous mappings (V8's pages,
// glibc's per-thread arenas), the binaries (node, libduckdb.so) and other named mappings (other
// libraries, thread stacks).
import { appendFileSync, readFileSync } from 'node:fs';
import { setInterval } from 'node:timers';

const MB = 1048576;
const round = (n) => Math.round(n * 10) / 10;

/** Resident MB by kind of mapping, from /proc/self/smaps; null off Linux. */
function residentByMapping() {
  let text;
  try {
    text = readFileSync('/proc/self/smaps', 'utf8');
  } catch {
    return null;
  }
  const out = {
    glibcHeap: 0,
    anonLargest: 0,
    anonLargestSize: 0,
    anonOther: 0,
    node: 0,
    libduckdb: 0,
    otherNamed: 0,
  };
  let name = '';
  let size = 0;
  for (const line of text.split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      size = (parseInt(head[2], 16) - parseInt(head[1], 16)) / MB;
      name = head[3];
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (!rss) continue;
    const mb = Number(rss[1]) / 1024;
    if (name === '[heap]') out.glibcHeap += mb;
    else if (name === '') {
      if (mb > out.anonLargest) {
        out.anonOther += out.anonLargest;
        out.anonLargest = mb;
        out.anonLargestSize = size;
      } else out.anonOther += mb;
    } else if (name.endsWith('/node')) out.node += mb;
    else if (name.includes('libduckdb')) out.libduckdb += mb;
    else out.otherNamed += mb;
  }
  return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, round(v)]));
}

const file = process.env.BENCH_RSS_FILE;
if (file) {
  const peak = { rss: 0, heapUsed: 0, heapTotal: 0, external: 0, arrayBuffers: 0, nonHeap: 0 };
  let atPeak = null;
  let atPeakRss = 0;
  const sample = () => {
    const m = process.memoryUsage();
    // A new peak by more than 16 MB: where the resident memory is. Reading smaps takes a few ms of
    // the measured process's own thread, so a run of ~500 MB pays for ~30 reads, not ~250.
    if (m.rss > atPeakRss + 16 * MB) {
      const split = residentByMapping();
      if (split) {
        atPeakRss = m.rss;
        atPeak = { rss: round(m.rss / MB), v8HeapTotal: round(m.heapTotal / MB), ...split };
      }
    }
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
    const { maxRSS, userCPUTime, systemCPUTime } = process.resourceUsage();
    const line = {
      pid: process.pid,
      code,
      maxRssKiB: maxRSS,
      // CPU seconds of the whole process (all threads): what a setting that saves memory costs.
      cpuSeconds: (userCPUTime + systemCPUTime) / 1e6,
      sampledPeakMb: Object.fromEntries(Object.entries(peak).map(([k, v]) => [k, round(v / MB)])),
      atPeakMb: atPeak,
    };
    appendFileSync(file, JSON.stringify(line) + '\n');
  });
}
