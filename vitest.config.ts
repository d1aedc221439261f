import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The CLI is bundled once, as the package ships it (scripts/bundle-cli.mjs).
    globalSetup: ["test/support/globalSetup.ts"],
    // Servers' and the fleet's logs are part of what a failing test shows, and noise otherwise.
    silent: "passed-only",
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Real child processes and sockets: two cores, keep the pool small.
    pool: "forks",
    poolOptions: { forks: { maxForks: 2, minForks: 1 } }
  }
})
