// Bundles the `mcp-fleet` command from src/cli/ into one directory: `main.cjs`, the whole CLI in
// one CommonJS file (about a thousand modules otherwise, and a third of the start-up), and
// `bin.js`, the executable, which answers `--version` alone and runs main.cjs with a V8 code
// cache (src/cli/bin.ts): Node 20 caches no compile of an ES module, and a CommonJS script's it
// can. The chunks an ES build would split off (undici, the cluster) are in main.cjs; with the
// code cache, what a run does not call costs its reading only.
// `npm run build` writes dist/cli/bundle/ (the package's bin) without a sourcemap: the map of
// the bundle is 12 MB, and a packed install has no use for it; the test suite bundles its own
// copy, with a map for its stack traces, once (test/support/globalSetup.ts) and runs the CLI from it.
import { build } from "esbuild"
import { createHash } from "node:crypto"
import { readFileSync, rmSync, writeFileSync } from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))

// Packages few runs of a command use, each with a CommonJS build: in the bundle, a stand-in
// that require()s the package the first time it is called, so a start (a gateway over a lazy
// fleet, say) does not compile them: yaml (a skill's frontmatter, 250 kB) and minisearch
// (the tool search index, built at the first search). The stand-in has what src/ uses of each.
const deferred = {
  yaml: `export const parse = (...args) => (loaded ??= require("yaml")).parse(...args)`,
  minisearch: `export default function MiniSearch(...args) { return new (loaded ??= require("minisearch"))(...args) }`
}
const deferPackages = {
  name: "defer-packages",
  setup(build) {
    const filter = new RegExp(`^(${Object.keys(deferred).join("|")})$`)
    // The stand-in's own require() is left to Node, at run time.
    build.onResolve(
      { filter },
      (args) =>
        args.kind === "require-call" ? { path: args.path, external: true } : { path: args.path, namespace: "deferred" }
    )
    build.onLoad({ filter: /.*/, namespace: "deferred" }, (args) => ({
      contents: `let loaded\n${deferred[args.path]}\n`,
      loader: "js"
    }))
  }
}

// What both builds share.
const common = {
  absWorkingDir: root,
  bundle: true,
  platform: "node",
  target: "node20",
  minifySyntax: true,
  minifyWhitespace: true,
  logLevel: "warning"
}

/**
 * Bundles the CLI into `outdir`, emptied first (files of an earlier build would be packed
 * too), with a linked sourcemap unless `sourcemap` is false.
 */
export const bundleCli = async (outdir, { sourcemap = true } = {}) => {
  rmSync(path.resolve(root, outdir), { recursive: true, force: true })
  const main = path.resolve(root, outdir, "main.cjs")
  await build({
    ...common,
    entryPoints: ["src/cli/main.ts"],
    outfile: main,
    format: "cjs",
    sourcemap: sourcemap ? "linked" : false,
    // ESM builds of dependencies where they have one; jsonc-parser's is not importable the
    // way Node's CommonJS interop imports it, so it stays a dependency loaded at run time,
    // as do ws's optional native helpers.
    mainFields: ["module", "main"],
    external: ["jsonc-parser", "bufferutil", "utf-8-validate", "@energetic-ai/*"],
    plugins: [deferPackages],
    // The modules that find files beside themselves (the dashboard's, the embedder's) do it
    // from the bundle's own URL. Strict, as the ES modules it is made of.
    define: { "import.meta.url": "__mcpFleetUrl" },
    banner: { js: "\"use strict\";const __mcpFleetUrl = require(\"node:url\").pathToFileURL(__filename).href;" }
  })
  // What main.cjs leaves to Node's import() (a package it does not bundle, the dashboard's
  // script) goes through bin.js's: a script run from a V8 code cache has none of its own.
  const text = readFileSync(main, "utf8").replace(/(?<![\w$.])import\(/g, "__mcpFleetImport(")
  writeFileSync(main, text)
  // The code cache of main.cjs is kept by this digest: a cache of another build never applies.
  const digest = createHash("sha256").update(text).digest("hex")
  return build({
    ...common,
    entryPoints: ["src/cli/bin.ts"],
    outfile: path.resolve(root, outdir, "bin.js"),
    format: "esm",
    define: { MCP_FLEET_MAIN_DIGEST: JSON.stringify(digest) }
  })
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await bundleCli("dist/cli/bundle", { sourcemap: false })
