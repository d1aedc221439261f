/**
 * What a 2026-07-28 connection does differently, given the revision agreed on: every request
 * carries the revision, identity and capabilities (and the log level, which replaces
 * `logging/setLevel`; `Options.logLevel` from the start) in its `_meta` — a request that
 * names capabilities of its own declares only those of them the connection declares too (a
 * gateway passes on its caller's, so the server asks that caller only what it can answer);
 * lists and reads go through the ttl cache; tools the transport refuses for invalid
 * `x-mcp-header` annotations are dropped with a warning; a tool call refused with
 * HeaderMismatch (-32020) is tried once more after the tools are listed again (its
 * `x-mcp-header` arguments may have changed); ping, which the revision has
 * not, is `server/discover`. Results lose the revision's envelope (`resultType`, the server's
 * identity in `_meta`, the caching hints once the cache has read them): the connection's
 * users get what a stateful server would have answered.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import { isRecord } from "effect/Predicate"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import type * as JsonRpc from "../../JsonRpc.js"
import type { McpClient } from "../../McpClient.js"
import type * as McpError from "../../McpError.js"
import * as McpSchema from "../../McpSchema.js"
import type * as Peer from "../../Peer.js"
import type { TransportService } from "../../Transport.js"
import { traced } from "../traced.js"
import { makeCache } from "./cache.js"
import { type Hello, requestMeta } from "./handshake.js"

/** A stateless connection's ways. */
export interface Stateless {
  /** The Peer's `request`, with our `_meta` merged into the params'. */
  readonly send: Peer.Peer["request"]
  /** How the tools are listed again after a HeaderMismatch; set once the lister exists. */
  relist: Effect.Effect<unknown, McpError.McpError>
  /** A request through the ttl cache. */
  readonly cached: (fetch: McpClient["request"]) => McpClient["request"]
  /** The tools listed, without those the transport refuses. */
  readonly accepted: (
    tools: ReadonlyArray<McpSchema.Tool>
  ) => Effect.Effect<ReadonlyArray<McpSchema.Tool>>
  /** The operations that differ from a stateful connection's. */
  readonly operations: (parts: {
    readonly request: McpClient["request"]
    readonly gate: <A>(
      feature: "logging",
      action: string,
      effect: Effect.Effect<A, McpError.McpError>
    ) => Effect.Effect<A, McpError.McpError>
  }) => Pick<McpClient, "setLoggingLevel" | "ping">
}

/**
 * The ways of a connection that agreed on `version` with `peer`, over `transport`.
 */
export const makeStateless = (
  peer: Peer.Peer,
  transport: TransportService,
  version: McpSchema.ModernProtocolVersion,
  hello: Hello
): Effect.Effect<Stateless, never, Scope.Scope> =>
  Effect.gen(function*() {
    const server = peer.server
    let meta = requestMeta(version, hello, hello.logLevel)
    const cache = yield* makeCache(peer)
    const mirror = transport.mirrorToolArguments
    const withMeta = (params: Record<string, unknown> | undefined) => {
      const own = params?._meta
      if (!isRecord(own)) return { ...params, _meta: meta }
      const asked = own[McpSchema.MetaKey.ClientCapabilities]
      const merged = { ...own, ...meta }
      if (isRecord(asked)) merged[McpSchema.MetaKey.ClientCapabilities] = narrowed(asked, hello.capabilities ?? {})
      return { ...params, _meta: merged }
    }
    const self: Stateless = {
      relist: Effect.void,
      send: (method, params, options) => {
        const sent = peer.request(method, withMeta(params), options)
        if (method !== McpSchema.Method.ToolsCall) return sent
        return Effect.catchIf(sent, isHeaderMismatch, () =>
          Effect.suspend(() => {
            cache.forget(McpSchema.Method.ToolsList)
            return Effect.zipRight(self.relist, peer.request(method, withMeta(params), options))
          }))
      },
      cached: (fetch) => (method, params, schema, options) =>
        Effect.map(cache.through(method, params, fetch(method, params, schema, options)), withoutHints),
      accepted: (tools) => {
        const rejected = mirror === undefined ? undefined : mirror(tools)
        if (rejected === undefined || rejected.size === 0) return Effect.succeed(tools)
        return Effect.as(
          Effect.forEach(
            rejected,
            ([name, reason]) =>
              Effect.logWarning(`server '${server}': tool '${name}' dropped: invalid x-mcp-header (${reason})`).pipe(
                Effect.annotateLogs({ server })
              ),
            { discard: true }
          ),
          tools.filter((tool) => !rejected.has(tool.name))
        )
      },
      operations: ({ gate, request }) => ({
        // The level rides on every later request: a stateless server keeps no state of ours.
        setLoggingLevel: traced("McpClient.setLoggingLevel")((level: McpSchema.LoggingLevel) =>
          gate(
            "logging",
            "set the logging level",
            Effect.sync(() => {
              meta = requestMeta(version, hello, level)
            })
          )
        ),
        ping: traced("McpClient.ping")(() =>
          Effect.asVoid(request(McpSchema.DISCOVER_METHOD, undefined, McpSchema.DiscoverResult))
        )
      })
    }
    return self
  })

// What `asked` declares that `declared` declares too, member by member.
const narrowed = (asked: Record<string, unknown>, declared: Record<string, unknown>): Record<string, unknown> => {
  const kept: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(asked)) {
    if (!Object.hasOwn(declared, key)) continue
    const own = declared[key]
    kept[key] = isRecord(value) && isRecord(own) ? narrowed(value, own) : own
  }
  return kept
}

const decodeLog = McpSchema.decodeUnknown(McpSchema.LoggingMessageNotificationParams)

/**
 * The log messages of 2026-07-28 calls (`CallToolOptions.onLog`): the server sends them only
 * for requests that name a level, on the request's own stream, before its answer. The Peer
 * hands each one over as it arrives (`told`), before that answer resumes the call; a fiber of
 * the call tells them as they come (a long call's progress is not held back), and the call
 * waits for the last of them before its outcome. On stdio, where nothing names the request,
 * they go to the latest call in flight that takes them.
 */
export class CallLogs {
  private readonly sinks = new Set<Queue.Queue<LogSinkItem>>()

  /** The Peer's `onNotification`: costs a method comparison while no call takes logs. */
  readonly told = (notification: JsonRpc.Notification): void => {
    if (this.sinks.size === 0 || notification.method !== McpSchema.Method.LoggingMessage) return
    const decoded = decodeLog(notification.params)
    if (Either.isLeft(decoded)) return
    let latest: Queue.Queue<LogSinkItem> | undefined
    for (const sink of this.sinks) latest = sink
    latest!.unsafeOffer(decoded.right)
  }

  /** Runs `call`, telling `onLog` what comes for it as it comes, all of it before its outcome. */
  around<A>(
    call: Effect.Effect<A, McpError.McpError>,
    onLog: (message: McpSchema.LoggingMessageNotificationParams) => Effect.Effect<void>
  ): Effect.Effect<A, McpError.McpError> {
    const sinks = this.sinks
    return Effect.gen(function*() {
      const sink = yield* Queue.unbounded<LogSinkItem>()
      sinks.add(sink)
      // A child of the call's fiber: interrupted with it.
      const telling = yield* Effect.fork(tellUntilEnd(sink, onLog))
      const exit = yield* Effect.exit(call).pipe(Effect.ensuring(Effect.sync(() => sinks.delete(sink))))
      sink.unsafeOffer(END_OF_LOGS)
      yield* Fiber.join(telling)
      return yield* exit
    })
  }
}

const END_OF_LOGS = Symbol("end of logs")
type LogSinkItem = McpSchema.LoggingMessageNotificationParams | typeof END_OF_LOGS

const tellUntilEnd = (
  sink: Queue.Queue<LogSinkItem>,
  onLog: (message: McpSchema.LoggingMessageNotificationParams) => Effect.Effect<void>
): Effect.Effect<void> =>
  Effect.flatMap(
    Queue.take(sink),
    (item) => item === END_OF_LOGS ? Effect.void : Effect.zipRight(onLog(item), tellUntilEnd(sink, onLog))
  )

// The `_meta` keys of the revision that describe the exchange (who answered), not the result.
const ENVELOPE_META: ReadonlyArray<string> = [
  McpSchema.MetaKey.ServerInfo,
  McpSchema.MetaKey.ProtocolVersion,
  McpSchema.MetaKey.ClientInfo,
  McpSchema.MetaKey.ClientCapabilities,
  McpSchema.MetaKey.LogLevel
]

const hasEnvelopeMeta = (meta: unknown): meta is Record<string, unknown> => {
  if (!isRecord(meta)) return false
  for (const key of ENVELOPE_META) if (key in meta) return true
  return false
}

// `meta` without the keys of the exchange; undefined when nothing else is left. Rest
// patterns, not `delete`: a deleted key leaves a slow dictionary object behind.
const resultMeta = (meta: Record<string, unknown>): Record<string, unknown> | undefined => {
  const {
    [McpSchema.MetaKey.ServerInfo]: _server,
    [McpSchema.MetaKey.ProtocolVersion]: _version,
    [McpSchema.MetaKey.ClientInfo]: _client,
    [McpSchema.MetaKey.ClientCapabilities]: _capabilities,
    [McpSchema.MetaKey.LogLevel]: _level,
    ...kept
  } = meta
  for (const _ in kept) return kept
  return undefined
}

/**
 * A result without the revision's envelope: its `resultType` and the `_meta` keys of the
 * exchange, consumed by the connection; what the caller gets is the result a stateful
 * server would have given (so a gateway passes on nothing of it). `_meta` left empty goes.
 * The result itself when it has neither (no copy on that path).
 */
export const withoutEnvelope = (result: Record<string, unknown>): Record<string, unknown> => {
  const meta = result._meta
  if (!hasEnvelopeMeta(meta)) {
    if (!("resultType" in result)) return result
    const { resultType: _type, ...rest } = result
    return rest
  }
  const { _meta: _meta, resultType: _type, ...rest } = result
  const kept = resultMeta(meta)
  if (kept !== undefined) rest._meta = kept
  return rest
}

// A result without the caching hints the cache has read (`ttlMs`, `cacheScope`).
const withoutHints = <A>(result: A): A => {
  if (!isRecord(result) || !("ttlMs" in result || "cacheScope" in result)) return result
  const { cacheScope: _scope, ttlMs: _ttl, ...rest } = result
  return rest as A
}

const isHeaderMismatch = (error: McpError.McpError): boolean =>
  error.reason._tag === "Protocol" && error.reason.code === McpSchema.ModernErrorCode.HeaderMismatch
