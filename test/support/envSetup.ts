// Each test file's process.env as the file found it, again once it ends: the e2e files share
// their processes (vitest.config.ts), and a file's markers (the variables its processes
// inherit, so that `survivors` finds them) are not the next file's.
import { afterAll } from "vitest"

const before = { ...process.env }

// Registered before the file's own hooks, so it runs after them (vitest runs `afterAll` in stack order).
afterAll(() => {
  for (const name of Object.keys(process.env)) if (!(name in before)) delete process.env[name]
  Object.assign(process.env, before)
})
