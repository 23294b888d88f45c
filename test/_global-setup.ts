// vitest runs the built CLI, as users get it: build dist/ first when any source is newer.
import { ensureBuilt } from './_build.ts'

export default function setup() {
  ensureBuilt()
}
