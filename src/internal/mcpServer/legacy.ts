/**
 * The legacy era (2024-11-05 … 2025-11-25): requests in a stateful session. Initialize
 * agrees on the revision, tells the client and makes the session's handlers; every other
 * request but ping is refused until then. The session keeps its client, its log level
 * (`logging/setLevel`) and its resource subscriptions, and is told what changes (list
 * changes, resource updates, log messages). A tool call that carries `task` runs as one of
 * the server's 2025-11-25 tasks (`tasks.ts`), which `tasks/*` follow.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import { isRecord } from "effect/Predicate"
import * as Scope from "effect/Scope"
import type * as JsonRpc from "../../JsonRpc.js"
import * as McpSchema from "../../McpSchema.js"
import type { Client, Options } from "../../McpServer.js"
import type * as Peer from "../../Peer.js"
import { Context } from "./context.js"
import { type Era, LIST_CHANGED } from "./era.js"
import { invalidParams, invalidRequest, methodNotFound, taskMismatch, unknownTool } from "./errors.js"
import { isLevel } from "./logging.js"
import { callTool, capabilities, type Method, notServed, shared, spanned, stringParam } from "./methods.js"
import type { Session } from "./session.js"
import * as Tasks from "./tasks.js"

/** The legacy era of a server: an `Era`, and the sessions it tells what changes. */
export interface Legacy extends Era {
  /** The server's live sessions (each leaves when its Scope closes). */
  readonly sessions: Set<Session>
}

// A revision the server speaks: the client's when it is one, else the latest.
const negotiate = (requested: unknown): string =>
  typeof requested === "string" && (McpSchema.SUPPORTED_PROTOCOL_VERSIONS as ReadonlyArray<string>).includes(requested)
    ? requested
    : McpSchema.LATEST_PROTOCOL_VERSION

// 2025-11-25 tasks, as initialize declares them to a client of that revision or later.
const TASKS: McpSchema.ServerCapabilities = { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } }

// What initialize tells: the client, and the session's handlers once made for it.
const begin = (session: Session, request: JsonRpc.Request): Effect.Effect<void, Peer.HandlerError> =>
  Effect.suspend(() => {
    if (session.initialized) return Effect.fail(invalidRequest("The session is already initialized"))
    const params = request.params
    if (!isRecord(params)) return Effect.fail(invalidParams("initialize needs params"))
    const client: Client = {
      protocolVersion: session.options.protocolVersion ?? negotiate(params.protocolVersion),
      capabilities: isRecord(params.capabilities) ? params.capabilities as McpSchema.ClientCapabilities : {},
      info: isRecord(params.clientInfo) ? params.clientInfo as unknown as McpSchema.Implementation : undefined
    }
    session.client = client
    const make = session.options.handlers
    if (typeof make !== "function" || session.handlers !== undefined) return Effect.void
    return Effect.map(Scope.extend(make(client, session.view), session.scope), (handlers) => {
      session.handlers = handlers
    })
  })

const initialize: Method = (_request, ctx) =>
  Effect.sync(() => {
    const { options } = ctx.session
    const revision = ctx.client.protocolVersion
    const own = options.tasks === undefined || revision < "2025-11-25" ? {} : TASKS
    return {
      protocolVersion: revision,
      capabilities: capabilities(options, ctx.session.handlers ?? {}, revision, own),
      serverInfo: options.serverInfo,
      ...(options.instructions === undefined ? {} : { instructions: options.instructions })
    }
  })

// resources/subscribe and unsubscribe: the session keeps the URIs; the handler may refuse.
const subscription = (subscribe: boolean): Method => (request, ctx) => {
  const resources = ctx.session.handlers?.resources
  if (resources === undefined) return notServed(request)
  const uri = stringParam(request, "uri")
  if (typeof uri !== "string") return Effect.fail(uri)
  const told = subscribe ? resources.subscribe?.(uri, ctx) : resources.unsubscribe?.(uri, ctx)
  const keep = Effect.sync(() => {
    if (subscribe) ctx.session.subscriptions.add(uri)
    else ctx.session.subscriptions.delete(uri)
    return {}
  })
  return told === undefined ? keep : Effect.zipRight(told, keep)
}

// resources/read: a caching hint in the result (`ttlMs`, `cacheScope`) is the modern
// revision's, told to no legacy client.
const read: Method = (request, ctx) =>
  Effect.map(shared[McpSchema.Method.ResourcesRead]!(request, ctx), (result) => {
    if (!("ttlMs" in result) && !("cacheScope" in result)) return result
    const { cacheScope: _scope, ttlMs: _ttl, ...rest } = result
    return rest
  })

const setLevel: Method = (request, ctx) => {
  const level = request.params?.level
  if (!isLevel(level)) return Effect.fail(invalidParams(`logging/setLevel: unknown level ${JSON.stringify(level)}`))
  ctx.session.level = level
  return Effect.succeed({})
}

// tools/call: a task-augmented call is a task when the tool allows it (-32601 when it does
// not); any other, the tool's own answer.
const callOrStart = (tasks: Tasks.Tasks): Method => (request, ctx) => {
  const tools = ctx.session.handlers?.tools
  const name = request.params?.name
  if (request.params?.task === undefined || tools === undefined || typeof name !== "string") {
    return callTool(request, ctx)
  }
  const args = request.params?.arguments ?? {}
  if (!isRecord(args)) return Effect.fail(invalidParams("tools/call: 'arguments' must be an object"))
  return Effect.flatMap(tools.list(ctx), (all) => {
    const tool = all.find((candidate) => candidate.name === name)
    if (tool === undefined) return Effect.fail(unknownTool(name))
    if (!Tasks.runsAsTask(tool)) return Effect.fail(taskMismatch(`Tool ${name} does not support tasks`))
    return tasks.start(ctx.session, request, (task) => tools.call(name, args, task))
  })
}

// The methods only the legacy revisions have; a server without tasks answers none of tasks/*.
const own = (tasks: Tasks.Tasks | undefined): Record<string, Method> => {
  const task = (method: string): Method => (request, ctx) => {
    const handler = tasks?.handlers[method]
    return handler === undefined ? notServed(request) : handler(request, ctx.session)
  }
  return {
    [McpSchema.Method.Ping]: () => Effect.succeed({}),
    [McpSchema.Method.Initialize]: initialize,
    [McpSchema.Method.ResourcesRead]: read,
    [McpSchema.Method.ResourcesSubscribe]: subscription(true),
    [McpSchema.Method.ResourcesUnsubscribe]: subscription(false),
    [McpSchema.Method.LoggingSetLevel]: setLevel,
    ...(tasks === undefined ? {} : { [McpSchema.Method.ToolsCall]: callOrStart(tasks) }),
    [McpSchema.Method.TasksGet]: task(McpSchema.Method.TasksGet),
    [McpSchema.Method.TasksResult]: task(McpSchema.Method.TasksResult),
    [McpSchema.Method.TasksList]: task(McpSchema.Method.TasksList),
    [McpSchema.Method.TasksCancel]: task(McpSchema.Method.TasksCancel)
  }
}

// Initialize in `session`: the session is stateful once it answered.
const initializeIn = (
  session: Session,
  request: JsonRpc.Request,
  answer: Method
) =>
  begin(session, request).pipe(
    Effect.zipRight(answer(request, new Context(session, request))),
    Effect.tap((result) => {
      session.initialized = true
      session.declared = isRecord(result.capabilities) ? result.capabilities : {}
    })
  )

// Tells each initialized session what `f` gives it to tell, if anything.
const tellEach = (sessions: Set<Session>, f: (session: Session) => Effect.Effect<void> | undefined) =>
  Effect.suspend(() => {
    const effects: Array<Effect.Effect<void>> = []
    for (const session of sessions) {
      const effect = session.initialized ? f(session) : undefined
      if (effect !== undefined) effects.push(effect)
    }
    return Effect.all(effects, { discard: true })
  })

/**
 * The legacy era of a server with `options`: its methods (ping, initialize and the
 * built-ins, less those `Options.methods` replaces, and those), its sessions, its 2025-11-25
 * tasks when it runs tool calls as tasks (the server's: a session that ends leaves its
 * tasks to the next).
 */
export const make = (options: Options): Effect.Effect<Legacy, never, Scope.Scope> =>
  Effect.gen(function*() {
    const tasks = options.tasks === undefined
      ? undefined
      : yield* Tasks.make({ tasks: options.tasks, pageSize: options.pageSize ?? 100 })
    const table = new Map(
      Object.entries({ ...shared, ...own(tasks), ...options.methods })
        .map(([method, handler]) => [method, spanned(method, handler)])
    )
    const sessions = new Set<Session>()
    const answer = (session: Session, request: JsonRpc.Request) => {
      const method = request.method
      const run = table.get(method)
      if (run === undefined) return Effect.fail(methodNotFound(method))
      if (method === McpSchema.Method.Initialize) return initializeIn(session, request, run)
      // Ping is answered at any time in a session.
      if (!session.initialized && method !== McpSchema.Method.Ping) {
        return Effect.fail(invalidRequest("The session is not initialized"))
      }
      return run(request, new Context(session, request))
    }
    return {
      family: "legacy",
      methods: new Set(table.keys()),
      answer,
      sessions,
      listChanged: (kind) =>
        tellEach(sessions, (session) =>
          session.announces(kind) ? session.notify(LIST_CHANGED[kind], undefined) : undefined),
      resourceUpdated: (uri) =>
        tellEach(sessions, (session) =>
          session.subscriptions.has(uri) ? session.notify(McpSchema.Method.ResourcesUpdated, { uri }) : undefined),
      log: (level, data, logger) =>
        tellEach(sessions, (session) =>
          session.admits(level)
            ? session.notify(
              McpSchema.Method.LoggingMessage,
              logger === undefined ? { level, data } : { level, logger, data }
            )
            : undefined)
    }
  })
