#!/usr/bin/env node
// `npm run bench`: runs bench/index.ts through tsx, as bin/geo-sync.js runs the CLI.
// The pipeline under test is the compiled dist/ (bench/pipeline.ts): rebuild it first if src/
// changed, as bin/geo-sync.js does, so a figure never comes from stale code.
import { register } from 'tsx/esm/api';
import { build } from '../scripts/build.mjs';

build({ quiet: true });
register();
await import('../bench/index.ts');
