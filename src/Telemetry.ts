/**
 * Telemetry by the OpenTelemetry MCP semantic conventions (semconv gen-ai, `mcp.md`): the
 * attribute keys, the metrics, and the trace context carried in `params._meta` (SEP-414).
 *
 * Everything here is plain Effect: the metrics are `effect/Metric`s, kept in the process and
 * read with `Metric.snapshot`, and exported only when an app provides a meter (for example
 * `@effect/opentelemetry`'s `OtlpMetrics.layer`); spans go to the app's `Tracer`, if any. With
 * neither, a call pays a few map look-ups and no span.
 *
 * Every per-operation point is tagged with `mcp.method.name`, the fleet's name for the server
 * under {@link ServerName} (`mcp_fleet.server.name`), and `error.type` when it failed (the
 * JSON-RPC error code as text, `tool_error` for a tool result with `isError`, `timeout`, or the
 * lower-cased reason of an `McpError`).
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import type * as MetricHook from "effect/MetricHook"
import * as MetricKey from "effect/MetricKey"
import * as MetricKeyType from "effect/MetricKeyType"
import * as MetricLabel from "effect/MetricLabel"

/**
 * The attribute (and metric tag) that names a server as the fleet knows it: the key of the
 * config's `servers` entry, or the name an `McpServer` gives itself.
 *
 * @since 0.1.0
 * @category attributes
 */
export const ServerName = "mcp_fleet.server.name"

/**
 * The attribute keys of the MCP semantic conventions mcp-fleet sets on spans and metrics.
 *
 * @since 0.1.0
 * @category attributes
 */
export const Attributes = {
  methodName: "mcp.method.name",
  protocolVersion: "mcp.protocol.version",
  sessionId: "mcp.session.id",
  resourceUri: "mcp.resource.uri",
  requestId: "jsonrpc.request.id",
  toolName: "gen_ai.tool.name",
  promptName: "gen_ai.prompt.name",
  operationName: "gen_ai.operation.name",
  networkTransport: "network.transport",
  networkProtocolName: "network.protocol.name",
  serverAddress: "server.address",
  serverPort: "server.port",
  errorType: "error.type",
  statusCode: "rpc.response.status_code",
  serverName: ServerName,
  serverState: "mcp_fleet.server.state",
  policyDecision: "mcp_fleet.policy.decision"
} as const

// The boundaries the conventions advise for all four MCP histograms, in seconds.
const durationBoundaries = MetricBoundaries.fromIterable([
  0.01,
  0.02,
  0.05,
  0.1,
  0.2,
  0.5,
  1,
  2,
  5,
  10,
  30,
  60,
  120,
  300
])

// `@effect/opentelemetry` takes a metric's unit from its `unit` tag, so every key of these
// metrics starts with one. Made here rather than with `MetricKey.tagged` (a second key per
// metric) or `Metric.tagged` (a new tag array, so a new key, per update), and at first use,
// not at import: each key hashes its name and description when made, and V8 optimizes effect's
// string hash once it has hashed ~2,000 characters; the optimizing compiler then stays
// resident (~3 MB of a bundled client's start). A key per tag set remains, as with any Metric.
const withUnit = <Type extends MetricKeyType.MetricKeyType<any, any>>(
  keyType: Type,
  makeKey: () => MetricKey.MetricKey<Type>,
  unit: string
): Metric.Metric<Type, MetricKeyType.MetricKeyType.InType<Type>, MetricKeyType.MetricKeyType.OutType<Type>> => {
  type Hook = MetricHook.MetricHook<MetricKeyType.MetricKeyType.InType<Type>, MetricKeyType.MetricKeyType.OutType<Type>>
  let base:
    | { readonly key: MetricKey.MetricKey<Type>; readonly unit: ReadonlyArray<MetricLabel.MetricLabel> }
    | undefined
  // By the tag array's identity, as effect's own metrics find a tag set's hook.
  const hooks = new WeakMap<ReadonlyArray<MetricLabel.MetricLabel>, Hook>()
  const hook = (tags: ReadonlyArray<MetricLabel.MetricLabel>): Hook => {
    let found = hooks.get(tags)
    if (found === undefined) {
      base ??= { key: makeKey(), unit: [MetricLabel.make("unit", unit)] }
      const all = tags.length === 0 ? base.unit : Arr.union(base.unit, tags)
      found = Metric.globalMetricRegistry.get(MetricKey.taggedWithLabels(base.key, all))
      hooks.set(tags, found)
    }
    return found
  }
  return Metric.make(
    keyType,
    (input, tags) => hook(tags).update(input),
    (tags) => hook(tags).get(),
    (input, tags) => hook(tags).modify(input)
  )
}

const histogramType = MetricKeyType.histogram(durationBoundaries)
const gaugeType = MetricKeyType.gauge<number>()
// The Metric's own key type, for its type only; its points go to the keys `makeKey` makes,
// whose counters are incremental (effect's public constructor makes no incremental type).
const counterType = MetricKeyType.counter<number>()

const seconds = (name: string, description: string): Metric.Metric.Histogram<number> =>
  withUnit(histogramType, () => MetricKey.histogram(name, durationBoundaries, description), "s")

const gauge = (name: string, description: string, unit: string): Metric.Metric.Gauge<number> =>
  withUnit(gaugeType, () => MetricKey.gauge(name, { description }), unit)

const counter = (name: string, description: string, unit: string): Metric.Metric.Counter<number> =>
  withUnit(counterType, () => MetricKey.counter(name, { description, incremental: true }), unit)

/**
 * `mcp.client.operation.duration` (histogram, seconds): a request from sending it to its
 * answer, on the side that sent it. Tags: `mcp.method.name`, `mcp_fleet.server.name`,
 * `gen_ai.tool.name` (tools/call) or `gen_ai.prompt.name` (prompts/get), and, when it
 * failed, `error.type` and `rpc.response.status_code` (a JSON-RPC error's code). A 2025
 * server's "method not found" to the `server/discover` probe is the handshake falling back,
 * not a failed operation: it is no point.
 *
 * @since 0.1.0
 * @category metrics
 */
export const clientOperationDuration = seconds(
  "mcp.client.operation.duration",
  "The duration of the MCP request or notification as observed on the sender from the time it was sent until the response or ack is received."
)

/**
 * `mcp.server.operation.duration` (histogram, seconds): a request served, from receiving it
 * to sending its answer. Tags as {@link clientOperationDuration}; `mcp_fleet.server.name`
 * is the serving `McpServer`'s name.
 *
 * @since 0.1.0
 * @category metrics
 */
export const serverOperationDuration = seconds(
  "mcp.server.operation.duration",
  "MCP request or notification duration as observed on the receiver from the time it was received until the result or ack is sent."
)

/**
 * `mcp.client.session.duration` (histogram, seconds): one connection to a server, from its
 * start to its end. Tags: `mcp_fleet.server.name`, `network.transport`,
 * `mcp.protocol.version`, and `error.type` when it ended by a failure.
 *
 * @since 0.1.0
 * @category metrics
 */
export const clientSessionDuration = seconds(
  "mcp.client.session.duration",
  "The duration of the MCP session as observed on the MCP client."
)

/**
 * `mcp.server.session.duration` (histogram, seconds): one client's session on a served
 * `McpServer`. Tags: `mcp_fleet.server.name`, `network.transport`, `mcp.protocol.version`.
 *
 * @since 0.1.0
 * @category metrics
 */
export const serverSessionDuration = seconds(
  "mcp.server.session.duration",
  "The duration of the MCP session as observed on the MCP server."
)

/**
 * `mcp_fleet.servers` (gauge, `{server}`): how many of the fleet's servers are in each
 * state. Tag: `mcp_fleet.server.state` (`Starting`, `Ready`, `Failed`, ...).
 *
 * @since 0.1.0
 * @category metrics
 */
export const serversByState = gauge("mcp_fleet.servers", "The fleet's servers in each state.", "{server}")

/**
 * `mcp_fleet.server.restarts` (counter, `{restart}`): a server's connection started again
 * after it failed, or restarted on request while it was up (`ServerState.isRestart`). Tag:
 * `mcp_fleet.server.name`.
 *
 * @since 0.1.0
 * @category metrics
 */
export const restarts = counter(
  "mcp_fleet.server.restarts",
  "Connections to a server started again after a failure, or restarted on request.",
  "{restart}"
)

/**
 * `mcp_fleet.calls.in_flight` (gauge, `{call}`): requests sent to a server and not yet
 * answered. Tag: `mcp_fleet.server.name`.
 *
 * @since 0.1.0
 * @category metrics
 */
export const callsInFlight = gauge(
  "mcp_fleet.calls.in_flight",
  "Requests sent to a server and not yet answered.",
  "{call}"
)

/**
 * `mcp_fleet.policy.denials` (counter, `{call}`): calls the Policy refused. Tags:
 * `mcp_fleet.server.name`, `gen_ai.tool.name`, `mcp_fleet.policy.decision` (`deny`, or
 * `ask` when a person refused).
 *
 * @since 0.1.0
 * @category metrics
 */
export const denials = counter("mcp_fleet.policy.denials", "Calls the policy refused.", "{call}")

/**
 * `mcp_fleet.tools.held` (gauge, `{tool}`): a server's tools held out of the catalog until
 * approved (new or drifted from their pin). Tag: `mcp_fleet.server.name`.
 *
 * @since 0.1.0
 * @category metrics
 */
export const heldTools = gauge("mcp_fleet.tools.held", "Tools held out of the catalog until approved.", "{tool}")
