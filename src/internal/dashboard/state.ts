/**
 * What the page shows, as JSON: each server's status, the catalog with what the policy
 * decides for each tool, the drifted tools with their diff, the project configs waiting for
 * trust, the asks waiting for an answer and the call metrics. Only what the fleet already
 * masked leaves here: errors and stderr tails come masked from each server's actor, and no
 * spec (with its env or headers) is ever read.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as SubscriptionRef from "effect/SubscriptionRef"
import type * as Catalog from "../../Catalog.js"
import type * as McpError from "../../McpError.js"
import type * as Policy from "../../Policy.js"
import type { RegistryEvent } from "../../RegistryEvent.js"
import type * as ServerRegistry from "../../ServerRegistry.js"
import { describe } from "../../ServerState.js"
import * as ToolPins from "../../ToolPins.js"
import type * as Asks from "./asks.js"
import type * as Metrics from "./metrics.js"

/** A project config file that starts nothing until trusted. */
export interface Untrusted {
  readonly path: string
  /** What it would start, one server a line. */
  readonly servers: ReadonlyArray<string>
  /** Trusted once, with other content. */
  readonly changed: boolean
}

/** Where the project configs waiting for trust come from, and how the page trusts one. */
export interface TrustQueue {
  readonly pending: Effect.Effect<ReadonlyArray<Untrusted>>
  /** Trusts the file's current content and applies it; fails with a sentence. */
  readonly trust: (path: string) => Effect.Effect<void, string>
}

const errorJson = (error: McpError.McpError | undefined) => {
  if (error === undefined) return null
  const tail = (error.reason as { readonly stderrTail?: string | undefined }).stderrTail
  return { message: error.message, stderrTail: tail ?? null }
}

const serverJson = (status: ServerRegistry.ServerStatus, now: number, restarts: number) => {
  const state = status.state
  const error = state._tag === "Failed" || state._tag === "NeedsAuth" ? state.error : status.lastError
  const pid = status.connection?.["pid"]
  return {
    name: status.name,
    state: state._tag,
    detail: describe(state, now),
    since: "since" in state ? state.since : null,
    revision: status.protocolVersion ?? null,
    serverInfo: status.serverInfo === undefined ? null : `${status.serverInfo.name} ${status.serverInfo.version}`,
    transport: status.transport,
    pid: typeof pid === "number" ? pid : null,
    counts: status.counts,
    restarts,
    lastError: errorJson(error)
  }
}

const driftJson = (drift: ToolPins.Drift) => ({
  server: drift.server,
  tool: drift.tool,
  name: drift.name,
  quarantined: drift.quarantined,
  summary: ToolPins.describeDrift(drift),
  diff: ToolPins.diff(drift)
})

/** What a snapshot reads. */
export interface Sources {
  readonly registry: ServerRegistry.ServerRegistry
  readonly policy: Policy.Policy
  readonly asks: Asks.Asks
  readonly metrics: Metrics.Series
  readonly trust: TrustQueue | undefined
  /** Restarts per server since the dashboard began (`Metrics.restarts`). */
  readonly restarts: Effect.Effect<(server: string) => number>
}

export const snapshot = (sources: Sources) =>
  Effect.gen(function*() {
    const { policy, registry } = sources
    const [statuses, catalog, drifted, untrusted, restarts, now] = yield* Effect.all([
      registry.status,
      SubscriptionRef.get(registry.catalog),
      registry.drifted,
      sources.trust?.pending ?? Effect.succeed([]),
      sources.restarts,
      Effect.clockWith((clock) => clock.currentTimeMillis)
    ])
    // The page brings its own approver: a tool under `ask` is kept, and asked in the page,
    // even where the policy has no approver of its own (then `decide` says deny).
    const kept = new Set(policy.filter(catalog, { approver: true }).tools.map((entry) => entry.name))
    const decision = (entry: Catalog.ToolEntry) => {
      const action = policy.decide(entry).action
      return !kept.has(entry.name) ? "deny" : action === "deny" ? "ask" : action
    }
    return {
      now,
      servers: statuses.map((status) => serverJson(status, now, restarts(status.name))),
      tools: catalog.tools.map((entry) => ({
        name: entry.name,
        server: entry.server,
        tool: entry.tool.name,
        title: entry.tool.title ?? null,
        description: entry.tool.description ?? "",
        inputSchema: entry.tool.inputSchema,
        decision: decision(entry)
      })),
      drifted: drifted.map(driftJson),
      untrusted,
      asks: sources.asks.pending(),
      metrics: sources.metrics.points()
    }
  })

/** An event as the page lists it when no richer form is given: its type and server. */
export const eventJson = (event: RegistryEvent, now: number): Record<string, unknown> => ({
  time: new Date(now).toISOString(),
  type: event._tag,
  server: event.server
})
