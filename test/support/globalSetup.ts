// Bundles the CLI once per test run, as `npm run build` does for the package's bin, so that
// CLI tests run the command people run, and each process starts from one file; the real
// servers most tests start (support/bundle.ts `server`); and, when the run has end-to-end
// files, src/ for them (support/srcBuild.ts), all at once.
import * as fs from "node:fs"
import type { TestProject } from "vitest/node"
import { bundleServers, SCRIPTS } from "./bundle.js"
import { CLI_BUNDLE } from "./cliBundle.js"
import { buildSrc } from "./srcBuild.js"

// vitest runs the global setup of the root and again of each project (they extend the root's
// config), each time as a new module: the first call builds, the others wait for it.
const BUILT = Symbol.for("mcp-fleet/test-builds")

const buildAll = async (project: TestProject): Promise<void> => {
  // The scripts test files bundled in earlier runs (support/bundle.ts), one per process.
  fs.rmSync(SCRIPTS, { recursive: true, force: true })
  // @ts-expect-error: a plain .mjs script, without type declarations
  const { bundleCli } = await import("../../scripts/bundle-cli.mjs")
  const e2e = project.vitest.projects.some((each) => each.name === "e2e")
  await Promise.all([bundleCli(CLI_BUNDLE), e2e ? buildSrc() : undefined, bundleServers()])
}

export default function setup(project: TestProject): Promise<void> {
  const builds = globalThis as { [BUILT]?: Promise<void> }
  return (builds[BUILT] ??= buildAll(project))
}
