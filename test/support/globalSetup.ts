// Bundles the CLI once per test run, as `npm run build` does for the package's bin, so that
// CLI tests run the command people run, and each process starts from one file.
import * as fs from "node:fs"
import { SCRIPTS } from "./bundle.js"
import { CLI_BUNDLE } from "./cliBundle.js"

export default async function setup(): Promise<void> {
  // The scripts test files bundled in earlier runs (support/bundle.ts), one per process.
  fs.rmSync(SCRIPTS, { recursive: true, force: true })
  // @ts-expect-error: a plain .mjs script, without type declarations
  const { bundleCli } = await import("../../scripts/bundle-cli.mjs")
  await bundleCli(CLI_BUNDLE)
}
