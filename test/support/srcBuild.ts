// src/ built once per test run for the end-to-end files: each of them runs in a fresh process
// (vitest.config.ts), where vite-node transformed and evaluated the hundreds of src/ modules it
// imports one by one again, at 1–2 s of CPU a file. Instead the global setup bundles every src/
// module those files (and the support files, fixtures and examples they import) name into one
// ESM build with shared chunks, dependencies left as imports so that `effect` stays the one
// instance the tests use; the e2e project resolves their src/ imports to it (`srcBuildPlugin`)
// and Node loads it natively. One copy of each module: Context tags and error classes agree.
// Stack traces still name src/ lines: vitest's source-map support reads the build's maps.
import { build } from "esbuild"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { Plugin } from "vite"
import { CLI_BUNDLE } from "./cliBundle.js"

const root = fileURLToPath(new URL("../..", import.meta.url))
const SRC = path.join(root, "src")
const E2E = path.join(root, "test/e2e")

/** The folder of the run's src/ build, beside its CLI bundle. */
export const SRC_BUILD = path.join(CLI_BUNDLE, "..", "src")

/** The modules of that build, for vitest's `server.deps.external` (Node loads them). */
export const SRC_BUILT = new RegExp(`^${(SRC_BUILD + path.sep).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`)

// Every specifier of a static or dynamic import or an export-from in a module's text.
const SPECIFIER = /\b(?:from|import)\s*\(?\s*["']([^"']+)["']/g

const inside = (dir: string, file: string) => file.startsWith(dir + path.sep)

// The TypeScript file a `.js` specifier names, as tsc and vite resolve it.
const sourceOf = (file: string): string | undefined =>
  [file.replace(/\.js$/, ".ts"), file.replace(/\.mjs$/, ".mts"), file].find((candidate) =>
    fs.statSync(candidate, { throwIfNoEntry: false })?.isFile()
  )

/**
 * The src/ modules the e2e files load: the relative imports of test/e2e followed through every
 * file outside src/ and node_modules (support files, fixtures, examples) to the first src/
 * module on each path. Derived from the files as they are, so other src/ changes need nothing.
 */
export const srcEntries = (): ReadonlyArray<string> => {
  const entries = new Set<string>()
  const seen = new Set<string>()
  const queue = fs.readdirSync(E2E, { recursive: true, encoding: "utf8" }).map((name) => path.join(E2E, name))
  for (let file = queue.pop(); file !== undefined; file = queue.pop()) {
    if (seen.has(file) || !/\.[mc]?[jt]s$/.test(file) || !fs.statSync(file).isFile()) continue
    seen.add(file)
    for (const [, specifier] of fs.readFileSync(file, "utf8").matchAll(SPECIFIER)) {
      if (!specifier!.startsWith(".")) continue
      const target = sourceOf(path.resolve(path.dirname(file), specifier!))
      if (target === undefined || inside(path.join(root, "node_modules"), target)) continue
      if (inside(SRC, target)) entries.add(target)
      else queue.push(target)
    }
  }
  return [...entries].sort()
}

// Where the build puts the module built from `source` (a file of src/).
const builtPath = (source: string) => path.join(SRC_BUILD, path.relative(SRC, source)).replace(/\.[mc]?ts$/, ".mjs")

/** Builds `srcEntries()` into `SRC_BUILD`, emptied first, with linked source maps. */
export const buildSrc = async (): Promise<void> => {
  fs.rmSync(SRC_BUILD, { recursive: true, force: true })
  await build({
    absWorkingDir: root,
    entryPoints: srcEntries().map((file) => path.relative(root, file)),
    outbase: "src",
    outdir: SRC_BUILD,
    outExtension: { ".js": ".mjs" },
    chunkNames: "chunks/[name]-[hash]",
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    packages: "external",
    // Names as the modules give them (bundling renames clashing ones): what a test reads of a
    // class or function name stays what src/ says.
    keepNames: true,
    sourcemap: "linked",
    logLevel: "warning"
  })
}

/**
 * The e2e project's resolver: a src/ module imported from outside src/ is the build's copy,
 * which vitest then leaves to Node (`server.deps.external`). A src/ module the build lacks is
 * an error, as a second, transformed copy beside the built one would split identities.
 */
export const srcBuildPlugin = (): Plugin => ({
  name: "mcp-fleet:src-build",
  enforce: "pre",
  resolveId(specifier, importer) {
    if (importer === undefined || !specifier.startsWith(".") || inside(SRC, importer)) return null
    const source = sourceOf(path.resolve(path.dirname(importer), specifier))
    if (source === undefined || !inside(SRC, source)) return null
    const built = builtPath(source)
    if (!fs.existsSync(built)) {
      this.error(`${path.relative(root, source)} is not in the e2e build of src/ (test/support/srcBuild.ts)`)
    }
    return built
  }
})
