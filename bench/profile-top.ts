/**
 * Top self-time functions of a V8 .cpuprofile (from `node --cpu-prof`), and self time per area
 * (geo-sync's own modules by folder, each dependency, node internals, GC, idle).
 *
 *   node --import tsx bench/profile-top.ts <file.cpuprofile> [--top 25] [--window /tmp/geo-bench-profiles/window.json]
 *        [--callers REGEX [--depth 3]]
 *
 * `--window` keeps only the samples of the timed run (bench/profile.ts writes that file);
 * `--callers` attributes the self time of matching functions to their call chains.
 */
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  hitCount?: number;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface Share {
  name: string;
  ms: number;
  share: number;
}

/** The area a frame belongs to: src/<folder>, a package, node:internal, or a V8 pseudo-frame. */
export function areaOf(f: CallFrame): string {
  const url = f.url;
  if (!url) {
    if (f.functionName === '(garbage collector)') return '(gc)';
    if (f.functionName === '(idle)' || f.functionName === '(program)') return f.functionName;
    return '(native)';
  }
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const src = /\/(src|dist|bench|test)\/([^/]+)\//.exec(url);
  if (src) return `${src[1]}/${src[2]}`;
  const top = /\/(src|dist|bench)\/([^/]+)$/.exec(url);
  if (top) return `${top[1]}/${top[2]}`;
  if (url.startsWith('node:')) return 'node:internal';
  return url;
}

export interface SummaryOptions {
  /** Only samples in this window, µs on the profile's clock (process.hrtime, as bench/profile.ts writes it). */
  fromUs?: number;
  toUs?: number;
  /** Also attribute the self time of functions whose name matches to their callers (`depth` frames up). */
  callersOf?: RegExp;
  depth?: number;
}

/**
 * The nearest frame of geo-sync's own code (src/, or its build dist/, which the bench runs) on a
 * sample's stack: who asked for that work.
 */
function productFrame(id: number, byId: Map<number, ProfileNode>, parent: Map<number, number>): string {
  for (let n: number | undefined = id; n !== undefined; n = parent.get(n)) {
    const f = byId.get(n)!.callFrame;
    if (/\/(src|dist)\//.test(f.url) && !/\/node_modules\//.test(f.url)) return frameName(f);
  }
  const f = byId.get(id)!.callFrame;
  return `(no src/ frame) ${areaOf(f)}`;
}

/** Areas that only carry out work someone else asked for: skipped when looking for the owner. */
const CARRIERS = new Set(['node:internal', '(native)', '(gc)', '(program)', '(idle)']);

/**
 * The area (areaOf: a package, or a folder of geo-sync's src/ or dist/) of the nearest frame above
 * node's own on a sample's stack: e.g. whether a socket write was undici's request or pg's COPY.
 */
function ownerOf(id: number, byId: Map<number, ProfileNode>, parent: Map<number, number>): string {
  for (let n = parent.get(id); n !== undefined; n = parent.get(n)) {
    const area = areaOf(byId.get(n)!.callFrame);
    if (!CARRIERS.has(area)) return area;
  }
  return '(no package on the stack)';
}

const frameName = (f: CallFrame): string => {
  const short = f.url.replace(/^.*\/(node_modules|src|dist|bench)\//, '$1/');
  return `${f.functionName || '(anonymous)'} ${short}:${f.lineNumber + 1}`;
};

export function summarize(
  file: string,
  o: SummaryOptions = {},
): {
  totalMs: number;
  functions: Share[];
  areas: Share[];
  callers: Share[];
  owners: Share[];
  product: Share[];
} {
  const p = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const selfMs = new Map<number, number>();
  let t = p.startTime;
  for (let i = 0; i < p.samples.length; i++) {
    const dtUs = p.timeDeltas[i] ?? 0;
    t += dtUs;
    if (o.fromUs !== undefined && t < o.fromUs) continue;
    if (o.toUs !== undefined && t > o.toUs) continue;
    // A sample's time is the gap to the next one: attribute the following delta to it.
    const next = p.timeDeltas[i + 1] ?? dtUs;
    selfMs.set(p.samples[i]!, (selfMs.get(p.samples[i]!) ?? 0) + next / 1000);
  }
  const fns = new Map<string, number>();
  const areas = new Map<string, number>();
  const callers = new Map<string, number>();
  const owners = new Map<string, number>();
  const product = new Map<string, number>();
  let total = 0;
  for (const [id, ms] of selfMs) {
    const f = byId.get(id)!.callFrame;
    if (f.functionName === '(idle)') continue;
    total += ms;
    const key = frameName(f);
    fns.set(key, (fns.get(key) ?? 0) + ms);
    const area = areaOf(f);
    areas.set(area, (areas.get(area) ?? 0) + ms);
    const pf = productFrame(id, byId, parent);
    product.set(pf, (product.get(pf) ?? 0) + ms);
    if (o.callersOf?.test(f.functionName)) {
      const chain: string[] = [];
      for (let up = parent.get(id), d = 0; up !== undefined && d < (o.depth ?? 3); up = parent.get(up), d++) {
        chain.push(frameName(byId.get(up)!.callFrame));
      }
      const k = chain.join(' < ');
      callers.set(k, (callers.get(k) ?? 0) + ms);
      const owner = `${f.functionName} <- ${ownerOf(id, byId, parent)}`;
      owners.set(owner, (owners.get(owner) ?? 0) + ms);
    }
  }
  const sorted = (m: Map<string, number>): Share[] =>
    [...m.entries()].map(([name, ms]) => ({ name, ms, share: ms / total })).sort((a, b) => b.ms - a.ms);
  return {
    totalMs: total,
    functions: sorted(fns),
    areas: sorted(areas),
    callers: sorted(callers),
    owners: sorted(owners),
    product: sorted(product),
  };
}

export function formatSummary(file: string, top = 25, o: SummaryOptions = {}): string {
  const s = summarize(file, o);
  const line = (x: Share) =>
    `${(x.share * 100).toFixed(1).padStart(5)}%  ${x.ms.toFixed(0).padStart(7)} ms  ${x.name}`;
  const window = o.fromUs !== undefined ? ' in the timed window' : '';
  return [
    `${file}: ${(s.totalMs / 1000).toFixed(2)} s of CPU samples${window} (idle excluded)`,
    'self time by area:',
    ...s.areas.slice(0, 15).map(line),
    `top ${top} functions by self time:`,
    ...s.functions.slice(0, top).map(line),
    `by the nearest geo-sync (src/) frame on the stack, i.e. including the library work it asked for:`,
    ...s.product.slice(0, top).map(line),
    ...(o.callersOf
      ? [
          `callers of /${o.callersOf.source}/ (share of all samples):`,
          ...s.callers.slice(0, 15).map(line),
          `the same, by the nearest package or geo-sync folder on the stack (who asked for it):`,
          ...s.owners.slice(0, 15).map(line),
        ]
      : []),
  ].join('\n');
}

function flag(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  const file = args[0];
  if (!file || file.startsWith('--')) {
    process.stderr.write(
      'usage: node --import tsx bench/profile-top.ts <file.cpuprofile> [--top N] [--window window.json] [--callers REGEX] [--depth N]\n',
    );
    process.exit(2);
  }
  const o: SummaryOptions = {};
  const windowFile = flag(args, '--window');
  if (windowFile) {
    const w = JSON.parse(readFileSync(windowFile, 'utf8')) as { startUs: number; endUs: number };
    o.fromUs = w.startUs;
    o.toUs = w.endUs;
  }
  const callers = flag(args, '--callers');
  if (callers) o.callersOf = new RegExp(callers);
  const depth = flag(args, '--depth');
  if (depth) o.depth = Number(depth);
  process.stdout.write(formatSummary(file, Number(flag(args, '--top') ?? 25), o) + '\n');
}
