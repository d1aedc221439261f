// Bundles the CLI once per test run, as `npm run build` does for the package's bin, so that
// CLI tests run the command people run, and each process starts from one file.
import { CLI_BUNDLE } from "./cliBundle.js"

export default async function setup(): Promise<void> {
  // @ts-expect-error: a plain .mjs script, without type declarations
  const { bundleCli } = await import("../../scripts/bundle-cli.mjs")
  await bundleCli(CLI_BUNDLE)
}
