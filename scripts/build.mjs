#!/usr/bin/env node
// Compiles src/ to dist/ (tsc, incremental) unless dist/ is already newer than every source.
// `npm ci` runs it (the `prepare` script), so a checkout is runnable right after install; the
// test suite runs it first (vitest globalSetup), so CLI tests never run a stale build.
// Without TypeScript installed (`npm ci --omit=dev`) an existing dist/ is kept as it is.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, utimesSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const stamp = join(root, 'dist', '.tsbuildinfo');

/** Newest modification time of the files that make up the build. */
function newest(dir) {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

export function isBuildFresh() {
  if (!existsSync(stamp)) return false;
  const inputs = Math.max(
    newest(join(root, 'src')),
    ...['tsconfig.json', 'tsconfig.build.json', 'package.json'].map((f) => statSync(join(root, f)).mtimeMs),
  );
  return statSync(stamp).mtimeMs >= inputs;
}

export function build({ quiet = false } = {}) {
  if (isBuildFresh()) return;
  let tsc;
  try {
    tsc = createRequire(join(root, 'package.json')).resolve('typescript/bin/tsc');
  } catch {
    if (existsSync(join(root, 'dist', 'cli.js'))) return;
    throw new Error(
      'geo-sync: dist/ is missing and TypeScript is not installed: run `npm ci` (with dev dependencies)',
    );
  }
  const r = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], {
    stdio: quiet ? ['ignore', 'pipe', 'pipe'] : 'inherit',
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`geo-sync: the build failed\n${r.stdout ?? ''}${r.stderr ?? ''}`);
  // tsc leaves its build info untouched when no output changed (e.g. files touched by a
  // checkout): mark the build as current anyway, or every run would rebuild.
  const now = new Date();
  utimesSync(stamp, now, now);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    build();
  } catch (e) {
    process.stderr.write(`${e.message}\n`);
    process.exit(1);
  }
}
