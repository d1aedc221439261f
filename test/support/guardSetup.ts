// Each test file's hang guards from the load as the file starts: vitest.config.ts reads the
// load once, as the run starts, when the one-minute average has not yet seen what the run
// (and whatever runs beside it) adds, so that a run started on a quiet machine kept 30 s
// guards all through a load of 29.
import { vi } from "vitest"
import { hangGuard } from "./guard.js"

const guard = hangGuard(30_000)
vi.setConfig({ testTimeout: guard, hookTimeout: guard })
