/** Where things are, whatever the working directory. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = resolve(BENCH_DIR, '..');
export const GEO_SYNC_BIN = join(REPO_ROOT, 'bin', 'geo-sync.js');
export const RSS_REPORTER = join(BENCH_DIR, 'rss-reporter.mjs');
export const RESULTS_FILE = join(BENCH_DIR, 'results.json');

/** A fresh temporary directory; removed by the returned function. */
export function tempDir(name: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), `geo-bench-${name}-`));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
