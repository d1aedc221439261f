// Each test file's `it.effect`, `it.scoped` and the others as @effect/vitest defines them (on
// the TestClock and the other test services), again as the file starts. @effect/vitest puts
// them on vitest's own `it`, and its `layer(…)` puts over them, on that same object, its
// suite's testers: with `excludeTestServices` (support/everythingSuite.ts) ones without a
// TestClock. The test files share their processes, vitest and that build of @effect/vitest
// (vitest.config.ts), so the next file's `it.scoped` was the last suite's, on the live Clock.
import { effect, flakyTest, it, layer, live, prop, scoped, scopedLive } from "@effect/vitest"

Object.assign(it, { effect, flakyTest, layer, live, prop, scoped, scopedLive })
