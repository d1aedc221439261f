/**
 * What a stdio client loads before its first call: the static import graph of `McpClient`
 * and `Stdio`, as a bundler splits it at dynamic imports (`bench/bundle.ts` does the same).
 * Packages only some clients use stay behind a dynamic import, so a client that never uses
 * them does not carry them resident (`yaml` alone is ~1.3 MB of RSS).
 */
import { build, type Metafile } from "esbuild"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"

const root = fileURLToPath(new URL("..", import.meta.url))
const outdir = mkdtempSync(path.join(tmpdir(), "mcp-fleet-graph-"))
afterAll(() => rmSync(outdir, { recursive: true, force: true }))

/** The packages reached from `entry` by static imports alone, and by any import. */
const packagesOf = async (entry: string) => {
  const { metafile } = await build({
    absWorkingDir: root,
    entryPoints: [entry],
    outdir,
    write: false,
    metafile: true,
    splitting: true,
    bundle: true,
    packages: "external",
    format: "esm",
    platform: "node",
    logLevel: "silent"
  })
  const outputs: Metafile["outputs"] = metafile.outputs
  const main = Object.keys(outputs).find((file) => outputs[file]!.entryPoint === entry)!
  const reach = (kinds: ReadonlySet<string>) => {
    const seen = new Set<string>()
    const packages = new Set<string>()
    const visit = (file: string) => {
      if (seen.has(file)) return
      seen.add(file)
      for (const imported of outputs[file]!.imports) {
        if (!kinds.has(imported.kind)) continue
        if (imported.external === true) packages.add(imported.path)
        else visit(imported.path)
      }
    }
    visit(main)
    return packages
  }
  return {
    static: reach(new Set(["import-statement"])),
    all: reach(new Set(["import-statement", "dynamic-import"]))
  }
}

describe("footprint: what a stdio client loads up front", () => {
  it("McpClient reaches yaml only behind a dynamic import", async () => {
    const client = await packagesOf("src/McpClient.ts")
    // The skills' frontmatter parser is there, for the client that loads a skill...
    expect(client.all.has("yaml")).toBe(true)
    // ...and not loaded before.
    expect(client.static.has("yaml")).toBe(false)
  }, 60_000)

  it("Stdio needs no platform service, so nothing of @effect/platform-node", async () => {
    const stdio = await packagesOf("src/Stdio.ts")
    expect(stdio.static.has("effect/Effect")).toBe(true)
    expect([...stdio.all].filter((name) => name.startsWith("@effect/platform"))).toEqual([])
  }, 60_000)
})
