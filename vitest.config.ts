import { defineConfig } from 'vitest/config';

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
  },
});
