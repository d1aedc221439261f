/**
 * One connection of a server, from spawn to its first failure, idle timeout or control
 * request: connect, agree on a revision (initialize, or server/discover for 2026-07-28), list
 * everything, watch for changes, open the call gate, and check health if the spec asks.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Scope from "effect/Scope"
import type * as Catalog from "../../Catalog.js"
import * as McpClient from "../../McpClient.js"
import type * as McpError from "../../McpError.js"
import * as McpSchema from "../../McpSchema.js"
import type { RegistryEvent } from "../../RegistryEvent.js"
import type { ClientOptions, Requirements } from "../../ServerRegistry.js"
import * as ServerSpec from "../../ServerSpec.js"
import { ServerState } from "../../ServerState.js"
import * as Telemetry from "../../Telemetry.js"
import { Transport } from "../../Transport.js"
import * as Secrets from "../secrets.js"
import { inSpan } from "../traced.js"
import type { AuthState } from "./auth.js"
import type { CallGate } from "./callGate.js"
import type { FillSlots } from "./lazy.js"
import { fetchAll, watch, type Watcher } from "./listing.js"
import * as StatefulTwin from "./statefulTwin.js"

/**
 * A request to the actor from outside its loop.
 */
export type Control = "restart" | "enable" | "disable" | "wake"

/**
 * How a session ended while its scope was still open.
 */
export type Outcome =
  | { readonly _tag: "Failed"; readonly error: McpError.McpError; readonly readyFor: number }
  | { readonly _tag: "Idle" }
  | { readonly _tag: "Control"; readonly control: "restart" | "disable" }

/**
 * What a session and the supervision loop share with their actor.
 */
export interface Core {
  readonly spec: ServerSpec.ServerSpec
  readonly client: ClientOptions
  readonly refreshDebounce: Duration.DurationInput
  readonly gate: CallGate
  readonly lists: () => Catalog.ServerLists
  /** Takes the lists the server sent (saved in the catalog cache too). */
  readonly setLists: (lists: Catalog.ServerLists) => Effect.Effect<void>
  /** Empties the lists (a server disabled, or failed for good). */
  readonly clearLists: Effect.Effect<void>
  /**
   * A lazy server's: its cached lists restored (false when there are none; restored once),
   * its fills, and whether it is Idle already (parked with them before its loop started).
   */
  readonly lazy: {
    readonly restore: Effect.Effect<boolean>
    readonly fills: FillSlots
    readonly idle: () => boolean
  } | undefined
  /** Sets the state and publishes it. */
  readonly setState: (state: ServerState) => Effect.Effect<void>
  /** Sets the state status and calls see, at once; a `setState` of it publishes it after. */
  readonly mark: (state: ServerState) => void
  readonly setConnection: (transport: Transport) => void
  readonly publish: (event: RegistryEvent) => Effect.Effect<void>
  /** The error as the fleet shows it: the server's secrets masked. */
  readonly mask: (error: McpError.McpError) => McpError.McpError
  /** The server's secrets, masked in every request and notification it sends (`Secrets.maskIncoming`). */
  readonly masker: Secrets.Masker
  readonly control: Queue.Queue<Control>
  /** The server's OAuth: the token of each connection, recovery after a refusal. */
  readonly auth: AuthState
  /**
   * The stateful revision the server fell back to once its 2026-07-28 exchanges failed for
   * protocol reasons while connecting: its later connections speak it from the start.
   */
  readonly fallback: { version: McpSchema.ProtocolVersion | undefined }
}

/**
 * Takes control requests until one of `accepted` comes; the others are dropped.
 */
export const takeControl = <C extends Control>(core: Core, accepted: ReadonlyArray<C>): Effect.Effect<C> =>
  Queue.take(core.control).pipe(
    Effect.repeat({ until: (c): c is C => (accepted as ReadonlyArray<Control>).includes(c) }),
    Effect.map((c) => c as C)
  )

/**
 * Fails after `failures` health checks in a row went unanswered; never ends without health
 * checks. A check is a ping, or for a 2026-07-28 server (which has no ping) a
 * `server/discover`, sent each time: a cached answer would say nothing of the server's health.
 */
export const healthCheck = (
  health: ServerSpec.HealthCheck | undefined,
  c: McpClient.McpClient
): Effect.Effect<never, McpError.McpError> => {
  if (health === undefined) return Effect.never
  const limit = health.failures ?? 3
  let failed = 0
  const options = { timeout: health.timeout ?? "10 seconds" }
  const check = McpSchema.isModernVersion(c.protocolVersion)
    ? c.request(McpSchema.DISCOVER_METHOD, undefined, McpSchema.DiscoverResult, options)
    : c.request(McpSchema.Method.Ping, undefined, McpSchema.EmptyResult, options)
  return Effect.sleep(health.interval).pipe(
    Effect.zipRight(check),
    Effect.matchEffect({
      onSuccess: () => Effect.sync(() => failed = 0),
      onFailure: (error) => ++failed >= limit ? Effect.fail(error) : Effect.void
    }),
    Effect.forever
  )
}

// What the server sends passes the masker before the Peer sees it: its progress, logs and
// requests reach the CLI, the gateway's clients and the host services masked.
// The wrapper inherits from the transport rather than copying it: a member may be a getter
// (Streamable HTTP's `kind` becomes "sse" when it falls back to HTTP+SSE).
const maskedTransport = (masker: Secrets.Masker, transport: Transport): Transport =>
  masker === Secrets.none ? transport : Object.create(transport, {
    listen: {
      value: (receiver: Parameters<Transport["listen"]>[0]) =>
        transport.listen({
          closed: receiver.closed,
          message: (message, related) => receiver.message(Secrets.maskIncoming(masker, message), related)
        })
    }
  })

// A transport to the server with the current token, its messages masked on arrival.
const connect = (core: Core) =>
  Effect.flatMap(
    core.auth.token,
    (token) =>
      Effect.map(ServerSpec.connect(core.spec, Option.getOrUndefined(token)), (t) => maskedTransport(core.masker, t))
  )

const watcherOf = (core: Core): Watcher => ({
  server: core.spec.name,
  refreshDebounce: core.refreshDebounce,
  lists: core.lists,
  setLists: core.setLists,
  publish: core.publish
})

// Whether a connection failed for protocol reasons (a JSON-RPC error, an answer that does
// not decode), not for the server's absence, credentials or silence.
const byProtocol = (error: McpError.McpError): boolean =>
  error.reason._tag === "Protocol" || error.reason._tag === "Validation"

/**
 * Runs one session in `scope`. The scope stays open until the caller has moved the state
 * off Ready; the gate is closed before this returns.
 *
 * When the ready connection is seen closed, the gate closes and `lost` is called right
 * there, synchronously, with the error and how long it was ready: no call or status read
 * finds it Ready after that. `idleMs` overrides the spec's idle timeout (0 for a lazy server's
 * fill: idle as soon as no call is in flight).
 */
export const run = (
  core: Core,
  scope: Scope.CloseableScope,
  lost: (error: McpError.McpError, readyFor: number) => void,
  idleMs?: number | undefined
): Effect.Effect<Outcome, never, Requirements> => {
  const { spec } = core
  const idleAfter = idleMs ??
    (spec.idleTimeout === undefined ? undefined : Duration.toMillis(Duration.decode(spec.idleTimeout)))
  let readySince: number | undefined
  // Whether the connection is ready and its end not yet reported.
  let live = false
  // One connection, agreed and listed, in a Scope of its own (closed when it fails, so a
  // connection given up for a fallback leaves nothing behind). A failure says whether it
  // came after a 2026-07-28 handshake.
  const open = (clock: Clock.Clock, protocolVersion: McpSchema.Revision | undefined) =>
    Effect.gen(function*() {
      const own = yield* Scope.fork(scope, ExecutionStrategy.sequential)
      let modern = false
      return yield* Scope.extend(
        Effect.gen(function*() {
          const transport = yield* connect(core)
          core.setConnection(transport)
          const c = yield* McpClient.make({
            ...core.client,
            protocolVersion,
            host: spec.host,
            initializeTimeout: spec.initializeTimeout,
            requestTimeout: spec.requestTimeout,
            onClosed: (error) => {
              if (!live) return
              live = false
              core.gate.setClient(undefined)
              lost(error, clock.unsafeCurrentTimeMillis() - readySince!)
            }
          }).pipe(Effect.provideService(Transport, transport))
          modern = McpSchema.isModernVersion(c.protocolVersion)
          yield* watch(watcherOf(core), c)
          yield* core.setLists(yield* fetchAll(c))
          return c
        }),
        own
      ).pipe(
        Effect.tapErrorCause(() => Scope.close(own, Exit.void)),
        Effect.mapError((error) => ({ error, modern }))
      )
    })
  const serve = Effect.gen(function*() {
    const clock = yield* Effect.clock
    const asked = spec.protocolVersion ?? core.client.protocolVersion
    const connected = open(clock, asked ?? core.fallback.version).pipe(
      Effect.catchIf(
        ({ error, modern }) =>
          modern && asked === undefined && core.fallback.version === undefined && byProtocol(error),
        ({ error }) => {
          const version = McpSchema.LATEST_PROTOCOL_VERSION
          core.fallback.version = version
          return Effect.logWarning(
            `server '${spec.name}': its 2026-07-28 exchanges failed while connecting (${error.message}); ` +
              `falling back to ${version} from now on`
          ).pipe(Effect.annotateLogs({ server: spec.name }), Effect.zipRight(open(clock, version)))
        }
      ),
      Effect.mapError(({ error }) => error)
    )
    const c = yield* inSpan("ServerRegistry.connect", () => ({ [Telemetry.ServerName]: spec.name }), connected)
    readySince = yield* Clock.currentTimeMillis
    core.auth.ready()
    core.gate.setClient(c)
    if (StatefulTwin.wanted(spec, c.protocolVersion)) {
      core.gate.setTwin(yield* StatefulTwin.make(core, watcherOf(core), scope, connect(core)))
    }
    live = true
    yield* core.setState(
      ServerState.Ready({ protocolVersion: c.protocolVersion, serverInfo: c.serverInfo, since: readySince })
    )
    const ended = yield* Effect.raceAll([
      c.closed,
      Effect.flip(healthCheck(spec.health, c)),
      idleAfter === undefined ? Effect.never : Effect.as(core.gate.idle(idleAfter), "idle" as const)
    ])
    return ended === "idle" ? { _tag: "Idle" } as const : yield* Effect.fail(ended)
  })
  return Effect.raceFirst(
    Scope.extend(serve, scope),
    Effect.map(takeControl(core, ["restart", "disable"]), (c): Outcome => ({ _tag: "Control", control: c }))
  ).pipe(
    Effect.catchAll((error) =>
      Effect.map(Clock.currentTimeMillis, (at): Outcome => ({
        _tag: "Failed",
        error: core.mask(error),
        readyFor: readySince === undefined ? 0 : at - readySince
      }))
    ),
    // Calls stop going to this connection before anything else happens.
    Effect.ensuring(Effect.sync(() => {
      live = false
      core.gate.setClient(undefined)
    }))
  )
}
