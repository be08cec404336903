/** Writes docs/data-dictionary.md from src/load/dictionary.ts (`npm run docs:dictionary`). */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { renderDataDictionary } from '../src/load/dictionary.ts';

const path = fileURLToPath(new URL('../docs/data-dictionary.md', import.meta.url));
writeFileSync(path, renderDataDictionary());
console.log(`wrote ${path}`);
