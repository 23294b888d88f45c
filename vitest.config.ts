import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/_global-setup.ts'],
    setupFiles: ['test/_per-file.ts'],
    exclude: ['test/e2e/**', 'node_modules/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Three files at a time on two cores: while one waits on a process it started (a review's worker, a reviewer, a
    // CLI) the others use the core (measured idle on 2 cores: 2 workers 298 s, 3 workers 264 s, the same CPU).
    fileParallelism: true,
    maxWorkers: 3,
    // One module graph per worker, not per file: loading lib/ again for each of ~90 files was a third of the CPU
    // (measured: 272 s → 212 s wall, 367 s → 250 s CPU). Tests keep their state in sandboxes and Contexts, not modules.
    isolate: false,
  },
})
