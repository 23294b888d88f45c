// The e2e suite: the real claude / codex / gemini CLIs against the mock model API (test/e2e/mock-server.mjs).
// Run: node test/e2e/setup.mjs && npx vitest run --config test/e2e/vitest.config.ts
// (The main vitest.config.ts excludes test/e2e/**.)
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')

export default defineConfig({
  root,
  test: {
    include: ['test/e2e/**/*.test.ts'],
    exclude: ['node_modules/**', '.cache/**'],
    // builds dist/ when sources are newer: the loop tests run the built CLI, as users get it
    globalSetup: ['test/_global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    // The real CLIs take 1-2 s and ~300 MB each; on 2 cores, one file at a time keeps timings honest.
    fileParallelism: false,
    maxWorkers: 1,
  },
})
