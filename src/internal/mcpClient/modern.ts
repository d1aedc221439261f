/**
 * The modern era: a connection of 2026-07-28, made after `server/discover`. Every request
 * carries the revision, identity and capabilities (and the log level, which replaces
 * `logging/setLevel`; `Options.logLevel` from the start) in its `_meta` — a request that
 * names capabilities of its own declares only those of them the connection declares too (a
 * gateway passes on its caller's, so the server asks that caller only what it can answer) —
 * and the tasks extension is declared there unless `Options.tasksExtension` is false. Lists
 * and reads go through the ttl cache (`cache.ts`); tools the transport refuses for invalid
 * `x-mcp-header` annotations are dropped with a warning; a tool call refused with
 * HeaderMismatch (-32020) is tried once more after the tools are listed again (its
 * `x-mcp-header` arguments may have changed). A call may be answered with input rounds or a
 * task of the extension (`exchange.ts`), and takes its log messages (`callLogs.ts`).
 * Results lose the revision's envelope (`envelope.ts`): the connection's users get what a
 * legacy server would have answered. The host tells the server nothing (there is no session
 * to tell); list changes come only on a listen stream, held while anyone watches, and each
 * resource subscription is a listen stream of its own (`listen.ts`); ping, which the
 * revision has not, is `server/discover`.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import { isRecord } from "effect/Predicate"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as JsonRpc from "../../JsonRpc.js"
import type * as McpError from "../../McpError.js"
import * as McpSchema from "../../McpSchema.js"
import type * as Peer from "../../Peer.js"
import { traced } from "../traced.js"
import { type Cache, makeCache } from "./cache.js"
import { forCall } from "./callInput.js"
import type { Connection } from "./connection.js"
import { withoutEnvelope, withoutHints } from "./envelope.js"
import type { Era, SendCall } from "./era.js"
import { makeExchange, requestOf } from "./exchange.js"
import { type Agreed, type Hello, requestMeta } from "./handshake.js"
import { listChangesOf, makeResourceSubscriptions, makeWatchedSubscribe } from "./listen.js"
import { makeOperations } from "./operations.js"
import { followTask, withTasksExtension } from "./tasks.js"

/**
 * The era of a connection that agreed on `version`, a modern revision; `relist` lists the
 * tools again as the connection does.
 */
export const makeModern = (
  connection: Connection,
  agreed: Agreed,
  version: McpSchema.ModernProtocolVersion,
  relist: Effect.Effect<unknown, McpError.McpError>
): Effect.Effect<Era, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { callLogs, handlers, peer, requestTimeout, scope, server } = connection
    const cache = yield* makeCache(peer)
    const sending = makeSending(connection, version, cache, relist)
    const wire: Peer.Peer = { ...peer, request: sending.send }
    const exchange = makeExchange(wire, handlers, withoutEnvelope, requestTimeout)
    const fetch = requestOf(server, exchange)
    const subscribe = makeWatchedSubscribe(wire, listChangesOf(agreed.capabilities), requestTimeout, scope)
    return {
      wire,
      // The server keeps no session to tell.
      notify: () => Effect.void,
      request: (method, params, schema, options) =>
        Effect.map(cache.through(method, params, fetch(method, params, schema, options)), withoutHints),
      accepted: acceptedBy(connection),
      sendCall: (): SendCall => (_name, params, requestOptions, options) => {
        if (options === undefined) return exchange(McpSchema.Method.ToolsCall, params, requestOptions)
        const call = exchange(McpSchema.Method.ToolsCall, params, requestOptions, options.onTask, options.onInput)
        return options.onLog === undefined ? call : callLogs.around(call, options.onLog)
      },
      // A call may take input rounds or become a task: its result is checked once it is final.
      plainCall: undefined,
      followTask: (taskId, options) =>
        Effect.map(
          // Taken up by its id, the task's input answers wait as long as a request of the connection.
          followTask(wire, forCall(handlers, options?.onInput), McpSchema.Method.ToolsCall, { taskId }, {
            onTask: options?.onTask,
            within: requestTimeout
          }),
          withoutEnvelope
        ),
      subscribe,
      notifications: Stream.unwrapScoped(Effect.map(subscribe, (queue) => Stream.fromQueue(queue))),
      operations: (parts) => ({
        ...makeOperations(parts),
        // No resources/subscribe in this revision: a listen stream stands for each subscription.
        ...makeResourceSubscriptions(wire, scope, requestTimeout, parts.gate),
        setLoggingLevel: traced("McpClient.setLoggingLevel")((level: McpSchema.LoggingLevel) =>
          parts.gate("logging", "set the logging level", sending.setLevel(level))
        ),
        ping: traced("McpClient.ping")(() =>
          Effect.asVoid(parts.request(McpSchema.DISCOVER_METHOD, undefined, McpSchema.DiscoverResult))
        )
      })
    }
  })

// The Peer's `request` with our `_meta` (the level in it changed by `setLevel`), and a tool
// call refused with HeaderMismatch tried once more after `relist`.
const makeSending = (
  { hello, options, peer }: Connection,
  version: McpSchema.ModernProtocolVersion,
  cache: Cache,
  relist: Effect.Effect<unknown, McpError.McpError>
) => {
  // The tasks extension belongs to this revision: declared in its requests' `_meta` only.
  const own: Hello = options.tasksExtension === false
    ? hello
    : { ...hello, capabilities: withTasksExtension(hello.capabilities ?? {}) }
  let meta = requestMeta(version, own, own.logLevel)
  const withMeta = (params: Record<string, unknown> | undefined) => {
    const asked = params?._meta
    // Per request: key by key, not `{ ...params, _meta }` (a slow path of V8's, see withField).
    if (!isRecord(asked)) return JsonRpc.withField(params, "_meta", meta)
    const capabilities = asked[McpSchema.MetaKey.ClientCapabilities]
    const merged = { ...asked, ...meta }
    if (isRecord(capabilities)) {
      merged[McpSchema.MetaKey.ClientCapabilities] = narrowed(capabilities, own.capabilities ?? {})
    }
    return JsonRpc.withField(params, "_meta", merged)
  }
  const send: Peer.Peer["request"] = (method, params, options) => {
    const sent = peer.request(method, withMeta(params), options)
    if (method !== McpSchema.Method.ToolsCall) return sent
    return Effect.catchIf(sent, isHeaderMismatch, () =>
      Effect.suspend(() => {
        cache.forget(McpSchema.Method.ToolsList)
        return Effect.zipRight(relist, peer.request(method, withMeta(params), options))
      }))
  }
  return {
    send,
    // The level rides on every later request: the server keeps no state of ours.
    setLevel: (level: McpSchema.LoggingLevel) =>
      Effect.sync(() => {
        meta = requestMeta(version, own, level)
      })
  }
}

// The tools of a listing without those the transport refuses, each told in the log.
const acceptedBy = ({ server, transport }: Connection): Era["accepted"] => {
  const mirror = transport.mirrorToolArguments
  return (tools) => {
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
  }
}

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

const isHeaderMismatch = (error: McpError.McpError): boolean =>
  error.reason._tag === "Protocol" && error.reason.code === McpSchema.ModernErrorCode.HeaderMismatch
