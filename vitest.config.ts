import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration tests share one PostgreSQL; each file uses its own schema-free database objects,
    // but DuckDB and the simulator are cheap, so files run in parallel on the 2 cores.
    pool: 'forks',
  },
});
