/**
 * The fleet: a set of supervised servers kept equal to a desired set of ServerSpecs, one
 * live catalog of everything they offer, a stream of every change, and calls routed to
 * the server that owns each tool.
 *
 * Each server is an actor (`internal/serverRegistry/serverActor.ts`), its own supervised fiber:
 * one server's failure never touches another. A Ready server's call gate holds its connection,
 * so a call goes straight through; in every other state calls wait for the next connection
 * (within the ready timeout) or fail at once when waiting cannot help. The Peer tells the actor
 * synchronously when its connection ends, before any waiting request resumes, so the gate
 * closes and the next state is decided in that same step; the event follows a moment later.
 *
 * Routed calls to a server that runs tool calls as tasks feed its task table (`status.tasks`,
 * `TaskStatusChanged`); a call that became a task outlives its connection: it follows the same
 * task on the next one instead of being sent again (`followTask` takes one up by id). Drifted
 * tools are approved with `approveTool`; `authorize` runs a waiting server's OAuth grant. What
 * leaves an actor (errors, status, events, log lines) has the server's secrets masked.
 *
 * @since 0.1.0
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import * as PubSub from "effect/PubSub"
import type * as Queue from "effect/Queue"
import type * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as SubscriptionRef from "effect/SubscriptionRef"
import * as Catalog from "./Catalog.js"
import * as CatalogCache from "./CatalogCache.js"
import { followGrants } from "./internal/serverRegistry/auth.js"
import { awaitReady as awaitActors, isTarget } from "./internal/serverRegistry/awaitReady.js"
import * as FleetCatalog from "./internal/serverRegistry/fleetCatalog.js"
import * as Lazy from "./internal/serverRegistry/lazy.js"
import * as Lifecycle from "./internal/serverRegistry/lifecycle.js"
import * as Listing from "./internal/serverRegistry/listing.js"
import * as Pinning from "./internal/serverRegistry/pinning.js"
import * as Principals from "./internal/serverRegistry/principals.js"
import * as RetryRule from "./internal/serverRegistry/retryRule.js"
import * as Routing from "./internal/serverRegistry/routing.js"
import type * as ServerActor from "./internal/serverRegistry/serverActor.js"
import { traced } from "./internal/traced.js"
import type * as McpClient from "./McpClient.js"
import type * as McpError from "./McpError.js"
import type * as McpSchema from "./McpSchema.js"
import type * as OAuth from "./OAuth.js"
import type { RegistryEvent } from "./RegistryEvent.js"
import * as ServerSpec from "./ServerSpec.js"
import type { ServerState } from "./ServerState.js"
import type * as ToolPins from "./ToolPins.js"

/**
 * The services an actor connects with: an HTTP client for remote servers. Stdio and ws
 * servers are opened by the Launcher when the context has one (`NodeFleet.layer` from
 * `mcp-fleet/node` provides it with the HTTP client), so it is not required here.
 *
 * @since 0.1.0
 */
export type Requirements = HttpClient.HttpClient

/**
 * How mcp-fleet presents itself to every server of the fleet. `logLevel` defaults to
 * `debug`: a 2026-07-28 server then sends the fleet its log messages (`LogMessage` events)
 * as a stateful one does before anyone sets a level.
 *
 * @since 0.1.0
 * @category models
 */
export type ClientOptions = Pick<
  McpClient.Options,
  "clientInfo" | "capabilities" | "handlers" | "protocolVersion" | "discoverTimeout" | "logLevel"
>

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
  /**
   * What happens when a tool's definition changes since it was pinned (see ToolPins), for
   * servers whose spec does not say. The pins are kept in the `ToolPins.PinStore` in
   * context, else in memory. Default: `warn`.
   */
  readonly pinning?: ToolPins.Mode | undefined
  /**
   * What is done with hidden text in the names and descriptions servers send, for servers
   * whose spec does not say (see `Catalog.SanitizeMode`). Default: `strip`.
   */
  readonly sanitize?: Catalog.SanitizeMode | undefined
  /**
   * Where `perPrincipal` servers' instances get each principal's credentials. Default: none
   * (each instance runs with the server's own config).
   */
  readonly principalCredentials?: PrincipalCredentials | undefined
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
  /** A `perPrincipal` server: each principal's calls, reads and subscriptions go to its own instance. */
  readonly perPrincipal?: boolean | undefined
  readonly protocolVersion: McpSchema.Revision | undefined
  readonly serverInfo: McpSchema.Implementation | undefined
  /** What the server told its clients of how to use it, while connected. */
  readonly instructions?: string | undefined
  readonly counts: {
    readonly tools: number
    readonly resources: number
    readonly templates: number
    readonly prompts: number
  }
  /** The last failure, with the stderr tail of a dead process in its message. */
  readonly lastError: McpError.McpError | undefined
  /** Facts from the transport, such as the process id. */
  readonly connection: Record<string, unknown> | undefined
  /** The tool calls routed through the fleet that the server runs as tasks, not yet settled. */
  readonly tasks: ReadonlyArray<TaskInFlight>
  /** On a cluster (`mcp-fleet/cluster`): the runner hosting it (`host:port`), while one does. */
  readonly runner?: string | undefined
  /** On a cluster, a `perPrincipal` server's instances running now, one per principal. */
  readonly instances?: ReadonlyArray<PrincipalInstance> | undefined
}

/**
 * A per-principal instance on a cluster: whose it is (the OAuth subject), the runner hosting
 * it, and its state.
 *
 * @since 0.3.0
 */
export interface PrincipalInstance {
  readonly principal: string
  readonly runner: string
  readonly state: ServerState["_tag"]
}

/**
 * A tool call that runs as a task (2025-11-25) on its server, as last seen.
 *
 * @since 0.2.0
 */
export interface TaskInFlight {
  readonly id: string
  /** The tool's name on its server. */
  readonly tool: string
  readonly status: McpSchema.Task["status"]
  readonly statusMessage: string | undefined
  readonly createdAt: string | undefined
}

/**
 * Options of a call through the actor.
 *
 * @since 0.1.0
 */
export interface CallOptions {
  /** How long to wait for the server to be ready. Default: the spec's readyTimeout, else 30 s. */
  readonly readyTimeout?: Duration.DurationInput | undefined
  /**
   * Whom the call is for (an OAuth subject; the Policy takes it from its `caller`): a call of a
   * `perPrincipal` server (a read, a prompt, a completion, a task followed) goes to that
   * principal's own instance, and fails without one.
   */
  readonly principal?: string | undefined
}

/**
 * Options of a read or a prompt: a call's `onInput` and `principal`.
 *
 * @since 0.3.0
 */
export interface ReadOptions extends Pick<McpClient.CallToolOptions, "onInput">, Pick<CallOptions, "principal"> {}

/**
 * The token store of per-principal instances: the credentials of `principal` for `server`,
 * added to its instance's env (stdio) or headers (remote) as secrets; undefined when it has
 * none, and the call then fails.
 *
 * @since 0.1.0
 */
export type PrincipalCredentials = (
  server: string,
  principal: string
) => Effect.Effect<Readonly<Record<string, string | Redacted.Redacted<string>>> | undefined, McpError.McpError>

/**
 * Which servers `awaitReady` waits for: the required ones (default), all enabled ones
 * (until each is ready or has failed once), or the ones named.
 *
 * @since 0.1.0
 */
export type AwaitTarget = "required" | "settled" | ReadonlyArray<string>

/**
 * Options of a call routed through the registry. Its time limits are decided once, when the
 * call enters the registry: `readyTimeout` bounds the wait for the server to be ready (also
 * when a call that became a task follows it on a later connection); `timeout` the request's
 * inactivity (no answer, or no progress, for that long; default: the spec's
 * requestTimeout); `maxTotalTimeout` the whole call from its start, that wait included, and a
 * task's follows (a Timeout reason of kind `total`; default: none).
 *
 * @since 0.1.0
 */
export interface CallToolOptions extends McpClient.CallToolOptions, CallOptions {
  /**
   * The caller keeps a session and answers a server's requests (sampling, elicitation): a
   * server connected over HTTP in 2026-07-28 then runs the call on a stateful session of its
   * own beside that connection (opened at the first such call), so a server whose 2026-07-28
   * path cannot ask its client anything asks this caller as it would alone. The gateway sets
   * it for its stateful clients that declared sampling or elicitation.
   */
  readonly stateful?: boolean | undefined
}

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
  /**
   * Authorizes a remote server with OAuth (the Authorizer of the context sends the user to
   * the authorization page; tokens go to the TokenStore the fleet runs with) and connects it
   * again, touching no other server. Fails with the server's error when it cannot.
   */
  readonly authorize: (server: string) => Effect.Effect<void, McpError.McpError, OAuth.Authorizer | OAuth.TokenStore>
  /** Every server's status, in the order they were added. */
  readonly status: Effect.Effect<ReadonlyArray<ServerStatus>>
  /**
   * Waits until the target servers are ready (an Idle one counts: lazy, or stopped when quiet,
   * it starts on its first call). Fails at once if a required server can no longer become
   * ready, and with the list of laggards after `timeout` (default 30 s).
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
  /**
   * Calls a tool by its server and its own name, with no catalog lookup (for callers that
   * looked it up already, such as the Policy). A call that runs as a task shows in the
   * server's status and events, as with `callTool`.
   */
  readonly callServerTool: (
    server: string,
    tool: string,
    args?: Record<string, unknown> | undefined,
    options?: CallToolOptions | undefined
  ) => Effect.Effect<McpSchema.CallToolResult, McpError.McpError>
  /**
   * Takes up a task at `server` by its id (one a call was told of through `onTask`) and
   * gives the result of the tool call it was made of, waiting for the server as calls do.
   * When the connection is lost while it follows the task, it follows it again on the next
   * one (a stdio server's tasks end with its process: that fails). Fails with the server's
   * error, naming the task, when the server does not know it. Interrupting it cancels the
   * task. Tool calls routed through the fleet do this by themselves.
   */
  readonly followTask: (
    server: string,
    taskId: string,
    options?:
      | (CallOptions & Pick<McpClient.CallToolOptions, "onTask" | "onInput" | "onProgress" | "progressToken">)
      | undefined
  ) => Effect.Effect<McpSchema.CallToolResult, McpError.McpError>
  /**
   * Reads a resource on that server; `onInput` as a call's (`McpClient.CallToolOptions.onInput`),
   * `principal` too (`CallOptions.principal`).
   */
  readonly readResource: (
    server: string,
    uri: string,
    options?: ReadOptions | undefined
  ) => Effect.Effect<McpSchema.ReadResourceResult, McpError.McpError>
  /** Gets a prompt by its name on that server; its options as `readResource`'s. */
  readonly getPrompt: (
    server: string,
    name: string,
    args?: Readonly<Record<string, string>> | undefined,
    options?: ReadOptions | undefined
  ) => Effect.Effect<McpSchema.GetPromptResult, McpError.McpError>
  /** Asks that server for completions of an argument; `principal` as a call's. */
  readonly complete: (
    server: string,
    ref: McpClient.CompletionRef,
    argument: { readonly name: string; readonly value: string },
    context?: { readonly arguments?: Readonly<Record<string, string>> } | undefined,
    options?: Pick<CallOptions, "principal"> | undefined
  ) => Effect.Effect<McpSchema.CompleteResult, McpError.McpError>
  /**
   * The tools whose definition differs from their pin: held out of the catalog (in
   * `quarantine` mode) or only reported (`warn`), until approved.
   */
  readonly drifted: Effect.Effect<ReadonlyArray<ToolPins.Drift>>
  /**
   * Approves a drifted tool's new definition: it becomes the tool's pin, and a quarantined
   * tool goes back into the catalog. Fails with NotFound when the server has no such
   * drifted tool.
   */
  readonly approveTool: (server: string, tool: string) => Effect.Effect<void, McpError.McpError>
  /**
   * The name of a server whose secret `value` carries (a configured secret, or an OAuth token
   * the fleet holds for it; plain, URL-encoded or in base64), if any: the Policy refuses such
   * tool arguments. Never the secret itself.
   */
  readonly secretIn: (value: unknown) => string | undefined
  /**
   * Runs `f` with the server's ready connection, for anything the routes above don't cover,
   * waiting for one as calls do; a `perPrincipal` server's is the connection of the caller's
   * own instance (`CallOptions.principal`), as for its calls. When `f` fails because a request was refused `unsent` (the
   * connection had ended before it was sent), `f` runs again on the next connection: what it
   * sent before that request is sent again, so give it one request that changes anything,
   * last.
   */
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
 * Tool pins are kept in the `ToolPins.PinStore` in context, if there is one, and each server's
 * lists in the `CatalogCache.CatalogCache` in context (else in memory), which lazy servers
 * (`ServerSpec.lazy`) are listed from until their first call. The host
 * services in context (`Host.Sampling`, `Host.Elicitation`, `Host.Roots`) answer every
 * server, except what a server's spec turns off (`host`).
 * With an `OAuth.TokenStore` in context, remote servers that refuse their connection are
 * authorized with OAuth.
 *
 * @since 0.1.0
 */
export const make = (
  options: Options = {}
): Effect.Effect<ServerRegistry, never, Scope.Scope | Requirements> =>
  Effect.gen(function*() {
    const naming: Catalog.Naming = { ...Catalog.defaultNaming, ...options.naming }
    const pubsub = yield* PubSub.sliding<RegistryEvent>(options.eventBuffer ?? 1024)
    yield* Effect.addFinalizer(() => PubSub.shutdown(pubsub))
    const { catalog, listsChanged, together } = yield* FleetCatalog.make(naming)
    const actors = new Map<string, ServerActor.ServerActor>()
    const { approve, drifted, pins } = yield* Pinning.makeFleet(actors, options.pinning ?? "warn", naming)
    // What outlives a call: the cancellation of a task whose call ended between connections.
    const background = yield* FiberSet.make()
    // A lazy server never cached fills the cache once the others have settled.
    const fills = yield* Lazy.makeFillSlots((isOther) =>
      Effect.suspend(() =>
        awaitActors(
          [...actors.values()].filter((actor) => isOther(actor.spec)),
          "settled",
          "30 seconds",
          PubSub.subscribe(pubsub)
        )
      ).pipe(Effect.ignore)
    )
    const actorOptions = {
      restart: { ...ServerSpec.defaultRestartPolicy, ...options.restart },
      refreshDebounce: options.refreshDebounce ?? "200 millis",
      client: { logLevel: "debug" as const, ...options.client },
      pins,
      sanitize: options.sanitize ?? Catalog.defaultSanitize,
      fills
    }
    // A principal's instance lists nothing for the fleet, so it caches nothing either: its own
    // lists would take the place of its server's in the catalog cache.
    const principals = yield* Principals.make(
      { ...actorOptions, cache: yield* CatalogCache.makeMemory },
      options.principalCredentials,
      (event) => Effect.asVoid(PubSub.publish(pubsub, event))
    )
    const { actorOf, callServerTool, callTool, complete, followTask, getPrompt, readResource, withClient } = Routing
      .make(
        actors,
        catalog,
        drifted,
        (effect) => Effect.asVoid(FiberSet.run(background, effect)),
        principals.instanceOf
      )
    yield* followGrants(actors)
    const reconcile: ServerRegistry["reconcile"] = traced("ServerRegistry.reconcile")(
      yield* Lifecycle.make(
        actors,
        {
          ...actorOptions,
          publish: (event) => Effect.asVoid(PubSub.publish(pubsub, event)),
          listsChanged,
          cache: yield* Lazy.cacheInContext
        },
        principals.end,
        together
      )
    )

    const awaitReady: ServerRegistry["awaitReady"] = traced("ServerRegistry.awaitReady")((awaitOptions = {}) =>
      Effect.gen(function*() {
        const target = awaitOptions.servers ?? "required"
        if (typeof target !== "string") {
          for (const name of target) yield* actorOf(name)
        }
        const waiting = [...actors.values()].filter((actor) => isTarget(target, actor))
        yield* awaitActors(waiting, target, awaitOptions.timeout ?? "30 seconds", PubSub.subscribe(pubsub))
      })
    )

    if (options.servers !== undefined) yield* reconcile(options.servers)

    return ServerRegistry.of({
      reconcile,
      enable: (server) => Effect.flatMap(actorOf(server), (actor) => actor.enable),
      disable: (server) => Effect.flatMap(actorOf(server), (actor) => actor.disable),
      restart: (server) => Effect.flatMap(actorOf(server), (actor) => actor.restart),
      authorize: (server) => Effect.flatMap(actorOf(server), (actor) => actor.authorize),
      status: Effect.sync(() => [...actors.values()].map((actor) => actor.status())),
      awaitReady,
      events: Stream.fromPubSub(pubsub),
      subscribe: PubSub.subscribe(pubsub),
      catalog,
      callTool,
      callServerTool,
      followTask,
      readResource,
      getPrompt,
      complete,
      drifted,
      approveTool: traced("ServerRegistry.approveTool")((server, tool) =>
        Effect.flatMap(actorOf(server), (actor) => approve(actor, tool))
      ),
      withClient,
      secretIn: (value) => {
        for (const actor of actors.values()) if (actor.carriesSecret(value)) return actor.name
        return undefined
      }
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

/**
 * The events that tell how `server`'s lists went from `previous` to `next` (`ToolsChanged`
 * and the like), none when nothing differs: for a registry that learns a server's lists from
 * elsewhere (the cluster's replicas).
 *
 * @since 0.3.0
 */
export const listChanges: (
  server: string,
  previous: Catalog.ServerLists,
  next: Catalog.ServerLists
) => Array<RegistryEvent> = Listing.changes

/**
 * Whether a call of `tool` that may have run (its server, or the cluster runner hosting it,
 * died during it) may be sent again: the tool is annotated `idempotentHint` or `readOnlyHint`.
 * The rule the registry applies, for a registry that routes elsewhere (the cluster's runners).
 *
 * @since 0.3.0
 */
export const mayRetry: (tool: Pick<McpSchema.Tool, "annotations"> | undefined) => boolean = RetryRule.mayRetry

/**
 * `principal`'s instance of a `perPrincipal` server: the server's spec with the principal's
 * credentials added to its env (stdio) or headers (remote) as secrets, as the registry makes
 * it. For a registry that runs instances elsewhere (the cluster's runners).
 *
 * @since 0.3.0
 */
export const principalSpec: (
  spec: ServerSpec.ServerSpec,
  principal: string,
  credentials: Readonly<Record<string, string | Redacted.Redacted<string>>> | undefined
) => ServerSpec.ServerSpec = Principals.specFor
