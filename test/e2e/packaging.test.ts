// What `npm pack` ships: no install script (npm 11 warns every installer about one), and no
// sourcemap of the CLI bundle (12 MB nobody installing needs). The bundle is built as
// `npm run build` builds it, then packed as `npm pack` would (its prepack is the build).
import * as cp from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const root = fileURLToPath(new URL("../..", import.meta.url))
const MiB = 2 ** 20

describe("the packed package", () => {
  it("has no prepare script, and no sourcemap of the CLI bundle nor a file over 4 MiB", () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"))
    expect(Object.keys(manifest.scripts)).not.toContain("prepare")
    expect(Object.keys(manifest.scripts)).not.toContain("install")
    expect(Object.keys(manifest.scripts)).not.toContain("postinstall")

    cp.execFileSync(process.execPath, [path.join(root, "scripts/bundle-cli.mjs")], { cwd: root })
    const packed = JSON.parse(
      cp.execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: root, encoding: "utf8" })
    ) as Array<{ files: Array<{ path: string; size: number }> }>
    const files = packed[0]!.files
    expect(files.map((file) => file.path)).toContain("dist/cli/bundle/bin.js")
    // One build's files only: the bundle's folder is emptied before each build.
    expect(files.filter((file) => file.path.startsWith("dist/cli/bundle/")).map((file) => file.path).sort()).toEqual([
      "dist/cli/bundle/bin.js",
      "dist/cli/bundle/main.cjs"
    ])
    expect(files.filter((file) => file.path.startsWith("dist/cli/bundle/") && file.path.endsWith(".map"))).toEqual([])
    expect(files.filter((file) => file.size > 4 * MiB)).toEqual([])
  }, 120_000)
})
