/**
 * A server: its sessions, each a Peer over a Transport, and what it tells all of them
 * (list changes, resource updates, log messages).
 *
 * List changes, updates and log messages reach modern listen streams too. A modern request with
 * no session at all is answered by `answerAlone` (`alone.ts`): what HTTP runs per sessionless
 * POST.
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
import * as Alone from "./alone.js"
import { type Listener, wantsList, wantsResource } from "./listen.js"
import { peerHandlers, Session } from "./session.js"
import * as Stateless from "./stateless.js"
import * as Tasks from "./tasks.js"

export { invalidParams, missingClientCapability, resourceNotFound, unknownPrompt, unknownTool } from "./errors.js"

const LIST_CHANGED: Record<ListKind, string> = {
  tools: McpSchema.Method.ToolsListChanged,
  resources: McpSchema.Method.ResourcesListChanged,
  prompts: McpSchema.Method.PromptsListChanged
}

// Starts one session over the Transport in context; it leaves `live` when its Scope closes.
const connect =
  (options: Options, modern: Stateless.Modern, tasks: Tasks.Tasks | undefined, live: Set<Session>) =>
  (outbound: Outbound = {}) =>
    Effect.gen(function*() {
      const scope = yield* Effect.scope
      const session = new Session(options, scope, outbound, modern)
      session.tasks = tasks
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
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          live.delete(session)
          session.ended = true
        })
      )
      return session.view
    })

// How a server answers a modern request alone: under a symbol, outside the public
// interface, and kept by a spread (`items.ts` extends the server so).
const ALONE: unique symbol = Symbol("mcp-fleet/McpServer/answerAlone")

type WithAlone = McpServer & { readonly [ALONE]?: Alone.AnswerAlone | undefined }

/** How `server` answers a modern request without a session; none when it answers none. */
export const answerAlone = (server: McpServer): Alone.AnswerAlone | undefined => (server as WithAlone)[ALONE]

/** Makes a server (see `McpServer.make`). */
export const make = (given: Options): Effect.Effect<McpServer, never, Scope.Scope> =>
  Effect.gen(function*() {
    // Modern requests are answered unless turned off; the sessions read the resolved flag.
    const options: Options = given.modern === false ? given : { ...given, modern: true }
    const live = new Set<Session>()
    const modern = yield* Stateless.make(options)
    // 2025-11-25 tasks are the server's: a session that ends leaves its tasks to the next.
    const tasks = options.tasks === undefined
      ? undefined
      : yield* Tasks.make({ tasks: options.tasks, pageSize: options.pageSize ?? 100 })
    // Sessions and listen streams outlive no server: once its Scope closes, nothing more is told to them.
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        live.clear()
        modern.listeners.clear()
      })
    )
    const each = (f: (session: Session) => Effect.Effect<void> | undefined) =>
      Effect.suspend(() => {
        const effects: Array<Effect.Effect<void>> = []
        for (const session of live) {
          const effect = session.initialized ? f(session) : undefined
          if (effect !== undefined) effects.push(effect)
        }
        return Effect.all(effects, { discard: true })
      })
    // Modern clients are told on their subscriptions/listen streams, as far as each asked.
    const tell = (wants: (listener: Listener) => boolean, method: string, params?: Record<string, unknown>) =>
      Effect.suspend(() =>
        Effect.all([...modern.listeners].filter(wants).map((listener) => listener.tell(method, params)), {
          discard: true
        })
      )
    const start = traced("McpServer.connect")(connect(options, modern, tasks, live))
    const server: WithAlone = {
      serve: Effect.scoped(Effect.flatMap(start(), (session) => session.closed)),
      connect: start,
      notifyListChanged: traced("McpServer.notifyListChanged")((kind: ListKind) =>
        Effect.zipRight(
          each((session) => session.announces(kind) ? session.notify(LIST_CHANGED[kind], undefined) : undefined),
          tell((listener) => wantsList(listener, kind), LIST_CHANGED[kind])
        )
      ),
      notifyResourceUpdated: traced("McpServer.notifyResourceUpdated")((uri: string) =>
        Effect.zipRight(
          each((session) =>
            session.subscriptions.has(uri) ? session.notify(McpSchema.Method.ResourcesUpdated, { uri }) : undefined
          ),
          tell((listener) => wantsResource(listener, uri), McpSchema.Method.ResourcesUpdated, { uri })
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
      sessions: () => live.size,
      modern: options.modern === true,
      [ALONE]: options.modern === true ? Alone.make(options, modern, yield* Effect.scope) : undefined
    }
    return server
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
