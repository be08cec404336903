#!/usr/bin/env node
// `npm run bench`: runs bench/index.ts through tsx, as bin/geo-sync.js runs the CLI.
import { register } from 'tsx/esm/api';

register();
await import('../bench/index.ts');
