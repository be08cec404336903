import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { defineConfig } from 'vitest/config';

/** Where the long files live: real processes, simulators over sockets, whole syncs. */
const LONG_FIRST = ['test/integration/', 'test/bench/', 'test/distributed/', 'test/deploy/'];

/**
 * Long files first when vitest has no durations of its own (a fresh clone, as in CI). Vitest
 * then orders files by size, and a long integration file that starts last runs alone on one
 * worker at the end while the other is idle: the suite's length is its longest tail. With
 * durations cached from an earlier run, vitest's own order (longest first) is kept.
 */
class LongFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const root = this.ctx.config.root;
    const path = (f: TestSpecification) => relative(root, f.moduleId).replaceAll('\\', '/');
    const known = sorted.every((f) => this.ctx.cache.getFileTestResults(`${f.project.name}:${path(f)}`));
    if (known) return sorted;
    const rank = (f: TestSpecification) => (LONG_FIRST.some((dir) => path(f).startsWith(dir)) ? 0 : 1);
    // Array.prototype.sort is stable: within each group, vitest's order (larger files first).
    return [...sorted].sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration tests share one PostgreSQL; each file uses its own database (or DuckDB file) and
    // its own simulator, so files run in parallel. Two at once, whatever the core count: Vitest's
    // default (cores - 1) runs them one by one on the 2-core CI machines, and most of their time is
    // waiting on sockets and timers, not CPU.
    pool: 'forks',
    maxWorkers: 2,
    sequence: { sequencer: LongFirstSequencer },
  },
});
