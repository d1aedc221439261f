// Hang guards that grow with the machine's load: a test's timeout is not a product bound
// (those are asserted on the TestClock, or with `bound`/`margin` of processes.ts), only a
// stop for a test that hangs, and a busy machine runs an end-to-end story of real processes
// several times slower.
import * as os from "node:os"

/** How much slower the machine runs now: 1 when quiet, up to 4 at a load of 3 per core. */
export const slowdown = (): number => Math.min(4, Math.max(1, os.loadavg()[0]! / os.cpus().length))

/** A test's timeout of `ms` on a quiet machine, grown by the current `slowdown`. */
export const hangGuard = (ms: number): number => Math.round(ms * slowdown())
