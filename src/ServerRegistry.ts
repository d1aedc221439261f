/**
 * The fleet: a set of supervised servers kept equal to a desired set of ServerSpecs, one
 * live catalog of everything they offer, a stream of every change, and calls routed to
 * the server that owns each tool.
 *
 * @since 0.1.0
 */
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import type * as HttpClient from "@effect/platform/HttpClient"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberMap from "effect/FiberMap"
import * as Layer from "effect/Layer"
import * as PubSub from "effect/PubSub"
import type * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Catalog from "./Catalog.js"
import { traced } from "./internal/traced.js"
import type * as McpClient from "./McpClient.js"
import * as McpError from "./McpError.js"
import type * as McpSchema from "./McpSchema.js"
import type { RegistryEvent } from "./RegistryEvent.js"
import * as ServerActor from "./internal/serverRegistry/serverActor.js"
import * as ServerSpec from "./ServerSpec.js"
import { describe as describeState, isTerminal, type ServerState } from "./ServerState.js"

/**
 * The services an actor connects with: processes for stdio servers, an HTTP client for
 * remote ones.
 *
 * @since 0.1.0
 */
export type Requirements = CommandExecutor.CommandExecutor | HttpClient.HttpClient

/**
 * How mcp-fleet presents itself to every server of the fleet.
 *
 * @since 0.1.0
 * @category models
 */
export type ClientOptions = Pick<McpClient.Options, "clientInfo" | "capabilities" | "handlers">

/**
 * How the registry runs its fleet.
 *
 * @since 0.1.0
 */
export interface Options {
  /** The servers to start with. More can come with `reconcile`. */
  readonly servers?: ReadonlyArray<ServerSpec.ServerSpec> | undefined
  /** Qualified-name rules of the catalog. */
  readonly naming?: Partial<Catalog.Naming> | undefined
  /** The fleet-wide restart policy; each server's spec may override fields of it. */
  readonly restart?: Partial<ServerSpec.RestartPolicy> | undefined
  /** How long to wait after a list_changed for more before re-listing. Default: 200 ms. */
  readonly refreshDebounce?: Duration.DurationInput | undefined
  /** How mcp-fleet presents itself to servers (clientInfo, capabilities, handlers). */
  readonly client?: ClientOptions | undefined
  /**
   * How many events a subscriber may fall behind by; past that it loses the oldest, so a
   * slow subscriber never holds the fleet up. Default: 1024.
   */
  readonly eventBuffer?: number | undefined
}

/**
 * What a reconcile did, by server name.
 *
 * @since 0.1.0
 */
export interface ReconcileResult {
  readonly added: ReadonlyArray<string>
  readonly removed: ReadonlyArray<string>
  readonly restarted: ReadonlyArray<string>
  readonly unchanged: ReadonlyArray<string>
}

/**
 * A server's status at one moment.
 *
 * @since 0.1.0
 */
export interface ServerStatus {
  readonly name: string
  readonly state: ServerState
  /** The configured transport, or the one in use when the server fell back to another. */
  readonly transport: ServerSpec.TransportSpec["type"]
  readonly required: boolean
  readonly protocolVersion: McpSchema.ProtocolVersion | undefined
  readonly serverInfo: McpSchema.Implementation | undefined
  readonly counts: { readonly tools: number; readonly resources: number; readonly templates: number; readonly prompts: number }
  /** The last failure, with the stderr tail of a dead process in its message. */
  readonly lastError: McpError.McpError | undefined
  /** Facts from the transport, such as the process id. */
  readonly connection: Record<string, unknown> | undefined
}

/**
 * Options of a call through the actor.
 *
 * @since 0.1.0
 */
export interface CallOptions {
  /** How long to wait for the server to be ready. Default: the spec's readyTimeout, else 30 s. */
  readonly readyTimeout?: Duration.DurationInput | undefined
}

/**
 * Which servers `awaitReady` waits for: the required ones (default), all enabled ones
 * (until each is ready or has failed once), or the ones named.
 *
 * @since 0.1.0
 */
export type AwaitTarget = "required" | "settled" | ReadonlyArray<string>

/**
 * Options of a call routed through the registry.
 *
 * @since 0.1.0
 */
export interface CallToolOptions extends McpClient.CallToolOptions, CallOptions {}

/**
 * The fleet.
 *
 * @since 0.1.0
 */
export interface ServerRegistry {
  /**
   * Makes the fleet equal to `desired`: starts new servers, stops removed ones, restarts
   * those whose config changed and leaves the rest untouched. Returns at once; starts go
   * on in the background, each on its own.
   */
  readonly reconcile: (desired: ReadonlyArray<ServerSpec.ServerSpec>) => Effect.Effect<ReconcileResult>
  readonly enable: (server: string) => Effect.Effect<void, McpError.McpError>
  readonly disable: (server: string) => Effect.Effect<void, McpError.McpError>
  /** Closes the server's connection and starts it again now. */
  readonly restart: (server: string) => Effect.Effect<void, McpError.McpError>
  /** Every server's status, in the order they were added. */
  readonly status: Effect.Effect<ReadonlyArray<ServerStatus>>
  /**
   * Waits until the target servers are ready. Fails at once if a required server can no
   * longer become ready, and with the list of laggards after `timeout` (default 30 s).
   */
  readonly awaitReady: (options?: {
    readonly servers?: AwaitTarget | undefined
    readonly timeout?: Duration.DurationInput | undefined
  }) => Effect.Effect<void, McpError.McpError>
  /** Every change of the fleet, from the moment the stream starts. */
  readonly events: Stream.Stream<RegistryEvent>
  /** Subscribes to events now; nothing published after this returns is missed. */
  readonly subscribe: Effect.Effect<Queue.Dequeue<RegistryEvent>, never, Scope.Scope>
  /** The whole catalog, replaced atomically on every change. */
  readonly catalog: SubscriptionRef.SubscriptionRef<Catalog.Catalog>
  /** Calls a tool by its qualified name, waiting for its server if it is restarting. */
  readonly callTool: (
    name: string,
    args?: Record<string, unknown> | undefined,
    options?: CallToolOptions | undefined
  ) => Effect.Effect<McpSchema.CallToolResult, McpError.McpError>
  readonly readResource: (server: string, uri: string) => Effect.Effect<McpSchema.ReadResourceResult, McpError.McpError>
  /** Gets a prompt by its name on that server. */
  readonly getPrompt: (
    server: string,
    name: string,
    args?: Readonly<Record<string, string>> | undefined
  ) => Effect.Effect<McpSchema.GetPromptResult, McpError.McpError>
  readonly complete: (
    server: string,
    ref: McpClient.CompletionRef,
    argument: { readonly name: string; readonly value: string },
    context?: { readonly arguments?: Readonly<Record<string, string>> } | undefined
  ) => Effect.Effect<McpSchema.CompleteResult, McpError.McpError>
  /** Runs `f` with the server's ready connection, for anything the routes above don't cover. */
  readonly withClient: <A>(
    server: string,
    f: (client: McpClient.McpClient) => Effect.Effect<A, McpError.McpError>,
    options?: CallOptions | undefined
  ) => Effect.Effect<A, McpError.McpError>
}

/**
 * The ServerRegistry service tag.
 *
 * @since 0.1.0
 */
export const ServerRegistry = Context.GenericTag<ServerRegistry>("mcp-fleet/ServerRegistry")

/**
 * Makes a registry; every server stops (its process tree ended) when the Scope closes.
 *
 * @since 0.1.0
 */
export const make = (
  options: Options = {}
): Effect.Effect<ServerRegistry, never, Scope.Scope | Requirements> =>
  Effect.gen(function*() {
    const naming: Catalog.Naming = { ...Catalog.defaultNaming, ...options.naming }
    const restartPolicy: ServerSpec.RestartPolicy = { ...ServerSpec.defaultRestartPolicy, ...options.restart }
    const pubsub = yield* PubSub.sliding<RegistryEvent>(options.eventBuffer ?? 1024)
    yield* Effect.addFinalizer(() => PubSub.shutdown(pubsub))
    const catalog = yield* SubscriptionRef.make(Catalog.empty)
    const actors = new Map<string, ServerActor.ServerActor>()
    const offered = new Map<string, Catalog.ServerLists>()
    const fibers = yield* FiberMap.make<string>()
    const lock = yield* Effect.makeSemaphore(1)
    const context = yield* Effect.context<Requirements>()

    const publish = (event: RegistryEvent) => Effect.asVoid(PubSub.publish(pubsub, event))

    // Collisions already logged, so each is reported once, when it appears.
    let reported = new Set<string>()
    const reportCollisions = (current: Catalog.Catalog) => {
      const now = new Set(current.collisions.map((collision) => `${collision.kind}:${collision.name}`))
      const fresh = current.collisions.filter((collision) => !reported.has(`${collision.kind}:${collision.name}`))
      reported = now
      return Effect.forEach(fresh, (collision) =>
        Effect.logWarning(
          `the ${collision.kind} name '${collision.name}' is claimed by ${
            collision.entries.map((entry) => `'${entry.original}' of server '${entry.server}' (now '${entry.name}')`).join(", ")
          }`
        ), { discard: true })
    }

    // The catalog is rebuilt under the ref's lock, from the lists as they are at that moment.
    const rebuild = Effect.flatMap(
      SubscriptionRef.updateAndGet(catalog, () => Catalog.make(offered, naming)),
      reportCollisions
    )

    const listsChanged = (server: string, lists: Catalog.ServerLists) =>
      Effect.suspend(() => {
        // A server with nothing to offer has no entry, so removed servers leave none behind.
        const empty = lists.tools.length + lists.resources.length + lists.templates.length + lists.prompts.length === 0
        if (empty) offered.delete(server)
        else offered.set(server, lists)
        return rebuild
      })

    const start = (spec: ServerSpec.ServerSpec, initialLists?: Catalog.ServerLists) =>
      Effect.gen(function*() {
        const actor = yield* ServerActor.make({
          spec,
          restart: restartPolicy,
          refreshDebounce: options.refreshDebounce ?? "200 millis",
          client: options.client ?? {},
          initialLists,
          publish,
          listsChanged
        })
        actors.set(spec.name, actor)
        yield* FiberMap.run(fibers, spec.name, Effect.provide(actor.run, context))
      })

    const stop = (name: string) =>
      Effect.gen(function*() {
        const actor = actors.get(name)
        yield* FiberMap.remove(fibers, name)
        actors.delete(name)
        if (actor) yield* actor.clear
      })

    // A changed server's process ends before its successor starts; its lists carry over so
    // only real differences are published.
    const replace = (spec: ServerSpec.ServerSpec) =>
      Effect.gen(function*() {
        const previous = actors.get(spec.name)!.lists()
        yield* FiberMap.remove(fibers, spec.name)
        yield* start(spec, previous)
      })

    const reconcile: ServerRegistry["reconcile"] = traced("ServerRegistry.reconcile")((desired) =>
      lock.withPermits(1)(Effect.gen(function*() {
        const wanted = new Map<string, ServerSpec.ServerSpec>()
        for (const spec of desired) {
          if (wanted.has(spec.name)) yield* Effect.logWarning(`server '${spec.name}' is configured twice; the last one is used`)
          wanted.set(spec.name, spec)
        }
        const added: Array<ServerSpec.ServerSpec> = []
        const changed: Array<ServerSpec.ServerSpec> = []
        const unchanged: Array<string> = []
        for (const [name, spec] of wanted) {
          const actor = actors.get(name)
          if (actor === undefined) added.push(spec)
          else if (actor.hash === ServerSpec.hash(spec)) unchanged.push(name)
          else changed.push(spec)
        }
        const removed = [...actors.keys()].filter((name) => !wanted.has(name))
        yield* Effect.all([
          Effect.forEach(removed, stop, { concurrency: "unbounded", discard: true }),
          Effect.forEach(changed, replace, { concurrency: "unbounded", discard: true }),
          Effect.forEach(added, (spec) => start(spec), { discard: true })
        ], { concurrency: "unbounded", discard: true })
        return {
          added: added.map((spec) => spec.name),
          removed,
          restarted: changed.map((spec) => spec.name),
          unchanged
        }
      }))
    )

    const actorOf = (name: string) =>
      Effect.suspend(() => {
        const actor = actors.get(name)
        return actor !== undefined
          ? Effect.succeed(actor)
          : Effect.fail(McpError.make(
            name,
            new McpError.NotFoundReason({ what: "server", name, suggestions: Catalog.suggest(name, actors.keys()) })
          ))
      })

    // A call waiting on an actor that a reconcile replaced goes on waiting on its successor:
    // Stopped means the call was never sent, so nothing runs twice.
    const withClient: ServerRegistry["withClient"] = (server, f, callOptions) =>
      Effect.flatMap(actorOf(server), (actor) =>
        actor.withClient(f, callOptions).pipe(
          Effect.catchIf(
            (error) =>
              error.reason._tag === "Unavailable" && error.reason.state === "Stopped" && actors.has(server) &&
              actors.get(server) !== actor,
            () => withClient(server, f, callOptions)
          )
        ))

    const readyFor = (target: AwaitTarget, actor: ServerActor.ServerActor) =>
      target === "required" ? actor.spec.required === true : target === "settled" ? actor.spec.disabled !== true : target.includes(actor.name)

    const awaitReady: ServerRegistry["awaitReady"] = traced("ServerRegistry.awaitReady")((awaitOptions = {}) =>
      Effect.gen(function*() {
        const clock = yield* Effect.clock
        const target = awaitOptions.servers ?? "required"
        const timeout = awaitOptions.timeout ?? "30 seconds"
        if (typeof target !== "string") {
          for (const name of target) yield* actorOf(name)
        }
        const waiting = [...actors.values()].filter((actor) => readyFor(target, actor))
        const done = (state: ServerState) =>
          state._tag === "Ready" || (target === "settled" && (state._tag === "Failed" || isTerminal(state)))
        const one = (actor: ServerActor.ServerActor) =>
          actor.state.changes.pipe(
            Stream.mapEffect((state) =>
              target !== "settled" && isTerminal(state)
                ? Effect.fail(McpError.make(
                  actor.name,
                  new McpError.UnavailableReason({
                    state: state._tag,
                    message: `cannot become ready: ${describeState(state, clock.unsafeCurrentTimeMillis())}`
                  })
                ))
                : Effect.succeed(done(state))
            ),
            Stream.takeUntil((ready) => ready),
            Stream.runDrain
          )
        yield* Effect.forEach(waiting, one, { concurrency: "unbounded", discard: true }).pipe(
          Effect.timeoutFail({
            duration: timeout,
            onTimeout: () => {
              const lagging = waiting.filter((actor) => !done(actor.status().state))
              const now = clock.unsafeCurrentTimeMillis()
              // One laggard is that server's failure; several are the fleet's.
              return McpError.make(
                lagging.length === 1 ? lagging[0].name : undefined,
                new McpError.UnavailableReason({
                  state: "NotReady",
                  message: `not ready in time: ${
                    lagging.map((actor) => `'${actor.name}' is ${describeState(actor.status().state, now)}`).join("; ")
                  }`
                })
              )
            }
          })
        )
      })
    )

    const callTool: ServerRegistry["callTool"] = traced("ServerRegistry.callTool")((name, args, callOptions) =>
      Effect.flatMap(SubscriptionRef.get(catalog), (current) => {
        const entry = current.toolsByName.get(name)
        if (entry === undefined) {
          return Effect.fail(McpError.make(
            undefined,
            new McpError.NotFoundReason({ what: "tool", name, suggestions: Catalog.suggest(name, current.toolsByName.keys()) })
          ))
        }
        return withClient(entry.server, (client) => client.callTool(entry.tool.name, args, callOptions), callOptions)
      })
    )

    // A prompt the server does not list fails here, with the names it does list.
    const getPrompt: ServerRegistry["getPrompt"] = traced("ServerRegistry.getPrompt")((server, name, args) =>
      Effect.flatMap(actorOf(server), (actor) => {
        const known = actor.lists().prompts.map((prompt) => prompt.name)
        return known.length > 0 && !known.includes(name)
          ? Effect.fail(McpError.make(server, new McpError.NotFoundReason({ what: "prompt", name, suggestions: Catalog.suggest(name, known) })))
          : actor.withClient((client) => client.getPrompt(name, args))
      })
    )

    if (options.servers !== undefined) yield* reconcile(options.servers)

    return ServerRegistry.of({
      reconcile,
      enable: (server) => Effect.flatMap(actorOf(server), (actor) => actor.enable),
      disable: (server) => Effect.flatMap(actorOf(server), (actor) => actor.disable),
      restart: (server) => Effect.flatMap(actorOf(server), (actor) => actor.restart),
      status: Effect.sync(() => [...actors.values()].map((actor) => actor.status())),
      awaitReady,
      events: Stream.fromPubSub(pubsub),
      subscribe: PubSub.subscribe(pubsub),
      catalog,
      callTool,
      readResource: traced("ServerRegistry.readResource")((server, uri) =>
        withClient(server, (client) => client.readResource(uri))
      ),
      getPrompt,
      complete: traced("ServerRegistry.complete")((server, ref, argument, context) =>
        withClient(server, (client) => client.complete(ref, argument, context))
      ),
      withClient
    })
  })

/**
 * A layer with a registry running `options.servers`; they stop when the layer is released.
 *
 * @since 0.1.0
 */
export const layer = (
  options: Options = {}
): Layer.Layer<ServerRegistry, never, Requirements> => Layer.scoped(ServerRegistry, make(options))
