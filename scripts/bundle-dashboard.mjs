// Bundles the dashboard's page (ui/dashboard/: Preact components in htm templates, and its
// style sheet) with esbuild into one script and one style sheet: nothing loaded from a CDN,
// so the page works offline. `npm run build` writes them to dist/dashboard/ (what a packed
// install serves); in a checkout NodeDashboard calls `bundleDashboard()` itself, in memory.
// `node scripts/bundle-dashboard.mjs --size` prints the bundle's size, raw and gzipped.
import { build, stop } from "esbuild"
import { mkdirSync, writeFileSync } from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { gzipSync } from "node:zlib"

const root = fileURLToPath(new URL("..", import.meta.url))

/** The page's script and style sheet, minified, as text. */
export const bundleDashboard = async () => {
  // esbuild's service process ends with this call: a long-running dashboard keeps no child.
  const result = await build({
    absWorkingDir: root,
    entryPoints: ["ui/dashboard/main.js", "ui/dashboard/style.css"],
    outdir: "dashboard",
    bundle: true,
    write: false,
    format: "esm",
    platform: "browser",
    target: "es2020",
    minify: true,
    legalComments: "none",
    logLevel: "warning"
  }).finally(() => stop())
  const text = (extension) => result.outputFiles.find((file) => file.path.endsWith(extension)).text
  return { script: text(".js"), style: text(".css") }
}

/** Writes the page into `outdir` (app.js, app.css). */
export const writeDashboard = async (outdir) => {
  const { script, style } = await bundleDashboard()
  mkdirSync(path.resolve(root, outdir), { recursive: true })
  writeFileSync(path.resolve(root, outdir, "app.js"), script)
  writeFileSync(path.resolve(root, outdir, "app.css"), style)
  return { script, style }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { script, style } = await writeDashboard("dist/dashboard")
  if (process.argv.includes("--size")) {
    for (const [name, text] of [["app.js", script], ["app.css", style]]) {
      console.log(`${name}: ${Buffer.byteLength(text)} bytes, ${gzipSync(text).length} gzipped`)
    }
  }
}
