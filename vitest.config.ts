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
  },
})
