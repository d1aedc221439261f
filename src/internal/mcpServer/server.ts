/**
 * A server: its sessions, each a Peer over a Transport, and what it tells all of them
 * (list changes, resource updates, log messages).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as McpSchema from "../../McpSchema.js"
import type { ListKind, McpServer, Options, Outbound } from "../../McpServer.js"
import * as Memory from "../../Memory.js"
import * as Peer from "../../Peer.js"
import { Transport } from "../../Transport.js"
import { traced } from "../traced.js"
import { peerHandlers, Session } from "./session.js"
import * as Tasks from "./tasks.js"

export { invalidParams, resourceNotFound, unknownPrompt, unknownTool } from "./errors.js"

const LIST_CHANGED: Record<ListKind, string> = {
  tools: McpSchema.Method.ToolsListChanged,
  resources: McpSchema.Method.ResourcesListChanged,
  prompts: McpSchema.Method.PromptsListChanged
}

// Starts one session over the Transport in context; it leaves `live` when its Scope closes.
const connect = (options: Options, live: Set<Session>) => (outbound: Outbound = {}) =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const session = new Session(options, scope, outbound)
    if (options.tasks !== undefined) {
      session.tasks = yield* Tasks.make({
        tasks: options.tasks,
        pageSize: session.pageSize,
        notify: (method, params) => session.notify(method, params)
      })
    }
    const peer = yield* Peer.make({ handlers: peerHandlers(session) })
    session.peer = peer
    session.view = {
      peer,
      client: () => session.client,
      level: () => session.level,
      caller: outbound.caller,
      closed: peer.closed,
      notify: session.notify,
      request: session.send
    }
    live.add(session)
    yield* Effect.addFinalizer(() => Effect.sync(() => live.delete(session)))
    return session.view
  })

/** Makes a server (see `McpServer.make`). */
export const make = (options: Options): Effect.Effect<McpServer, never, Scope.Scope> =>
  Effect.gen(function*() {
    const live = new Set<Session>()
    // Sessions outlive no server: once its Scope closes, nothing more is told to them.
    yield* Effect.addFinalizer(() => Effect.sync(() => live.clear()))
    const each = (f: (session: Session) => Effect.Effect<void> | undefined) =>
      Effect.suspend(() => {
        const effects: Array<Effect.Effect<void>> = []
        for (const session of live) {
          const effect = session.initialized ? f(session) : undefined
          if (effect !== undefined) effects.push(effect)
        }
        return Effect.all(effects, { discard: true })
      })
    const start = traced("McpServer.connect")(connect(options, live))
    return {
      serve: Effect.scoped(Effect.flatMap(start(), (session) => session.closed)),
      connect: start,
      notifyListChanged: traced("McpServer.notifyListChanged")((kind: ListKind) =>
        each((session) => session.announces(kind) ? session.notify(LIST_CHANGED[kind], undefined) : undefined)
      ),
      notifyResourceUpdated: traced("McpServer.notifyResourceUpdated")((uri: string) =>
        each((session) =>
          session.subscriptions.has(uri) ? session.notify(McpSchema.Method.ResourcesUpdated, { uri }) : undefined
        )
      ),
      log: traced("McpServer.log")((level: McpSchema.LoggingLevel, data: unknown, logger?: string) =>
        each((session) =>
          session.admits(level)
            ? session.notify(
              McpSchema.Method.LoggingMessage,
              logger === undefined ? { level, data } : { level, logger, data }
            )
            : undefined
        )
      ),
      sessions: () => live.size
    }
  })

/** A client's Memory transport linked to a new session of `server` (see `McpServer.connectMemory`). */
export const connectMemory = (
  server: McpServer,
  options: { readonly name?: string | undefined; readonly outbound?: Outbound | undefined } = {}
) =>
  Effect.gen(function*() {
    const [client, end] = yield* Memory.makePair({ server: options.name ?? "memory", client: "client" })
    const session = yield* Effect.provideService(server.connect(options.outbound), Transport, end)
    return { transport: client, session }
  })
