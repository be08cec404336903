/**
 * A room's imports point down only (design notes, "Boundaries worth keeping").
 * A static scan of the sources: every relative import (static, type-only, re-export, dynamic)
 * of a module under src/api stays inside src/api, except the process-wide leaf modules; nothing
 * under src/distributed imports the wiring (src/app.ts) above it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');

/** Leaf modules any room may import: they import nothing of the project but each other. */
const LEAVES = ['abort.ts', 'json-text.ts', 'log.ts', 'redact.ts', 'time.ts', 'unreachable.ts'];

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm;

/** The project modules a file imports, as paths relative to src/ (packages left out). */
function projectImports(file: string, text = readFileSync(file, 'utf8')): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(SPECIFIER)) {
    const spec = m[1]!;
    if (spec.startsWith('.')) out.push(relative(SRC, resolve(dirname(file), spec)));
  }
  return out;
}

describe('imports point down', () => {
  it('the scan sees every kind of relative import', () => {
    const file = join(SRC, 'api', 'x.ts');
    const text = [
      "import { a } from '../transform/time.ts';",
      "import type { B } from './client.ts';",
      "export { c } from '../app.ts';",
      "import '../side-effect.ts';",
      "const d = await import('../load/index.ts');",
      "import { z } from 'zod';",
    ].join('\n');
    expect(projectImports(file, text)).toEqual([
      'transform/time.ts',
      'api/client.ts',
      'app.ts',
      'side-effect.ts',
      'load/index.ts',
    ]);
  });

  it('src/api imports nothing outside src/api but the leaf modules', () => {
    const wrong = filesUnder(join(SRC, 'api')).flatMap((f) =>
      projectImports(f)
        .filter((p) => !p.startsWith('api/') && !LEAVES.includes(p))
        .map((p) => `${relative(SRC, f)} -> ${p}`),
    );
    expect(wrong).toEqual([]);
  });

  it('the leaf modules import only each other', () => {
    const wrong = LEAVES.flatMap((leaf) =>
      projectImports(join(SRC, leaf))
        .filter((p) => !LEAVES.includes(p))
        .map((p) => `${leaf} -> ${p}`),
    );
    expect(wrong).toEqual([]);
  });

  it('src/distributed does not import the wiring above it (app.ts, cli.ts, commands/)', () => {
    const wrong = filesUnder(join(SRC, 'distributed')).flatMap((f) =>
      projectImports(f)
        .filter((p) => p === 'app.ts' || p === 'cli.ts' || p === 'pipeline.ts' || p.startsWith('commands/'))
        .map((p) => `${relative(SRC, f)} -> ${p}`),
    );
    expect(wrong).toEqual([]);
  });
});
