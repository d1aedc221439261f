import { describe, expect, it } from "@effect/vitest"
import { build } from "esbuild"
import { fileURLToPath } from "node:url"

// McpError is on every path, a client's start included: it must not bring `effect/Schema`
// (which loads fast-check and builds classes at import) with it. Its Schemas are in
// McpErrorSchema, for what sends errors over a wire.
describe("McpError", () => {
  it("loads no effect/Schema, through none of its imports", async () => {
    const result = await build({
      absWorkingDir: fileURLToPath(new URL("..", import.meta.url)),
      entryPoints: ["src/McpError.ts"],
      bundle: true,
      write: false,
      metafile: true,
      format: "esm",
      platform: "node",
      logLevel: "silent"
    })
    const inputs = Object.keys(result.metafile.inputs)
    expect(inputs.some((input) => input.endsWith("effect/dist/esm/Data.js"))).toBe(true)
    expect(inputs.filter((input) => /effect\/dist\/esm\/(Schema|FastCheck)\.js$/.test(input))).toEqual([])
  })
})
