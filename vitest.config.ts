import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/_global-setup.ts'],
    exclude: ['test/e2e/**', 'node_modules/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Tests spawn CLI processes; two cores, so keep files mostly sequential.
    fileParallelism: true,
    maxWorkers: 2,
    // One module graph per worker, not per file: loading lib/ again for each of ~90 files was a third of the CPU
    // (measured: 272 s → 212 s wall, 367 s → 250 s CPU). Tests keep their state in sandboxes and Contexts, not modules.
    isolate: false,
  },
})
