// A TypeScript script (an example, a fixture) bundled into one file for a test to spawn, as
// the CLI is: started with tsx, such a script costs about 7 s of CPU (tsx resolves and loads a
// thousand modules each time), so that on a busy machine its first answer could take longer
// than a client waits; bundled it starts on about half a second.
import { build } from "esbuild"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { CLI_BUNDLE } from "./cliBundle.js"

const root = fileURLToPath(new URL("../..", import.meta.url))

/**
 * Bundles `entry` (a path from the repository's root) beside the test run's CLI bundle (under
 * node_modules, where the bundle's few external packages resolve), rebuilt on every call;
 * resolves with the bundle's path. One test file bundles a given entry.
 */
export const bundled = async (entry: string): Promise<string> => {
  const outfile = path.join(CLI_BUNDLE, "..", "scripts", `${path.basename(entry, path.extname(entry))}.mjs`)
  await build({
    absWorkingDir: root,
    entryPoints: [entry],
    outfile,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    // As scripts/bundle-cli.mjs: ESM builds where there is one, and a require() for the
    // bundled CommonJS dependencies; jsonc-parser and ws's native helpers load at run time.
    mainFields: ["module", "main"],
    external: ["jsonc-parser", "bufferutil", "utf-8-validate", "@energetic-ai/*"],
    banner: {
      js:
        "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);"
    },
    logLevel: "warning"
  })
  return outfile
}
