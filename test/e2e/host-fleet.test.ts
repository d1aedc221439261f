// The host features end to end on real servers from npm, each a child process of a fleet:
// server-everything's sampling, elicitation and roots tools answered by the fleet's Host
// services, and server-filesystem confined to the roots and following a change of them.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import * as Host from "../../src/Host.js"
import type * as McpSchema from "../../src/McpSchema.js"
import * as NodeHost from "../../src/NodeHost.js"
import * as ServerRegistry from "../../src/ServerRegistry.js"
import type * as ServerSpec from "../../src/ServerSpec.js"
import { tempDir } from "../../src/testing/node.js"
import { firstText } from "../../src/testing/Results.js"
import { EVERYTHING_STDIO } from "../support/everythingSuite.js"
import { hangGuard } from "../support/guard.js"
import { Platform } from "../support/platform.js"

const require = createRequire(import.meta.url)
const FILESYSTEM = path.join(
  path.dirname(require.resolve("@modelcontextprotocol/server-filesystem/package.json")),
  "dist",
  "index.js"
)

const node = (name: string, args: ReadonlyArray<string>, host?: Host.Features): ServerSpec.ServerSpec => ({
  name,
  transport: { type: "stdio", command: process.execPath, args: [...args] },
  ...(host === undefined ? {} : { host })
})

// The fleet, every server ready, on the Host services of `host`.
const fleet = (servers: ReadonlyArray<ServerSpec.ServerSpec>) =>
  Effect.gen(function*() {
    const registry = yield* ServerRegistry.make({ servers, refreshDebounce: "20 millis" })
    yield* registry.awaitReady({ servers: servers.map((spec) => spec.name), timeout: hangGuard(30_000) })
    return registry
  })

const sampled: Array<McpSchema.CreateMessageRequestParams> = []
const samplingLayer = Host.layerSampling({
  createMessage: (request) =>
    Effect.sync(() => {
      sampled.push(request)
      return {
        role: "assistant",
        content: { type: "text", text: "forty-two" },
        model: "scripted",
        stopReason: "endTurn"
      }
    })
})
const elicitationLayer = Host.layerElicitation({
  // Only what the user typed: the defaults of the schema fill the rest.
  elicit: () => Effect.succeed({ action: "accept", content: { name: "Ada Lovelace", check: true } })
})

const toolNames = (registry: ServerRegistry.ServerRegistry, server: string) =>
  Effect.map(
    registry.catalog.get,
    (catalog) => catalog.tools.filter((entry) => entry.server === server).map((entry) => entry.tool.name)
  )

// Calls until the text satisfies `done`: the server applies a roots change on its own time.
const callUntil = (
  registry: ServerRegistry.ServerRegistry,
  name: string,
  args: Record<string, unknown>,
  done: (text: string) => boolean
) =>
  registry.callTool(name, args).pipe(
    Effect.map(firstText),
    Effect.repeat({ schedule: Schedule.spaced("20 millis"), until: done }),
    Effect.timeout(hangGuard(10_000))
  )

describe("host features through the fleet", () => {
  it.scopedLive(
    "server-everything: sampling, elicitation and roots tools answered by the fleet's services",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir()
        const registry = yield* fleet([node("everything", [EVERYTHING_STDIO, "stdio"])]).pipe(
          Effect.provide(
            Layer.mergeAll(samplingLayer, elicitationLayer, Host.layerRoots([NodeHost.rootOf(dir)]), Platform)
          )
        )
        const names = yield* toolNames(registry, "everything")
        expect(names).toEqual(
          expect.arrayContaining(["trigger-sampling-request", "trigger-elicitation-request", "get-roots-list"])
        )

        const sample = yield* registry.callTool("mcp__everything__trigger-sampling-request", { prompt: "the answer?" })
        expect(firstText(sample)).toContain("forty-two")
        expect(sampled.at(-1)).toMatchObject({ systemPrompt: "You are a helpful test server.", maxTokens: 100 })

        const elicited = yield* registry.callTool("mcp__everything__trigger-elicitation-request", {})
        const text = elicited.content.map((block) => (block as McpSchema.TextContent).text).join("\n")
        expect(text).toContain("Ada Lovelace")
        // SEP-1034: the schema's defaults reached the server with what the user typed.
        expect(text).toContain("It was a dark and stormy night.")
        expect(text).toContain("42")

        const roots = yield* registry.callTool("mcp__everything__get-roots-list", {})
        expect(firstText(roots)).toContain(`URI: file://${dir}`)
      }),
    60_000
  )

  it.scopedLive("a server whose config turns the features off is offered none of them", () =>
    Effect.gen(function*() {
      const registry = yield* fleet([
        node("everything", [EVERYTHING_STDIO, "stdio"], { sampling: false, elicitation: false, roots: false })
      ]).pipe(Effect.provide(Layer.mergeAll(samplingLayer, elicitationLayer, Host.layerRoots(), Platform)))
      const names = yield* toolNames(registry, "everything")
      expect(names).not.toContain("trigger-sampling-request")
      expect(names).not.toContain("trigger-elicitation-request")
      expect(names).not.toContain("get-roots-list")
      expect(names).toContain("echo")
    }), hangGuard(60_000))

  it.scopedLive(
    "server-filesystem works in the roots only, and follows a change of them",
    () =>
      Effect.gen(function*() {
        const base = yield* tempDir()
        const first = path.join(base, "first")
        const second = path.join(base, "second")
        fs.mkdirSync(first)
        fs.mkdirSync(second)
        fs.writeFileSync(path.join(second, "note.txt"), "in the second root")
        // Started with `base`; the roots replace it.
        const roots = yield* SubscriptionRef.make<ReadonlyArray<McpSchema.Root>>([NodeHost.rootOf(first)])
        const registry = yield* fleet([node("filesystem", [FILESYSTEM, base])]).pipe(
          Effect.provideService(Host.Roots, { roots }),
          Effect.provide(Platform)
        )
        const allowed = (dir: string) => (text: string) => text.includes(dir) && !text.includes(`${base}\n`)
        yield* callUntil(registry, "mcp__filesystem__list_allowed_directories", {}, allowed(first))
        const note = path.join(second, "note.txt")
        const denied = yield* registry.callTool("mcp__filesystem__read_text_file", { path: note })
        expect(denied.isError).toBe(true)
        expect(firstText(denied)).toMatch(/outside allowed directories/i)

        yield* SubscriptionRef.set(roots, [NodeHost.rootOf(second)])
        yield* callUntil(registry, "mcp__filesystem__list_allowed_directories", {}, allowed(second))
        const read = yield* registry.callTool("mcp__filesystem__read_text_file", { path: note })
        expect(firstText(read)).toBe("in the second root")
      }),
    60_000
  )
})
