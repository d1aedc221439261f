// A real fleet for the model bridges' tests: server-everything, server-memory and
// server-filesystem from npm, and the fixtures `growing` (a tool added by list_changed) and
// `waiting` (a call that ends only when cancelled), each a child process, with the Policy
// given, in a temp folder removed with the Scope.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { createRequire } from "node:module"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as Policy from "../../src/Policy.js"
import * as ServerRegistry from "../../src/ServerRegistry.js"
import type * as ServerSpec from "../../src/ServerSpec.js"
import { fixtureSpec, tempDir } from "../../src/testing/node.js"
import { server } from "./bundle.js"
import { EVERYTHING_STDIO } from "./everythingSuite.js"
import { hangGuard } from "./guard.js"
import { Platform } from "./platform.js"

const require = createRequire(import.meta.url)
const entry = (name: string) =>
  path.join(path.dirname(require.resolve(`@modelcontextprotocol/${name}/package.json`)), "dist", "index.js")

/** The servers, in one temp folder: filesystem may use only it, memory keeps its graph there. */
export const agentServers = (dir: string): ReadonlyArray<ServerSpec.ServerSpec> => [
  fixtureSpec("everything", EVERYTHING_STDIO, { args: ["stdio"] }),
  fixtureSpec("memory", server("memory"), { env: { MEMORY_FILE_PATH: path.join(dir, "memory.jsonl") } }),
  fixtureSpec("filesystem", entry("server-filesystem"), { args: [dir] }),
  fixtureSpec("growing", fileURLToPath(new URL("../fixtures/growing.mjs", import.meta.url))),
  fixtureSpec("waiting", fileURLToPath(new URL("../fixtures/waiting.mjs", import.meta.url)))
]

/**
 * The temp folder, and the registry (every server ready) with the Policy `config` (and an
 * approver if given) as a Context to provide; the servers end and the folder is removed
 * when the Scope closes.
 */
export const agentFleet = (config: Policy.Config = {}, approve?: Policy.Approval["approve"]) =>
  Effect.gen(function*() {
    const dir = yield* tempDir()
    const servers = agentServers(dir)
    const registry = Layer.scoped(
      ServerRegistry.ServerRegistry,
      Effect.tap(
        ServerRegistry.make({ servers, refreshDebounce: "20 millis" }),
        (registry) =>
          Effect.orDie(registry.awaitReady({ servers: servers.map((spec) => spec.name), timeout: hangGuard(30_000) }))
      )
    ).pipe(Layer.provide(Platform))
    const policy = Policy.layer(config).pipe(
      Layer.provide(approve === undefined ? Layer.empty : Policy.layerApproval(approve))
    )
    const context = yield* Layer.build(Layer.provideMerge(policy, registry))
    return { dir, context, registry: Context.get(context, ServerRegistry.ServerRegistry) }
  })
