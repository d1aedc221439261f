/**
 * How the benchmarks bundle what they run: one esbuild bundle of a program's own code, its
 * packages (Effect, the SDK) loaded from node_modules as installed — what an application
 * built from it runs. Under tsx, each function creation pays for `keepNames` (~5 µs per
 * call at c=64), a cost of the loader, not of any client.
 *
 * @module
 */
import { build } from "esbuild"
import * as path from "node:path"

/**
 * Bundles `entry` (relative to `root`) into `outdir`; returns the path of the file to run.
 * The bundle is split at dynamic imports, as an application's bundler would split it: a
 * client's stdio run then does not load what only its HTTP path imports (undici, the HTTP
 * transport), which a single file would hoist into its static imports.
 */
export const bundle = async (root: string, entry: string, outdir: string): Promise<string> => {
  await build({
    absWorkingDir: root,
    entryPoints: { main: entry },
    outdir,
    outExtension: { ".js": ".mjs" },
    splitting: true,
    bundle: true,
    packages: "external",
    format: "esm",
    platform: "node",
    target: "node20",
    logLevel: "warning"
  })
  return path.join(outdir, "main.mjs")
}
