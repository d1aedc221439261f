/**
 * How the benchmarks bundle what they run, in one of two setups an application chooses:
 *
 * - `external`: one esbuild bundle of a program's own code, its packages (Effect, the SDK)
 *   loaded from node_modules as installed — each package module a separate ES module.
 * - `bundled`: the packages inlined too and tree-shaken (esbuild honours each package's
 *   `sideEffects`), as a deployed application or the CLI's own bundle is built.
 *
 * Under tsx, each function creation pays for `keepNames` (~5 µs per call at c=64), a cost of
 * the loader, not of any client.
 *
 * @module
 */
import { build } from "esbuild"
import * as path from "node:path"

/** Whether packages stay in node_modules (`external`) or are inlined and tree-shaken (`bundled`). */
export type Setup = "external" | "bundled"

// An ES module bundle has no `require`; inlined CommonJS packages (the SDK's cross-spawn, ...)
// call it for Node's built-ins, so give them one, as an application's build does.
const REQUIRE_SHIM = `import { createRequire as __benchCreateRequire } from "node:module";
const require = __benchCreateRequire(import.meta.url);`

/**
 * Bundles `entry` (relative to `root`) into `outdir`; returns the path of the file to run.
 * The bundle is split at dynamic imports, as an application's bundler would split it: a
 * client's stdio run then does not load what only its HTTP path imports (undici, the HTTP
 * transport), which a single file would hoist into its static imports.
 */
export const bundle = async (
  root: string,
  entry: string,
  outdir: string,
  setup: Setup = "external"
): Promise<string> => {
  await build({
    absWorkingDir: root,
    entryPoints: { main: entry },
    outdir,
    outExtension: { ".js": ".mjs" },
    splitting: true,
    bundle: true,
    ...(setup === "external" ? { packages: "external" } : { banner: { js: REQUIRE_SHIM } }),
    format: "esm",
    platform: "node",
    target: "node20",
    logLevel: "warning"
  })
  return path.join(outdir, "main.mjs")
}
