#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx, so a checkout works after `npm ci`
// with no build step. `npm run build` produces dist/ for those who want plain JS.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli.ts');
