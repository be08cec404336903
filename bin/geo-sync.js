#!/usr/bin/env node
// Runs the compiled CLI (dist/). `npm ci` builds it (the `prepare` script); in a checkout whose
// src/ changed since the last build it is rebuilt first, so `npx geo-sync` never runs stale code.
import { existsSync } from 'node:fs';

const builder = new URL('../scripts/build.mjs', import.meta.url);
if (existsSync(new URL('../src/', import.meta.url)) && existsSync(builder)) {
  const { build, isBuildFresh } = await import(builder.href);
  if (!isBuildFresh()) {
    process.stderr.write('geo-sync: src/ changed since the last build: rebuilding dist/\n');
    try {
      build({ quiet: true });
    } catch (e) {
      process.stderr.write(`${e.message}\n`);
      process.exit(1);
    }
  }
}
const cli = new URL('../dist/cli.js', import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write('geo-sync is not built: run `npm ci` or `npm run build` in the geo-sync directory\n');
  process.exit(1);
}
// Stack traces in logs point at the TypeScript sources (dist/ carries source maps).
process.setSourceMapsEnabled(true);
await import(cli.href);
