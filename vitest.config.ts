import { defineConfig } from "vitest/config"
import { hangGuard } from "./test/support/guard.js"
import { SRC_BUILT, srcBuildPlugin } from "./test/support/srcBuild.js"

// The timeouts are hang guards, not product bounds (those are asserted on the TestClock, or
// on the wall clock with a margin measured under load: test/support/processes.ts `bound`):
// 30 s on a quiet machine, more when the machine is busy, since an end-to-end story of a
// dozen real processes then takes that much longer — up to 4 times at a load of 3 per core.
// A test that needs longer says so with `hangGuard` too.
const guard = hangGuard(30_000)

export default defineConfig({
  test: {
    // The CLI is bundled once, as the package ships it (scripts/bundle-cli.mjs); PostgreSQL is
    // the machine's, or one started from npm when nothing answers (test/support/postgresSetup.ts).
    globalSetup: ["test/support/globalSetup.ts", "test/support/postgresSetup.ts"],
    // The guards below again at each file's start, from the load then; @effect/vitest's
    // testers as it defines them; and each file's process.env restored as it ends.
    setupFiles: ["test/support/guardSetup.ts", "test/support/effectVitestSetup.ts", "test/support/envSetup.ts"],
    // Servers' and the fleet's logs are part of what a failing test shows, and noise otherwise.
    silent: "passed-only",
    testTimeout: guard,
    hookTimeout: guard,
    // Two pools side by side, neither starting a process or thread per file (about a second of
    // CPU each). The in-memory tests share worker threads and their module cache. The tests of
    // real processes, the CLI and sockets run in three forks, each running file after file:
    // vitest evaluates a file's test and support modules afresh (`isolate` of the e2e project
    // below), while Node keeps the src/ build and packages loaded; each file cleans up what it
    // started and its environment markers go with it (support/envSetup.ts). Three forks on two
    // cores: many of those tests wait on processes they started rather than burn CPU. The pool
    // keeps all three (`minForks`): tinypool's ending of an idle fork fails the run ("Terminating
    // worker thread") and left forks running.
    poolOptions: {
      threads: { maxThreads: 2, minThreads: 1, isolate: false },
      forks: { maxForks: 3, minForks: 3, isolate: false }
    },
    projects: [
      {
        extends: true,
        test: { name: "unit", include: ["test/**/*.test.ts"], exclude: ["test/e2e/**"], pool: "threads" }
      },
      {
        extends: true,
        // src/ as one build made by the global setup, loaded by Node (test/support/srcBuild.ts).
        plugins: [srcBuildPlugin()],
        test: {
          name: "e2e",
          include: ["test/e2e/**/*.test.ts"],
          pool: "forks",
          // The fork's modules of test/ again for each file: a support module's state and its
          // hooks (support/cli.ts's `afterAll`) are each file's own. The pool reads the root's
          // `isolate` (processes kept), the fork this one (modules reset).
          poolOptions: { forks: { isolate: true } },
          server: { deps: { external: [SRC_BUILT] } }
        }
      }
    ]
  }
})
