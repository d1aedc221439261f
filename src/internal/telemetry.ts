/**
 * The MCP conventions applied to one request (`Telemetry` names them): its span on either
 * side, its duration point, and the trace context it carries in `params._meta`.
 *
 * The split keeps the per-call path cheap: a duration point costs a map look-up and a
 * histogram update (tags are kept per value, so Effect finds the metric's state by identity);
 * a span is made only when a tracer other than the built-in one is provided, like `traced`.
 * A request that arrives with a `traceparent` is served under it even without a tracer (an
 * app's own spans, made with the built-in tracer, join the trace).
 *
 * A span's status message is the error's class (`JSON-RPC error -32602`, `tool_error`), never
 * a server's own message: a Peer sees messages before the fleet masks secrets in them.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"
import type * as Metric from "effect/Metric"
import * as MetricLabel from "effect/MetricLabel"
import * as Tracer from "effect/Tracer"
import type * as JsonRpc from "../JsonRpc.js"
import type * as McpError from "../McpError.js"
import { Attributes as A, ServerName } from "../Telemetry.js"
import { builtIn } from "./traced.js"

export { builtIn }

// Tag arrays by their values: `Metric.unsafeUpdate` finds a metric's state by the array's
// identity. Tags are low-cardinality by design; the bound keeps a misbehaving peer (a
// stream of made-up tool names) from growing it without end.
const MAX_TAG_SETS = 2048

const labelsOf = (pairs: ReadonlyArray<readonly [string, string | undefined]>) =>
  pairs.flatMap(([k, v]) => v === undefined ? [] : [MetricLabel.make(k, v)])

/** Records points of `metric`, tagged by `tags`, the same array for the same values. */
export const pointsOf = (metric: Metric.Metric<any, number, any>) => {
  const cache = new Map<string, ReadonlyArray<MetricLabel.MetricLabel>>()
  return (value: number, key: string, tags: () => ReadonlyArray<MetricLabel.MetricLabel>): void => {
    let labels = cache.get(key)
    if (labels === undefined) {
      if (cache.size >= MAX_TAG_SETS) cache.clear()
      labels = tags()
      cache.set(key, labels)
    }
    metric.unsafeUpdate(value, labels)
  }
}

/** The low-cardinality target of a request: its tool's or prompt's name. */
export const targetOf = (method: string, params: Record<string, unknown> | undefined): string | undefined => {
  if (method !== "tools/call" && method !== "prompts/get") return undefined
  const name = params?.name
  return typeof name === "string" ? name : undefined
}

/** How an ended request is classified: `error.type` and, for a JSON-RPC error, its code. */
export interface Outcome {
  readonly errorType: string | undefined
  readonly statusCode: string | undefined
}

const ok: Outcome = { errorType: undefined, statusCode: undefined }
const toolError: Outcome = { errorType: "tool_error", statusCode: undefined }

const ofCode = (code: number): Outcome => ({ errorType: String(code), statusCode: String(code) })

const ofResult = (result: Record<string, unknown>): Outcome => result.isError === true ? toolError : ok

/** The outcome of a request we sent. */
export const clientOutcome = (exit: Exit.Exit<Record<string, unknown>, McpError.McpError>): Outcome => {
  if (Exit.isSuccess(exit)) return ofResult(exit.value)
  if (exit.cause._tag !== "Fail") return { errorType: "cancelled", statusCode: undefined }
  const reason = exit.cause.error.reason
  if (reason._tag === "Protocol") return ofCode(reason.code)
  return { errorType: reason._tag.toLowerCase(), statusCode: undefined }
}

/** The outcome of a request we served (a handler fails with a JSON-RPC `code`). */
export const serverOutcome = (exit: Exit.Exit<Record<string, unknown>, { readonly code: number }>): Outcome => {
  if (Exit.isSuccess(exit)) return ofResult(exit.value)
  if (exit.cause._tag !== "Fail") {
    return { errorType: exit.cause._tag === "Interrupt" ? "cancelled" : "_OTHER", statusCode: undefined }
  }
  return ofCode(exit.cause.error.code)
}

/** A server's tag, {@link ServerName}: made once per server and shared by its tag sets. */
export const serverTag = (server: string): MetricLabel.MetricLabel => MetricLabel.make(ServerName, server)

/**
 * The duration recorder of one side towards one server (`serverLabel`, from {@link serverTag}):
 * `record(method, target, outcome, seconds)`. The server's label is shared, not made per tag
 * set: each label hashes its key and value when made, and that hashing adds up during connect.
 */
export const operationPoints = (metric: Metric.Metric<any, number, any>, serverLabel: MetricLabel.MetricLabel) => {
  const points = pointsOf(metric)
  const tags = (method: string, target: string | undefined, outcome: Outcome) => () => [
    MetricLabel.make(A.methodName, method),
    serverLabel,
    ...labelsOf([
      [method === "prompts/get" ? A.promptName : A.toolName, target],
      [A.errorType, outcome.errorType],
      [A.statusCode, outcome.statusCode]
    ])
  ]
  // The tags of a success by method, then target: found without making a key (the common case).
  const succeeded = new Map<string, Map<string | undefined, ReadonlyArray<MetricLabel.MetricLabel>>>()
  return (method: string, target: string | undefined, outcome: Outcome, seconds: number): void => {
    if (outcome !== ok) {
      return points(seconds, `${method}\u0000${target ?? ""}\u0000${outcome.errorType}`, tags(method, target, outcome))
    }
    let byTarget = succeeded.get(method)
    if (byTarget === undefined) {
      if (succeeded.size >= MAX_TAG_SETS) succeeded.clear()
      byTarget = new Map()
      succeeded.set(method, byTarget)
    }
    let labels = byTarget.get(target)
    if (labels === undefined) {
      if (byTarget.size >= MAX_TAG_SETS) byTarget.clear()
      labels = tags(method, target, outcome)()
      byTarget.set(target, labels)
    }
    metric.unsafeUpdate(seconds, labels)
  }
}

/** The W3C trace state and baggage a served request brought, passed on with the requests it makes. */
export const carried = FiberRef.unsafeMake<{ readonly tracestate?: string; readonly baggage?: string } | undefined>(
  undefined
)

const TRACEPARENT = /^[\da-f]{2}-([\da-f]{32})-([\da-f]{16})-([\da-f]{2})$/

/** The parent a served request names in `params._meta.traceparent`, if a valid one. */
export const extract = (params: Record<string, unknown> | undefined): Tracer.ExternalSpan | undefined => {
  const meta = params?._meta
  if (typeof meta !== "object" || meta === null) return undefined
  const traceparent = (meta as Record<string, unknown>).traceparent
  const match = typeof traceparent === "string" ? TRACEPARENT.exec(traceparent) : null
  if (match === null || /^0+$/.test(match[1]!) || /^0+$/.test(match[2]!)) return undefined
  return Tracer.externalSpan({
    traceId: match[1]!,
    spanId: match[2]!,
    sampled: (parseInt(match[3]!, 16) & 1) === 1
  })
}

const stringAt = (meta: unknown, key: string): string | undefined => {
  const value = typeof meta === "object" && meta !== null ? (meta as Record<string, unknown>)[key] : undefined
  return typeof value === "string" ? value : undefined
}

/** Runs `effect` under the served request's `tracestate`/`baggage`, passed on when it sends requests. */
export const carrying = <A, E, R>(params: Record<string, unknown> | undefined, effect: Effect.Effect<A, E, R>) => {
  const meta = params?._meta
  const tracestate = stringAt(meta, "tracestate")
  const baggage = stringAt(meta, "baggage")
  return tracestate === undefined && baggage === undefined ? effect : Effect.locally(effect, carried, {
    ...(tracestate === undefined ? {} : { tracestate }),
    ...(baggage === undefined ? {} : { baggage })
  })
}

/** `params` with the span's trace context (and what the served request carried) in `_meta`. */
export const inject = (
  params: Record<string, unknown> | undefined,
  span: Tracer.AnySpan,
  state: { readonly tracestate?: string; readonly baggage?: string } | undefined
): Record<string, unknown> => {
  const meta = params?._meta as object | undefined
  return {
    ...params,
    _meta: {
      ...meta,
      traceparent: `00-${span.traceId}-${span.spanId}-${span.sampled ? "01" : "00"}`,
      ...state
    }
  }
}

/** The name of a request's span: `{mcp.method.name} {target}`. */
export const spanName = (method: string, target: string | undefined): string =>
  target === undefined ? method : `${method} ${target}`

/** The attributes every request's span has, whichever side. */
export const requestAttributes = (
  method: string,
  target: string | undefined,
  server: string
): Record<string, unknown> => ({
  [A.methodName]: method,
  [ServerName]: server,
  ...(target === undefined ? {} : {
    [method === "prompts/get" ? A.promptName : A.toolName]: target,
    ...(method === "tools/call" ? { [A.operationName]: "execute_tool" } : {})
  })
})

/** The network attributes of a transport of this `kind` reaching `url`. */
export const networkAttributes = (kind: string, url: unknown): Record<string, unknown> => {
  if (kind === "stdio") return { [A.networkTransport]: "pipe" }
  if (kind !== "http" && kind !== "sse" && kind !== "ws") return {}
  const attributes: Record<string, unknown> = {
    [A.networkTransport]: "tcp",
    [A.networkProtocolName]: kind === "ws" ? "websocket" : "http"
  }
  if (typeof url !== "string") return attributes
  try {
    const parsed = new URL(url)
    const port = parsed.port === ""
      ? (parsed.protocol === "https:" || parsed.protocol === "wss:" ? 443 : 80)
      : +parsed.port
    return { ...attributes, [A.serverAddress]: parsed.hostname.replace(/^\[|\]$/g, ""), [A.serverPort]: port }
  } catch {
    return attributes
  }
}

// A failure for a span's status: its class as the message, nothing a server wrote.
class Failed extends Error {
  constructor(readonly errorType: string) {
    super(errorType)
    this.name = "McpRequestFailed"
  }
}

/** Ends `span` with the outcome's attributes and status, now on the clock in context. */
export const endSpan = (
  span: Tracer.Span,
  outcome: Outcome,
  exit: Exit.Exit<unknown, unknown>,
  nanos: bigint
): void => {
  if (outcome.errorType !== undefined) span.attribute(A.errorType, outcome.errorType)
  if (outcome.statusCode !== undefined) span.attribute(A.statusCode, outcome.statusCode)
  const status = outcome.errorType === undefined
    ? Exit.void
    : Exit.isFailure(exit) && exit.cause._tag === "Interrupt"
    ? exit
    : Exit.fail(
      new Failed(outcome.statusCode === undefined ? outcome.errorType : `JSON-RPC error ${outcome.statusCode}`)
    )
  span.end(nanos, status)
}

/** The fields of a served request needed for its telemetry. */
export type Served = Pick<JsonRpc.Request, "id" | "method" | "params">

/** Records one session's duration point: it ended now, `seconds` after it started. */
export const sessionPoint = (
  metric: Metric.Metric<any, number, any>,
  session: {
    readonly server: string
    readonly kind: string
    readonly protocolVersion: string | undefined
    readonly errorType: string | undefined
  },
  seconds: number
): void => {
  const transport = networkAttributes(session.kind, undefined)[A.networkTransport]
  const tags: Array<readonly [string, string | undefined]> = [
    [ServerName, session.server],
    [A.networkTransport, typeof transport === "string" ? transport : undefined],
    [A.protocolVersion, session.protocolVersion],
    [A.errorType, session.errorType]
  ]
  metric.unsafeUpdate(seconds, labelsOf(tags))
}
