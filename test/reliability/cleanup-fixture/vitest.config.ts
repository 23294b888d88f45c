// For test/reliability/cleanup.test.ts: the fixture with the global setup and per-file hooks of the real runs.
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  root: resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..'),
  test: {
    include: ['test/reliability/cleanup-fixture/*.fixture.ts'],
    globalSetup: ['test/_global-setup.ts'],
    setupFiles: ['test/_per-file.ts'],
    testTimeout: 60_000,
  },
})
