// Lazy fake servers whose catalogs are cached, as if each had run once: the set-up of the
// tests of parked lazy servers and their restores.
import * as Effect from "effect/Effect"
import * as CatalogCache from "../../src/CatalogCache.js"
import type * as ServerSpec from "../../src/ServerSpec.js"
import * as FakeServer from "../../src/testing/FakeServer.js"
import { text } from "../../src/testing/Results.js"
import * as ToolPins from "../../src/ToolPins.js"

/** A fake tool that answers with its name and its arguments. */
export const echoTool = (name: string): FakeServer.FakeTool => ({
  tool: { name, description: name, inputSchema: { type: "object" } },
  call: (args) => Effect.succeed(text(`${name}:${JSON.stringify(args)}`))
})

/** The tools a lazy fake offers unless told otherwise. */
export const TOOLS: ReadonlyArray<FakeServer.FakeTool> = [echoTool("echo"), echoTool("add")]

/** A lazy fake server offering `tools`. */
export const lazyFake = (name: string, tools: ReadonlyArray<FakeServer.FakeTool> = TOOLS) => ({
  ...FakeServer.spec({ name, tools, resources: [], prompts: [] }),
  lazy: true
})

/** Saves in `cache` the catalog of each of `specs`, offering `tools`, as its last run left it. */
export const saveCatalogs = (
  cache: CatalogCache.CatalogCache,
  specs: ReadonlyArray<ServerSpec.ServerSpec>,
  tools: ReadonlyArray<FakeServer.FakeTool> = TOOLS
) =>
  Effect.forEach(specs, (spec) =>
    cache.save(ToolPins.identity(spec), {
      digest: CatalogCache.digest(spec),
      savedAt: 0,
      lists: { tools: tools.map((tool) => tool.tool), resources: [], templates: [], prompts: [] }
    }), { discard: true })
