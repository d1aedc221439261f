// Bundles the `mcp-fleet` command from src/cli/bin.ts into one directory: one file to load
// instead of about a thousand modules, so a command starts in a third of the time. `bin.js`
// stays tiny and answers `--version` without loading the rest (a chunk of its own).
// `npm run build` writes dist/cli/bundle/ (the package's bin) without a sourcemap: the map of
// the bundle is 12 MB, and a packed install has no use for it; the test suite bundles its own
// copy, with a map for its stack traces, once (test/support/globalSetup.ts) and runs the CLI from it.
import { build } from "esbuild"
import { rmSync } from "node:fs"
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

/**
 * Bundles the CLI into `outdir`, emptied first (chunks of an earlier build would be packed
 * too), with a linked sourcemap unless `sourcemap` is false.
 */
export const bundleCli = (outdir, { sourcemap = true } = {}) => {
  rmSync(path.resolve(root, outdir), { recursive: true, force: true })
  return build({
    absWorkingDir: root,
    entryPoints: ["src/cli/bin.ts"],
    outdir,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    sourcemap: sourcemap ? "linked" : false,
    // ESM builds of dependencies where they have one; jsonc-parser's is not importable the
    // way Node's CommonJS interop imports it, so it stays a dependency loaded at run time,
    // as do ws's optional native helpers.
    mainFields: ["module", "main"],
    external: ["jsonc-parser", "bufferutil", "utf-8-validate", "@energetic-ai/*"],
    minifySyntax: true,
    minifyWhitespace: true,
    plugins: [deferPackages],
    // Some bundled CommonJS dependencies call require(); give them one.
    banner: {
      js:
        "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);"
    },
    logLevel: "warning"
  })
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await bundleCli("dist/cli/bundle", { sourcemap: false })
