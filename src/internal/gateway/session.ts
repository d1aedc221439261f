/**
 * The MCP side of the gateway, whatever carries it: the method handlers of one client
 * session (initialize, the paginated lists, routed calls), and the fleet-wide hub that
 * turns catalog changes into list_changed notifications.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as PubSub from "effect/PubSub"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Catalog from "../../Catalog.js"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpError from "../../McpError.js"
import * as McpSchema from "../../McpSchema.js"
import * as Peer from "../../Peer.js"
import type { RegistryEvent } from "../../RegistryEvent.js"
import type * as ServerRegistry from "../../ServerRegistry.js"
import { Transport } from "../../Transport.js"

/**
 * What the gateway needs of the Policy service: the catalog clients may see, and tool calls
 * that go through its rules.
 */
export interface PolicyLike {
  readonly filter: (catalog: Catalog.Catalog) => Catalog.Catalog
  /** The filtered catalog now and after every change of the fleet or of the rules. */
  readonly catalog?: Stream.Stream<Catalog.Catalog> | undefined
  readonly callTool: (
    name: string,
    args?: Record<string, unknown> | undefined,
    options?: ServerRegistry.CallToolOptions | undefined
  ) => Effect.Effect<McpSchema.CallToolResult, McpError.McpError>
}

/** The options of the MCP side, resolved. */
export interface CoreOptions {
  readonly pageSize: number
  readonly serverInfo: McpSchema.Implementation
  readonly instructions: string | undefined
  readonly listChangedDebounce: Duration.DurationInput
}

/** A list whose change the clients are told about. */
export type ListKind = "tools" | "resources" | "prompts"

const listChangedMethod: Record<ListKind, string> = {
  tools: McpSchema.Method.ToolsListChanged,
  resources: McpSchema.Method.ResourcesListChanged,
  prompts: McpSchema.Method.PromptsListChanged
}

/** What every session of one gateway shares. */
export interface Fleet {
  readonly registry: ServerRegistry.ServerRegistry
  readonly policy: PolicyLike
  readonly options: CoreOptions
  /** The lists that changed, once per burst of fleet changes. */
  readonly listChanged: PubSub.PubSub<ListKind>
  /** How many sessions subscribe to each resource, by server and URI. */
  readonly subscribers: Map<string, number>
}

/**
 * Every protocol revision the gateway answers with; a client asking for another one gets the
 * latest.
 */
export const negotiate = (requested: unknown): McpSchema.ProtocolVersion =>
  typeof requested === "string" && (McpSchema.SUPPORTED_PROTOCOL_VERSIONS as ReadonlyArray<string>).includes(requested)
    ? requested as McpSchema.ProtocolVersion
    : McpSchema.LATEST_PROTOCOL_VERSION

// What clients see of each list, to tell real changes from catalog rebuilds that changed nothing.
const fingerprints = (catalog: Catalog.Catalog): Record<ListKind, string> => ({
  tools: JSON.stringify(catalog.tools.map((entry) => [entry.name, entry.tool])),
  resources: JSON.stringify([catalog.resources.map((entry) => entry.resource), catalog.templates.map((entry) => entry.template)]),
  prompts: JSON.stringify(catalog.prompts.map((entry) => [entry.name, entry.prompt]))
})

/**
 * Starts the hub of one gateway: it watches the catalog (as the policy filters it, and
 * again when the policy's rules change) and
 * publishes which lists changed, after the fleet has been quiet for the debounce, so a
 * burst of changes (a config reload, a restart) is one notification per list.
 */
export const makeFleet = (
  registry: ServerRegistry.ServerRegistry,
  policy: PolicyLike,
  options: CoreOptions
): Effect.Effect<Fleet, never, Scope.Scope> =>
  Effect.gen(function*() {
    const listChanged = yield* PubSub.unbounded<ListKind>()
    yield* Effect.addFinalizer(() => PubSub.shutdown(listChanged))
    let last = fingerprints(policy.filter(yield* SubscriptionRef.get(registry.catalog)))
    yield* (policy.catalog ?? Stream.map(registry.catalog.changes, policy.filter)).pipe(
      Stream.debounce(options.listChangedDebounce),
      Stream.runForEach((catalog) =>
        Effect.suspend(() => {
          const next = fingerprints(catalog)
          const changed = (["tools", "resources", "prompts"] as const).filter((kind) => next[kind] !== last[kind])
          last = next
          return PubSub.publishAll(listChanged, changed)
        })
      ),
      Effect.forkScoped
    )
    return { registry, policy, options, listChanged, subscribers: new Map() }
  })

/** How a session talks to its client. */
export interface Outbound {
  /**
   * Sends a notification. `related` is the request it belongs to (progress, a log message
   * of a routed call), so a transport with a stream per request sends it on that stream.
   */
  readonly notify: (
    method: string,
    params: Record<string, unknown> | undefined,
    related?: JsonRpc.RequestId | undefined
  ) => Effect.Effect<void>
}

/** One client's session: the handlers its Peer runs. */
export interface Session {
  readonly handlers: Record<string, Peer.Handler>
}

// Least severe first.
const LEVELS: ReadonlyArray<McpSchema.LoggingLevel> = McpSchema.LoggingLevel.literals

const invalidParams = (message: string) =>
  new Peer.HandlerError({ code: JsonRpc.ErrorCode.InvalidParams, message })

/** An unknown tool or prompt name: -32602, with the closest names the client may use. */
const unknownName = (what: "tool" | "prompt", name: string, names: Iterable<string>) =>
  invalidParams(McpError.make(undefined, new McpError.NotFoundReason({ what, name, suggestions: Catalog.suggest(name, names) })).message)

const resourceNotFound = (uri: string) =>
  new Peer.HandlerError({ code: JsonRpc.ErrorCode.ResourceNotFound, message: `Resource not found: ${uri}`, data: { uri } })

// --- pagination --------------------------------------------------------------------------

// A cursor names the list and the offset of the next page; base64url so clients treat it
// as opaque.
const encodeCursor = (kind: string, offset: number): string =>
  Buffer.from(JSON.stringify([kind, offset]), "utf8").toString("base64url")

const decodeCursor = (kind: string, cursor: unknown, length: number): number | undefined => {
  if (cursor === undefined) return 0
  if (typeof cursor !== "string") return undefined
  try {
    const [k, offset] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"))
    return k === kind && Number.isInteger(offset) && offset >= 0 && offset <= length ? offset : undefined
  } catch {
    return undefined
  }
}

const page = <A>(
  kind: string,
  key: string,
  items: ReadonlyArray<A>,
  request: JsonRpc.Request,
  size: number
): Effect.Effect<Record<string, unknown>, Peer.HandlerError> => {
  const offset = decodeCursor(kind, request.params?.cursor, items.length)
  if (offset === undefined) return Effect.fail(invalidParams(`Invalid cursor: ${JSON.stringify(request.params?.cursor)}`))
  const end = offset + size
  return Effect.succeed(
    end < items.length ? { [key]: items.slice(offset, end), nextCursor: encodeCursor(kind, end) } : { [key]: items.slice(offset) }
  )
}

// --- resources ---------------------------------------------------------------------------

// RFC 6570 templates as far as resource URIs use them: `{x}` is one path segment, `{+x}`
// and `{#x}` anything, `{?x,y}` / `{&x}` a query part.
const templateRegex = (template: string): RegExp => {
  let source = "^"
  let last = 0
  for (const match of template.matchAll(/\{([+#./;?&]?)[^}]*\}/g)) {
    source += template.slice(last, match.index).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
    const operator = match[1]
    source += operator === "+" || operator === "#" ? ".*" : operator === "?" || operator === "&" ? "(?:[?&].*)?" : "[^/?#]*"
    last = match.index + match[0].length
  }
  return new RegExp(source + template.slice(last).replace(/[.*+?^${}()|[\]\\]/g, "\\$&") + "$")
}

/** The server that owns a resource URI: one that lists it, else one whose template matches it. */
const ownerOf = (catalog: Catalog.Catalog, uri: string): string | undefined => {
  const listed = catalog.resources.find((entry) => entry.resource.uri === uri)
  if (listed !== undefined) return listed.server
  const templated = catalog.templates.find((entry) => {
    try {
      return templateRegex(entry.template.uriTemplate).test(uri)
    } catch {
      return false
    }
  })
  if (templated !== undefined) return templated.server
  // A server that offers resources without listing this one may still serve it.
  const servers = new Set([...catalog.resources, ...catalog.templates].map((entry) => entry.server))
  return servers.size === 1 ? [...servers][0] : undefined
}

// --- errors ------------------------------------------------------------------------------

/** A fleet error as the JSON-RPC error of a routed request. */
const handlerError = (error: McpError.McpError): Peer.HandlerError => {
  const reason = error.reason
  switch (reason._tag) {
    // The server's own error, passed through as it sent it.
    case "Protocol":
      return new Peer.HandlerError({
        code: reason.code,
        message: reason.message,
        ...(reason.data === undefined ? {} : { data: reason.data })
      })
    case "NotFound":
      return new Peer.HandlerError({
        code: reason.what === "resource" ? JsonRpc.ErrorCode.ResourceNotFound : JsonRpc.ErrorCode.InvalidParams,
        message: error.message
      })
    default:
      return new Peer.HandlerError({ code: JsonRpc.ErrorCode.InternalError, message: error.message })
  }
}

/**
 * A failed tool call as the client sees it. An unknown tool and the server's own JSON-RPC
 * error are protocol errors; a call the fleet could not carry out (server down, timeout,
 * refused by policy, arguments rejected) is a tool execution error, a result with
 * `isError: true`, so the model reads what went wrong and may try again.
 */
const toolFailure = (error: McpError.McpError): Effect.Effect<Record<string, unknown>, Peer.HandlerError> =>
  error.reason._tag === "NotFound" || error.reason._tag === "Protocol"
    ? Effect.fail(handlerError(error))
    : Effect.succeed({ content: [{ type: "text", text: error.message }], isError: true })

// --- the session -------------------------------------------------------------------------

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * Makes one client's session: its handlers, and fibers (in the Scope) that forward list
 * changes, log messages and resource updates to it. Resource subscriptions it made are
 * dropped at the servers when the Scope closes, unless another session still holds them.
 */
export const makeSession = (fleet: Fleet, outbound: Outbound): Effect.Effect<Session, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { options, policy, registry } = fleet
    let level: McpSchema.LoggingLevel | undefined
    // The requests in flight per server, for log messages of routed calls.
    const calls = new Map<string, Set<JsonRpc.RequestId>>()
    const subscribed = new Set<string>()

    const catalog = Effect.map(SubscriptionRef.get(registry.catalog), policy.filter)

    // Runs `effect` as a call to `server` made by `request`, so the server's log messages
    // while it runs go to this request's stream.
    const tracking = <A, E>(server: string, request: JsonRpc.Request, effect: Effect.Effect<A, E>) =>
      Effect.acquireUseRelease(
        Effect.sync(() => {
          let set = calls.get(server)
          if (set === undefined) calls.set(server, set = new Set())
          set.add(request.id)
        }),
        () => effect,
        () =>
          Effect.sync(() => {
            const set = calls.get(server)
            set?.delete(request.id)
            if (set?.size === 0) calls.delete(server)
          })
      )

    const progressOf = (request: JsonRpc.Request): Pick<Peer.RequestOptions, "onProgress"> => {
      const meta = request.params?._meta
      const token = isRecord(meta) ? meta.progressToken : undefined
      if (typeof token !== "string" && typeof token !== "number") return {}
      return {
        onProgress: (progress) =>
          outbound.notify(McpSchema.Method.Progress, {
            progressToken: token,
            progress: progress.progress,
            ...(progress.total === undefined ? {} : { total: progress.total }),
            ...(progress.message === undefined ? {} : { message: progress.message })
          }, request.id)
      }
    }

    const initialize: Peer.Handler = (request) =>
      Effect.sync(() => ({
        protocolVersion: negotiate(request.params?.protocolVersion),
        // The fleet changes while clients are connected, so the gateway declares all it
        // can route rather than what today's servers happen to offer.
        capabilities: {
          tools: { listChanged: true },
          resources: { subscribe: true, listChanged: true },
          prompts: { listChanged: true },
          completions: {},
          logging: {}
        },
        serverInfo: options.serverInfo,
        ...(options.instructions === undefined ? {} : { instructions: options.instructions })
      }))

    const callTool: Peer.Handler = (request) => {
      const name = request.params?.name
      if (typeof name !== "string") return Effect.fail(invalidParams("tools/call needs a string 'name'"))
      const args = request.params?.arguments
      if (args !== undefined && !isRecord(args)) return Effect.fail(invalidParams("tools/call 'arguments' must be an object"))
      const meta = request.params?._meta
      // The client's _meta goes on, except its progress token: the gateway has its own.
      const { progressToken: _, ...rest } = isRecord(meta) ? meta : {}
      return Effect.flatMap(catalog, (current) => {
        const entry = current.toolsByName.get(name)
        if (entry === undefined) return Effect.fail(unknownName("tool", name, current.toolsByName.keys()))
        const call = policy.callTool(name, args, {
          ...progressOf(request),
          ...(Object.keys(rest).length > 0 ? { meta: rest } : {})
        })
        return tracking(
          entry.server,
          request,
          Effect.matchEffect(call, { onFailure: toolFailure, onSuccess: (result) => Effect.succeed(result) })
        )
      })
    }

    const readResource: Peer.Handler = (request) => {
      const uri = request.params?.uri
      if (typeof uri !== "string") return Effect.fail(invalidParams("resources/read needs a string 'uri'"))
      return Effect.flatMap(catalog, (current) => {
        const server = ownerOf(current, uri)
        if (server === undefined) return Effect.fail(resourceNotFound(uri))
        return tracking(server, request, registry.readResource(server, uri)).pipe(Effect.mapError(handlerError))
      })
    }

    const getPrompt: Peer.Handler = (request) => {
      const name = request.params?.name
      if (typeof name !== "string") return Effect.fail(invalidParams("prompts/get needs a string 'name'"))
      const args = request.params?.arguments
      return Effect.flatMap(catalog, (current) => {
        const entry = current.promptsByName.get(name)
        if (entry === undefined) return Effect.fail(unknownName("prompt", name, current.promptsByName.keys()))
        return tracking(
          entry.server,
          request,
          registry.getPrompt(entry.server, entry.prompt.name, isRecord(args) ? args as Record<string, string> : undefined)
        ).pipe(Effect.mapError(handlerError))
      })
    }

    const noCompletion = { completion: { values: [], hasMore: false } }

    const complete: Peer.Handler = (request) => {
      const ref = request.params?.ref
      const argument = request.params?.argument
      if (!isRecord(ref) || !isRecord(argument) || typeof argument.name !== "string" || typeof argument.value !== "string") {
        return Effect.fail(invalidParams("completion/complete needs a 'ref' and an 'argument' with a name and a value"))
      }
      const context = request.params?.context
      return Effect.flatMap(catalog, (current) => {
        let target: { readonly server: string; readonly ref: McpSchema.PromptReference | McpSchema.ResourceTemplateReference }
        if (ref.type === "ref/prompt" && typeof ref.name === "string") {
          const entry = current.promptsByName.get(ref.name)
          if (entry === undefined) return Effect.fail(unknownName("prompt", ref.name, current.promptsByName.keys()))
          target = { server: entry.server, ref: { ...ref, type: "ref/prompt", name: entry.prompt.name } }
        } else if (ref.type === "ref/resource" && typeof ref.uri === "string") {
          const uri = ref.uri
          const template = current.templates.find((entry) => entry.template.uriTemplate === uri)
          const server = template?.server ?? ownerOf(current, uri)
          if (server === undefined) return Effect.succeed(noCompletion)
          target = { server, ref: { type: "ref/resource", uri } }
        } else {
          return Effect.fail(invalidParams("completion/complete: 'ref' must be a ref/prompt with a name or a ref/resource with a uri"))
        }
        return tracking(
          target.server,
          request,
          registry.complete(
            target.server,
            target.ref,
            { name: argument.name as string, value: argument.value as string },
            isRecord(context) ? context as { arguments?: Record<string, string> } : undefined
          )
        ).pipe(
          // A server that cannot complete has no suggestions, which is not the client's error.
          Effect.catchIf((error) => error.reason._tag === "Unsupported", () => Effect.succeed(noCompletion)),
          Effect.mapError(handlerError)
        )
      })
    }

    // Subscriptions are counted across sessions: the server is asked once per URI, and told
    // to stop when the last session lets go.
    const subscription = (request: JsonRpc.Request, subscribe: boolean) => {
      const uri = request.params?.uri
      if (typeof uri !== "string") return Effect.fail(invalidParams(`${request.method} needs a string 'uri'`))
      return Effect.flatMap(catalog, (current) => {
        const server = ownerOf(current, uri)
        if (server === undefined) return Effect.fail(resourceNotFound(uri))
        return Effect.as(
          subscribe ? acquire(server, uri) : release(server, uri),
          {}
        ).pipe(Effect.mapError(handlerError))
      })
    }

    const keyOf = (server: string, uri: string) => JSON.stringify([server, uri])
    const acquire = (server: string, uri: string) =>
      Effect.suspend(() => {
        const key = keyOf(server, uri)
        if (subscribed.has(key)) return Effect.void
        const count = fleet.subscribers.get(key) ?? 0
        const first = count === 0 ? registry.withClient(server, (client) => client.subscribeResource(uri)) : Effect.void
        return Effect.tap(first, () => {
          subscribed.add(key)
          fleet.subscribers.set(key, (fleet.subscribers.get(key) ?? 0) + 1)
        })
      })
    const release = (server: string, uri: string) =>
      Effect.suspend(() => {
        const key = keyOf(server, uri)
        if (!subscribed.delete(key)) return Effect.void
        const count = (fleet.subscribers.get(key) ?? 1) - 1
        if (count > 0) {
          fleet.subscribers.set(key, count)
          return Effect.void
        }
        fleet.subscribers.delete(key)
        return registry.withClient(server, (client) => client.unsubscribeResource(uri))
      })
    yield* Effect.addFinalizer(() =>
      Effect.forEach([...subscribed], (key) => {
        const [server, uri] = JSON.parse(key) as [string, string]
        return Effect.ignore(release(server, uri))
      }, { discard: true })
    )

    const setLevel: Peer.Handler = (request) => {
      const requested = request.params?.level
      if (typeof requested !== "string" || !LEVELS.includes(requested as McpSchema.LoggingLevel)) {
        return Effect.fail(invalidParams(`logging/setLevel: unknown level ${JSON.stringify(requested)}`))
      }
      level = requested as McpSchema.LoggingLevel
      return Effect.succeed({})
    }

    const handlers: Record<string, Peer.Handler> = {
      [McpSchema.Method.Initialize]: initialize,
      [McpSchema.Method.ToolsList]: (request) =>
        Effect.flatMap(catalog, (current) =>
          page("tools", "tools", current.tools.map((entry) => ({ ...entry.tool, name: entry.name })), request, options.pageSize)),
      [McpSchema.Method.ResourcesList]: (request) =>
        Effect.flatMap(catalog, (current) =>
          page("resources", "resources", current.resources.map((entry) => entry.resource), request, options.pageSize)),
      [McpSchema.Method.ResourcesTemplatesList]: (request) =>
        Effect.flatMap(catalog, (current) =>
          page(
            "templates",
            "resourceTemplates",
            current.templates.map((entry) => entry.template),
            request,
            options.pageSize
          )),
      [McpSchema.Method.PromptsList]: (request) =>
        Effect.flatMap(catalog, (current) =>
          page("prompts", "prompts", current.prompts.map((entry) => ({ ...entry.prompt, name: entry.name })), request, options.pageSize)),
      [McpSchema.Method.ToolsCall]: callTool,
      [McpSchema.Method.ResourcesRead]: readResource,
      [McpSchema.Method.ResourcesSubscribe]: (request) => subscription(request, true),
      [McpSchema.Method.ResourcesUnsubscribe]: (request) => subscription(request, false),
      [McpSchema.Method.PromptsGet]: getPrompt,
      [McpSchema.Method.CompletionComplete]: complete,
      [McpSchema.Method.LoggingSetLevel]: setLevel
    }

    // List changes, for as long as the session lives.
    const changes = yield* PubSub.subscribe(fleet.listChanged)
    yield* Queue.take(changes).pipe(
      Effect.flatMap((kind) => outbound.notify(listChangedMethod[kind], undefined)),
      Effect.forever,
      Effect.forkScoped
    )

    // A server's log message goes to the clients with a call in flight to it (on that
    // call's stream), and to clients that asked for log messages with logging/setLevel,
    // at or above their level.
    const admits = (messageLevel: McpSchema.LoggingLevel, inFlight: boolean) =>
      level === undefined ? inFlight : LEVELS.indexOf(messageLevel) >= LEVELS.indexOf(level)
    const onEvent = (event: RegistryEvent): Effect.Effect<void> => {
      switch (event._tag) {
        case "LogMessage": {
          const inFlight = calls.get(event.server)
          const related = inFlight === undefined ? undefined : [...inFlight].at(-1)
          if (!admits(event.level, related !== undefined)) return Effect.void
          return outbound.notify(McpSchema.Method.LoggingMessage, {
            level: event.level,
            logger: event.logger ?? event.server,
            data: event.data
          }, related)
        }
        case "ResourceUpdated":
          return subscribed.has(keyOf(event.server, event.uri))
            ? outbound.notify(McpSchema.Method.ResourcesUpdated, { uri: event.uri })
            : Effect.void
        default:
          return Effect.void
      }
    }
    const events = yield* registry.subscribe
    yield* Queue.take(events).pipe(Effect.flatMap(onEvent), Effect.forever, Effect.forkScoped)

    return { handlers }
  })

/**
 * Serves one client over the Transport in context, until it hangs up; returns why it ended.
 */
export const serveSession = (fleet: Fleet): Effect.Effect<McpError.McpError, never, Transport> =>
  Effect.scoped(Effect.gen(function*() {
    const transport = yield* Transport
    const session = yield* makeSession(fleet, {
      notify: (method, params) =>
        Effect.ignore(transport.send({ jsonrpc: "2.0", method, ...(params === undefined ? {} : { params }) }))
    })
    const peer = yield* Peer.make({ handlers: session.handlers })
    return yield* peer.closed
  }))

/** The defaults of the MCP side. */
export const resolveOptions = (options: {
  readonly pageSize?: number | undefined
  readonly serverInfo?: McpSchema.Implementation | undefined
  readonly instructions?: string | undefined
  readonly listChangedDebounce?: Duration.DurationInput | undefined
}): CoreOptions => ({
  pageSize: Math.max(1, Math.floor(options.pageSize ?? 100)),
  serverInfo: options.serverInfo ?? { name: "mcp-fleet", version: "0.1.0" },
  instructions: options.instructions,
  listChangedDebounce: options.listChangedDebounce ?? Duration.millis(100)
})
