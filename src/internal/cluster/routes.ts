/**
 * The `ServerRegistry` operations of any replica over the server entities: a call is a
 * message to the entity of its server, wherever it runs; the cluster sends it again to the
 * new runner when its shard moves, and the runner's claim rule decides whether it may run
 * there (`host.ts`). A move is waited for within the call's ready timeout (the cluster keeps
 * trying the send), so nothing hangs on a server that is not coming back. A call, a task
 * followed, a read and a prompt come back as events (`relay.ts`): the caller is told and asked
 * what the server tells and asks during it. A per-principal server's calls, tasks followed,
 * reads, prompts and completions go to the caller's own instance (`instance.ts`), and fail
 * without a principal.
 *
 * @since 0.3.0
 */
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import * as Catalog from "../../Catalog.js"
import type * as Host from "../../Host.js"
import * as McpError from "../../McpError.js"
import type * as McpSchema from "../../McpSchema.js"
import type * as ServerRegistry from "../../ServerRegistry.js"
import { randomUUID } from "../crypto.js"
import { traced } from "../traced.js"
import type * as Directory from "./directory.js"
import type { CallEvent, ServerEntity } from "./entity.js"
import * as Instance from "./instance.js"
import * as Relay from "./relay.js"

type Client = Effect.Effect.Success<typeof ServerEntity.client>

/**
 * What the routes need: the directory, the entity clients, this process's host services, the
 * default limits.
 */
export interface RouteOptions {
  readonly directory: Directory.Directory
  readonly client: Client
  /** The client of per-principal instances (`instance.ts`), the same messages. */
  readonly instances: Client
  /** Whether `server` runs one instance per principal. */
  readonly perPrincipal: (server: string) => boolean
  readonly host: Host.Services
  readonly readyTimeout: Duration.Duration
  readonly requestTimeout: Duration.Duration
  /** Where a call's stream ends after its result (`Relay.follow`): the replica's scope. */
  readonly background: Scope.Scope
}

const millis = (value: Duration.DurationInput | undefined) =>
  value === undefined ? undefined : Duration.toMillis(Duration.decode(value))

// A failure of the cluster itself (a full mailbox, storage, a lost runner) as the server's.
const clusterFailure = (server: string) => (error: unknown): McpError.McpError =>
  error instanceof McpError.McpError ? error : McpError.unavailable(server, {
    state: "Moving",
    message: `the cluster could not deliver the request: ${
      error !== null && typeof error === "object" && "_tag" in error ? String(error._tag) : String(error)
    }`
  })

// Sends one message to its server's entity, bounded: the wait for its runner (a move), and the
// request's own limit.
const sender = (options: RouteOptions) => {
  const { client, directory } = options
  const known = (server: string) =>
    directory.entries().has(server)
      ? Effect.void
      : Effect.fail(McpError.notFound(undefined, {
        what: "server",
        name: server,
        suggestions: Catalog.suggest(server, directory.entries().keys())
      }))
  // `entity`: a principal's instance instead of the server's entity.
  return <A>(
    server: string,
    message: (entity: ReturnType<Client>) => Effect.Effect<unknown, unknown>,
    bound: Duration.Duration,
    entity?: ReturnType<Client>
  ) =>
    known(server).pipe(
      Effect.zipRight(Effect.suspend(() => message(entity ?? client(server)))),
      Effect.mapError(clusterFailure(server)),
      Effect.timeoutFail({
        duration: bound,
        onTimeout: () =>
          McpError.timeout(server, { method: "cluster", afterMs: Duration.toMillis(bound), kind: "total" })
      }),
      Effect.map((value) => value as A)
    )
}

// A stream cut off with its runner: interrupted, or its socket failing under a write (a
// defect of the cluster's client when the runner died mid-call), and nothing else.
const cutOff = (cause: Cause.Cause<unknown>): boolean => {
  if (Cause.isInterruptedOnly(cause)) return true
  const defects = Chunk.toReadonlyArray(Cause.defects(cause))
  return Chunk.isEmpty(Cause.failures(cause)) && defects.length > 0 &&
    defects.every((defect) => Predicate.isTagged(defect, "SocketError"))
}

const limit = (options: RouteOptions, readyTimeout?: Duration.DurationInput, timeout?: Duration.DurationInput) =>
  Duration.sum(
    readyTimeout === undefined ? options.readyTimeout : Duration.decode(readyTimeout),
    timeout === undefined ? options.requestTimeout : Duration.decode(timeout)
  )

// A call's events (its message made with a fresh call id) followed to its result (a tool's,
// a read's or a prompt's: `A`), sent with `send`; its input requests answered by this caller.
const streamer = (options: RouteOptions, send: ReturnType<typeof sender>) =>
<A = McpSchema.CallToolResult>(
  server: string,
  callbacks: Relay.Callbacks | undefined,
  bound: Duration.Duration,
  events: (entity: ReturnType<Client>, callId: string) => Stream.Stream<CallEvent, unknown>,
  target?: ReturnType<Client>
) => {
  const callId = randomUUID()
  // A stream whose runner is lost ends cut off, where a plain reply is sent again by the
  // cluster: it is sent again here, with the same call id (the claim rule decides on the new
  // runner), within the call's bound. This fiber's own interruption is never caught.
  const once = (entity: ReturnType<Client>): Effect.Effect<A, unknown> =>
    Relay.follow<A, unknown>(server, events(entity, callId), {
      ...options,
      callbacks,
      reply: (answer) => entity.Answer({ callId, ...answer }).pipe(Effect.ignoreLogged)
    }).pipe(
      Effect.catchAllCause((cause) =>
        cutOff(cause)
          ? Effect.delay(Effect.suspend(() => once(entity)), "200 millis")
          : Effect.failCause(cause)
      )
    )
  return send<A>(server, once, bound, target)
}

// The entity a request of `principal` goes to: a per-principal server's is the caller's own
// instance, and never without one.
const targetOf = (options: RouteOptions) => (server: string, principal: string | undefined) =>
  !options.perPrincipal(server)
    ? Effect.succeed(options.client(server))
    : principal === undefined
    ? Effect.fail(McpError.unavailable(server, {
      state: options.directory.entries().get(server)?.status.state._tag ?? "Pending",
      message: "runs one instance per principal: a call needs an authenticated caller (an OAuth subject)"
    }))
    : Effect.succeed(options.instances(Instance.instanceId(server, principal)))

// Reads, prompts and completions, sent where the caller's calls go; what the server asks
// during a read or a prompt is asked of this caller, as in a call.
const reads = (
  options: RouteOptions,
  send: ReturnType<typeof sender>,
  streamed: ReturnType<typeof streamer>
) => {
  const bound = limit(options)
  const entityOf = targetOf(options)
  const streamedTo = <A>(
    server: string,
    asked: ServerRegistry.ReadOptions | undefined,
    events: (entity: ReturnType<Client>, callId: string) => Stream.Stream<CallEvent, unknown>
  ) => Effect.flatMap(entityOf(server, asked?.principal), (target) => streamed<A>(server, asked, bound, events, target))
  return {
    readResource: traced("ClusterRegistry.readResource")((
      server: string,
      uri: string,
      asked?: ServerRegistry.ReadOptions
    ) => streamedTo<McpSchema.ReadResourceResult>(server, asked, (entity, callId) => entity.Read({ callId, uri }))),
    getPrompt: traced("ClusterRegistry.getPrompt")((
      server: string,
      name: string,
      args?: Readonly<Record<string, string>> | undefined,
      asked?: ServerRegistry.ReadOptions
    ) =>
      streamedTo<McpSchema.GetPromptResult>(
        server,
        asked,
        (entity, callId) => entity.GetPrompt({ callId, name, args })
      )
    ),
    complete: traced("ClusterRegistry.complete")((
      server: string,
      ref: unknown,
      argument: { readonly name: string; readonly value: string },
      context?: unknown,
      given?: Pick<ServerRegistry.CallOptions, "principal">
    ) =>
      Effect.flatMap(
        entityOf(server, given?.principal),
        (target) =>
          send<McpSchema.CompleteResult>(server, (entity) => entity.Complete({ ref, argument, context }), bound, target)
      )
    )
  }
}

/** The routes a replica serves through the entities. */
export const make = (options: RouteOptions) => {
  const { directory } = options
  const send = sender(options)
  const streamed = streamer(options, send)

  const entityOf = targetOf(options)

  const callServerTool: ServerRegistry.ServerRegistry["callServerTool"] = traced("ClusterRegistry.callServerTool")(
    (server, tool, args, callOptions) =>
      Effect.flatMap(entityOf(server, callOptions?.principal), (target) =>
        streamed(
          server,
          callOptions,
          callOptions?.maxTotalTimeout === undefined
            ? limit(options, callOptions?.readyTimeout, callOptions?.timeout)
            : Duration.sum(Duration.decode(callOptions.maxTotalTimeout), Duration.seconds(1)),
          (entity, callId) =>
            entity.Call({
              callId,
              tool,
              args,
              readyTimeout: millis(callOptions?.readyTimeout),
              timeout: millis(callOptions?.timeout),
              maxTotalTimeout: millis(callOptions?.maxTotalTimeout),
              resetTimeoutOnProgress: callOptions?.resetTimeoutOnProgress,
              task: callOptions?.task,
              progressToken: callOptions?.progressToken,
              meta: callOptions?.meta,
              stateful: callOptions?.stateful,
              tells: Relay.tellsOf(callOptions)
            }),
          target
        ))
  )

  // Unbounded, as a task followed in one process is: interrupting it cancels the task.
  const followTask: ServerRegistry.ServerRegistry["followTask"] = traced("ClusterRegistry.followTask")(
    (server, taskId, followOptions) =>
      Effect.flatMap(
        entityOf(server, followOptions?.principal),
        (target) =>
          streamed(server, followOptions, Duration.infinity, (entity, callId) =>
            entity.Follow({
              callId,
              taskId,
              readyTimeout: millis(followOptions?.readyTimeout),
              progressToken: followOptions?.progressToken,
              tells: Relay.tellsOf(followOptions)
            }), target)
      )
  )

  const callTool: ServerRegistry.ServerRegistry["callTool"] = traced("ClusterRegistry.callTool")(
    (name, args, callOptions) =>
      Effect.flatMap(directory.catalog.get, (catalog) => {
        const entry = Catalog.findTool(catalog, name)
        return entry === undefined
          ? Effect.fail(McpError.notFound(Catalog.serverOf(name), {
            what: "tool",
            name,
            suggestions: Catalog.suggest(name, catalog.toolsByName.keys())
          }))
          : callServerTool(entry.server, entry.tool.name, args, callOptions)
      })
  )

  const bound = limit(options)
  return {
    callTool,
    callServerTool,
    followTask,
    ...reads(options, send, streamed),
    control: (server: string, command: "restart" | "enable" | "disable" | "approve", tool?: string) =>
      send<void>(server, (entity) => entity.Control({ command, tool }), bound)
  }
}
