// A TypeScript script (an example, a fixture) bundled into one file for a test to spawn, as
// the CLI is: started with tsx, such a script costs about 7 s of CPU (tsx resolves and loads a
// thousand modules each time), so that on a busy machine its first answer could take longer
// than a client waits; bundled it starts on about half a second.
import { build, type BuildOptions } from "esbuild"
import * as fs from "node:fs"
import { createRequire } from "node:module"
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

// A file's modification time (a path from the root), if it is there.
const mtime = (file: string) => fs.statSync(path.resolve(root, file), { throwIfNoEntry: false })?.mtimeMs

// Each input of a build (as its metafile names them) with its modification time.
const stamps = (inputs: ReadonlyArray<string>): string => inputs.map((file) => `${mtime(file)} ${file}`).join("\n")

// The bundle an earlier call of the run made of an entry, when none of its inputs changed since.
const reusable = (outfile: string, inputsFile: string): boolean => {
  if (!fs.existsSync(inputsFile) || !fs.existsSync(outfile)) return false
  const recorded = fs.readFileSync(inputsFile, "utf8")
  return stamps(recorded.split("\n").map((line) => line.slice(line.indexOf(" ") + 1))) === recorded
}

/** Where `bundled` puts the bundle of `entry` (a path from the repository's root). */
export const bundlePath = (entry: string): string =>
  path.join(SCRIPTS, `${entry.replace(/\.[mc]?[jt]s$/, "").replace(/[/\\]/g, "_")}.mjs`)

/**
 * Bundles `entry` (a path from the repository's root) beside the test run's CLI bundle (under
 * node_modules, where the bundle's few external packages resolve); resolves with the bundle's
 * path. One bundle of an entry serves the run's test files (four of them start the conformance
 * fixture): built once, with the modification times of its inputs beside it, and built again
 * when one changed (a watch run). Each build writes files of its own and renames them into
 * place, so that files bundling one entry side by side do not write one file. The bundle's
 * `import.meta.url` is that of `metaOf` (the entry by default): what a script finds beside
 * itself (a fixture its sibling fixtures, an example its fleet.json) stays where it is.
 */
export const bundled = async (entry: string, metaOf: string = entry): Promise<string> => {
  const outfile = bundlePath(entry)
  const inputsFile = outfile.replace(/\.mjs$/, ".inputs")
  if (reusable(outfile, inputsFile)) return outfile
  const own = outfile.replace(/\.mjs$/, `-${process.pid}-${threadId}`)
  const started = Date.now()
  const { metafile } = await build({
    absWorkingDir: root,
    entryPoints: [entry],
    outfile: `${own}.mjs`,
    ...NODE_BUNDLE,
    // The banner is not rewritten by `define`: the packages left to Node resolve from the bundle's folder.
    define: { "import.meta.url": JSON.stringify(pathToFileURL(path.resolve(root, metaOf)).href) },
    external: externals(RUN_TIME_PACKAGES),
    metafile: true
  })
  fs.renameSync(`${own}.mjs`, outfile)
  const inputs = Object.keys(metafile.inputs)
  // An input changed while it was read is not recorded: the next call builds again.
  if (inputs.every((file) => (mtime(file) ?? Infinity) < started)) {
    fs.writeFileSync(`${own}.inputs`, stamps(inputs))
    fs.renameSync(`${own}.inputs`, inputsFile)
  }
  return outfile
}

const require = createRequire(import.meta.url)

// A file of an npm package, as a path from the repository's root.
const packageFile = (name: string, file: string) =>
  path.relative(root, path.join(path.dirname(require.resolve(`${name}/package.json`)), file))

/**
 * The real servers from npm that most tests start, bundled by the global setup: the published
 * packages load hundreds of modules at each start, about 0.3 s of CPU; their bundle half that.
 * Each keeps its `import.meta.url` (`metaOf`, else its entry's), from which it finds its own files.
 */
const REAL_SERVERS: Record<"everythingStdio" | "memory", { readonly entry: string; readonly metaOf?: string }> = {
  /** server-everything on stdio, ending when its stdin ends (the fixture's own comment says why). */
  everythingStdio: {
    entry: "test/fixtures/everything-stdio.mjs",
    metaOf: packageFile("@modelcontextprotocol/server-everything", "dist/resources/index.js")
  },
  memory: { entry: packageFile("@modelcontextprotocol/server-memory", "dist/index.js") }
}

/** Bundles `REAL_SERVERS` (the global setup, as the run starts). */
export const bundleServers = (): Promise<unknown> =>
  Promise.all(Object.values(REAL_SERVERS).map(({ entry, metaOf }) => bundled(entry, metaOf)))

/**
 * The script to run for one of those servers: its bundle when the test run made it, else (a
 * script run outside vitest) the package's own file.
 */
export const server = (name: keyof typeof REAL_SERVERS): string => {
  const { entry } = REAL_SERVERS[name]
  return process.env.VITEST !== undefined && fs.existsSync(bundlePath(entry))
    ? bundlePath(entry)
    : path.resolve(root, entry)
}
