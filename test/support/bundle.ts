// A TypeScript script (an example, a fixture) bundled into one file for a test to spawn, as
// the CLI is: started with tsx, such a script costs about 7 s of CPU (tsx resolves and loads a
// thousand modules each time), so that on a busy machine its first answer could take longer
// than a client waits; bundled it starts on about half a second.
import { build } from "esbuild"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { threadId } from "node:worker_threads"
import { CLI_BUNDLE } from "./cliBundle.js"

const root = fileURLToPath(new URL("../..", import.meta.url))

/** The folder of the run's bundled scripts, emptied by the global setup. */
export const SCRIPTS = path.join(CLI_BUNDLE, "..", "scripts")

/**
 * Bundles `entry` (a path from the repository's root) beside the test run's CLI bundle (under
 * node_modules, where the bundle's few external packages resolve); resolves with the bundle's
 * path. The bundle is the calling worker's own (test files bundling one entry side by side
 * do not write one file), and its `import.meta.url` is the entry's: what a script finds beside
 * itself (a fixture its sibling fixtures, an example its fleet.json) stays where it is.
 */
export const bundled = async (entry: string): Promise<string> => {
  const outfile = path.join(SCRIPTS, `${path.basename(entry, path.extname(entry))}-${process.pid}-${threadId}.mjs`)
  await build({
    absWorkingDir: root,
    entryPoints: [entry],
    outfile,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    define: { "import.meta.url": JSON.stringify(pathToFileURL(path.resolve(root, entry)).href) },
    // As scripts/bundle-cli.mjs: ESM builds where there is one, and a require() for the
    // bundled CommonJS dependencies; jsonc-parser and ws's native helpers load at run time
    // (the banner is not rewritten by `define`: they resolve from the bundle's folder).
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
