/**
 * What a connection is before its revision is known: the Peer over the Transport in context,
 * the host services declared and answering the server's requests (routed to a call's own
 * `onInput` when the server names the call), the hook that hands a modern call its log
 * messages, and what we say about ourselves in the handshake. Everything here is the same for
 * both revision families; what differs is the era (`era.ts`), chosen once the handshake
 * agreed on a revision. The host's notifications (a roots change) wait for that choice: a
 * legacy era sends them, a modern one has no session to tell.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Host from "../../Host.js"
import type * as JsonRpc from "../../JsonRpc.js"
import type { Options } from "../../McpClient.js"
import type * as McpError from "../../McpError.js"
import * as McpSchema from "../../McpSchema.js"
import * as Peer from "../../Peer.js"
import { Attributes, clientSessionDuration } from "../../Telemetry.js"
import { Transport } from "../../Transport.js"
import { sessionPoint } from "../telemetry.js"
import { RelatedCalls } from "./callInput.js"
import { CallLogs } from "./callLogs.js"
import type { Era } from "./era.js"
import type { Hello } from "./handshake.js"

/**
 * An open connection whose revision is not chosen yet, and what its era is made from.
 */
export interface Connection {
  readonly server: string
  readonly peer: Peer.Peer
  readonly transport: Transport
  /** The connection's Scope: what lives as long as it (listen streams, the cache) is forked here. */
  readonly scope: Scope.Scope
  readonly options: Options
  /** The handlers of the server's requests: the host services', then `Options.handlers`. */
  readonly handlers: Readonly<Record<string, Peer.Handler>>
  /** The calls that answer their own input requests (`CallToolOptions.onInput`). */
  readonly related: RelatedCalls
  /** The calls that take their log messages (`CallToolOptions.onLog`, modern only). */
  readonly callLogs: CallLogs
  /** What the handshake says about us. */
  readonly hello: Hello
  /**
   * The requests' default timeout (the options', else 60 s): how long a listen stream may go
   * unacknowledged, and a 2026-07-28 round's answers may take.
   */
  readonly requestTimeout: Duration.DurationInput
  /** The era, once chosen (`era.ts`); the host's notifications wait for it. */
  readonly chosen: Deferred.Deferred<Era>
  readonly host: Host.ClientSide
  /** The connection's own subscription to the server's notifications, from before the handshake. */
  readonly own: Queue.Dequeue<JsonRpc.Notification>
  /** The revision, once agreed: for the connection's telemetry. */
  readonly agreed: { protocolVersion?: string | undefined }
}

/**
 * Opens the Peer over the Transport in context, with the host services in context declared.
 */
export const connect = (options: Options): Effect.Effect<Connection, McpError.McpError, Transport | Scope.Scope> =>
  Effect.gen(function*() {
    const transport = yield* Transport
    const chosen = yield* Deferred.make<Era>()
    const host = Host.clientSide(yield* Host.services(options.host), {
      server: transport.server,
      notify: (method, params) => Effect.flatMap(Deferred.await(chosen), (era) => era.notify(method, params))
    })
    const handlers = { ...host.handlers, ...options.handlers }
    const callLogs = new CallLogs()
    const related = new RelatedCalls()
    const agreed: Connection["agreed"] = {}
    let failed: McpError.McpError | undefined
    const peer = yield* Peer.make({
      handlers: related.wrap(handlers),
      requestTimeout: options.requestTimeout,
      onClosed: (error) => {
        failed = error
        options.onClosed?.(error)
      },
      onNotification: callLogs.told,
      spanAttributes: () =>
        agreed.protocolVersion === undefined ? {} : { [Attributes.protocolVersion]: agreed.protocolVersion }
    })
    // Added after the Peer's, so it runs first: a Peer already closed then ended by a failure.
    const clock = yield* Effect.clock
    const started = clock.unsafeCurrentTimeMillis()
    yield* Effect.addFinalizer(() =>
      Effect.sync(() =>
        sessionPoint(clientSessionDuration, {
          server: transport.server,
          kind: transport.kind,
          protocolVersion: agreed.protocolVersion,
          errorType: failed === undefined ? undefined : failed.reason._tag.toLowerCase()
        }, (clock.unsafeCurrentTimeMillis() - started) / 1000)
      )
    )
    return {
      server: peer.server,
      peer,
      transport,
      scope: yield* Effect.scope,
      options,
      handlers,
      related,
      callLogs,
      hello: { ...options, capabilities: { ...host.capabilities, ...options.capabilities } },
      requestTimeout: options.requestTimeout ?? "60 seconds",
      chosen,
      host,
      // Subscribed before the handshake, so nothing the server says is missed.
      own: yield* peer.subscribe,
      agreed
    }
  })

/**
 * Hands the connection's own notifications to the host services, and `onToolsChanged` each
 * `notifications/tools/list_changed`; tells the server of roots changes. Both for the
 * connection's life.
 */
export const watch = (
  connection: Connection,
  onToolsChanged: () => void
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.zipRight(
    Queue.take(connection.own).pipe(
      Effect.tap((notification) => {
        if (notification.method === McpSchema.Method.ToolsListChanged) onToolsChanged()
        return connection.host.onNotification(notification)
      }),
      Effect.forever,
      Effect.forkScoped
    ),
    Effect.forkScoped(connection.host.watchRoots)
  )
