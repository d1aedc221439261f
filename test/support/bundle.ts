// A TypeScript script (an example, a fixture) bundled into one file for a test to spawn, as
// the CLI is: started with tsx, such a script costs about 7 s of CPU (tsx resolves and loads a
// thousand modules each time), so that on a busy machine its first answer could take longer
// than a client waits; bundled it starts on about half a second.
import { build, type BuildOptions } from "esbuild"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { threadId } from "node:worker_threads"
import { CLI_BUNDLE } from "./cliBundle.js"

const root = fileURLToPath(new URL("../..", import.meta.url))

/**
 * Packages a test's bundle leaves to Node, as scripts/bundle-cli.mjs does: jsonc-parser's ESM
 * build is not importable the way Node's CommonJS interop imports it; ws's optional native
 * helpers and the sentence encoder find their own files at run time.
 */
export const RUN_TIME_PACKAGES = ["jsonc-parser", "bufferutil", "utf-8-validate", "@energetic-ai"]

/**
 * How a test's bundles are built, as scripts/bundle-cli.mjs builds the CLI: ESM for Node 20,
 * the ESM builds of dependencies where they have one, and a require() for the bundled
 * CommonJS ones.
 */
export const NODE_BUNDLE = {
  bundle: true,
  format: "esm",
  platform: "node",
  target: "node20",
  mainFields: ["module", "main"],
  banner: {
    js:
      "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);"
  },
  logLevel: "warning"
} satisfies BuildOptions

/** `packages` and their subpaths, as esbuild's `external` names them. */
export const externals = (packages: ReadonlyArray<string>): Array<string> =>
  packages.flatMap((name) => [name, `${name}/*`])

/** The folder of the run's bundled scripts, emptied by the global setup. */
export const SCRIPTS = path.join(CLI_BUNDLE, "..", "scripts")

// Each input of a build (as its metafile names them, from the root) with its modification time.
const stamps = (inputs: ReadonlyArray<string>): string =>
  inputs.map((file) => `${fs.statSync(path.resolve(root, file), { throwIfNoEntry: false })?.mtimeMs} ${file}`).join("\n")

// The bundle an earlier call of the run made of an entry, when none of its inputs changed since.
const reusable = (outfile: string, inputsFile: string): boolean => {
  if (!fs.existsSync(inputsFile) || !fs.existsSync(outfile)) return false
  const recorded = fs.readFileSync(inputsFile, "utf8")
  return stamps(recorded.split("\n").map((line) => line.slice(line.indexOf(" ") + 1))) === recorded
}

/**
 * Bundles `entry` (a path from the repository's root) beside the test run's CLI bundle (under
 * node_modules, where the bundle's few external packages resolve); resolves with the bundle's
 * path. One bundle of an entry serves the run's test files (four of them start the conformance
 * fixture): built once, with the modification times of its inputs beside it, and built again
 * when one changed (a watch run). Each build writes files of its own and renames them into
 * place, so that files bundling one entry side by side do not write one file. The bundle's
 * `import.meta.url` is the entry's: what a script finds beside itself (a fixture its sibling
 * fixtures, an example its fleet.json) stays where it is.
 */
export const bundled = async (entry: string): Promise<string> => {
  const name = path.join(SCRIPTS, entry.replace(/\.[mc]?[jt]s$/, "").replace(/[/\\]/g, "_"))
  const outfile = `${name}.mjs`
  const inputsFile = `${name}.inputs`
  if (reusable(outfile, inputsFile)) return outfile
  const own = `${name}-${process.pid}-${threadId}`
  const started = Date.now()
  const { metafile } = await build({
    absWorkingDir: root,
    entryPoints: [entry],
    outfile: `${own}.mjs`,
    ...NODE_BUNDLE,
    // The banner is not rewritten by `define`: the packages left to Node resolve from the bundle's folder.
    define: { "import.meta.url": JSON.stringify(pathToFileURL(path.resolve(root, entry)).href) },
    external: externals(RUN_TIME_PACKAGES),
    metafile: true
  })
  fs.renameSync(`${own}.mjs`, outfile)
  const inputs = Object.keys(metafile.inputs)
  // An input changed while it was read is not recorded: the next call builds again.
  if (inputs.every((file) => (fs.statSync(path.resolve(root, file), { throwIfNoEntry: false })?.mtimeMs ?? Infinity) < started)) {
    fs.writeFileSync(`${own}.inputs`, stamps(inputs))
    fs.renameSync(`${own}.inputs`, inputsFile)
  }
  return outfile
}
