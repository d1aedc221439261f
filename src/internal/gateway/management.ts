/**
 * The MCP management tools of one session, when the gateway serves them (its
 * `managementTools` option): listed after the fleet's tools, called by their own names,
 * their subscriptions counted with the session's own, and each `PollResult` sent to the
 * client as a log message (logger `mcp-fleet/poll`, level info, whatever level the client
 * set: it asked for them), the one notification MCP has for news not tied to a request.
 * A 2026-07-28 request has no session to keep a subscription or a poll in: it is shown the
 * tools that work within one request (listing and reading resources; one instance for all
 * such requests of the gateway), and a call of another is a tool error saying why (such a
 * client watches resources with subscriptions/listen).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Scope from "effect/Scope"
import type * as Catalog from "../../Catalog.js"
import * as McpManagementTools from "../../McpManagementTools.js"
import * as McpSchema from "../../McpSchema.js"
import type * as McpServer from "../../McpServer.js"
import type { FleetHub, MakeManagement } from "./fleetHub.js"
import * as Subscriptions from "./subscriptions.js"

// The logger name PollResult messages carry.
const POLL_LOGGER = "mcp-fleet/poll"

/** A PollResult as the data of a log message: what was polled, and what it returns now. */
const pollData = (event: Extract<McpManagementTools.Event, { _tag: "PollResult" }>) => ({
  pollId: event.poll.id,
  type: event.poll.type,
  server: event.poll.server,
  target: event.poll.target,
  ...(event.result === undefined ? {} : { result: event.result }),
  ...(event.error === undefined ? {} : { error: event.error.message })
})

/** The management tools of one session. */
export interface SessionManagement {
  /** Listed after the fleet's tools. */
  readonly tools: ReadonlyArray<McpSchema.Tool>
  /** tools/call: a management tool here, anything else to `fleetCall`. */
  readonly callTool: (fleetCall: McpServer.ToolHandlers["call"]) => McpServer.ToolHandlers["call"]
}

/**
 * The session's management tools, or undefined when the gateway does not serve them. They
 * are made at the first call of one (most sessions, and every one-request handler set,
 * call none); their polls and subscriptions end with the Scope.
 */
export const make = (
  hub: FleetHub,
  subscriptions: Subscriptions.Subscriptions,
  session: Pick<McpServer.Session, "notify">
): Effect.Effect<SessionManagement | undefined, never, Scope.Scope> =>
  Effect.gen(function*() {
    if (hub.management === undefined) return undefined
    const management = yield* Effect.cached(
      start(hub.management, subscriptions, session).pipe(
        Scope.extend(yield* Effect.scope)
      )
    )
    return { tools: McpManagementTools.tools, callTool: calling(() => management) }
  })

// The management tools that work within one request: the others keep subscriptions and
// polls, which outlive it.
const ONE_REQUEST: ReadonlySet<string> = new Set(["ListMcpResources", "ReadMcpResource", "load_skill"])

const toolError = (text: string): McpSchema.CallToolResult => ({ content: [{ type: "text", text }], isError: true })

/**
 * The management tools of the gateway's 2026-07-28 requests, or undefined when the gateway
 * does not serve them: those that work within one request, one instance for every such
 * request, made at the first call of one; a call of another fails as a tool error.
 */
export const makeModern = (
  hub: FleetHub,
  catalog: Effect.Effect<Catalog.Catalog>
): Effect.Effect<SessionManagement | undefined, never, Scope.Scope> =>
  Effect.gen(function*() {
    if (hub.management === undefined) return undefined
    // Its subscriptions: none is made (the tools that make them are refused).
    const subscriptions = yield* Subscriptions.make(hub, catalog)
    const management = yield* Effect.cached(
      hub.management({ subscribe: subscriptions.acquire, unsubscribe: subscriptions.release }).pipe(
        Scope.extend(yield* Effect.scope)
      )
    )
    return {
      tools: McpManagementTools.tools.filter((tool) => ONE_REQUEST.has(tool.name)),
      callTool: calling((name) => ONE_REQUEST.has(name) ? management : undefined)
    }
  })

// The whole fleet, as the caller: a per-principal server's reads, skills and polls go to
// its instance.
const reachOf = (ctx: McpServer.RequestContext): McpManagementTools.Reach => ({
  server: () => true,
  tool: () => true,
  principal: ctx.caller?.subject
})

// tools/call of a management tool by the instance `made` gives for it (undefined: a
// session's tool, refused for a 2026-07-28 request); any other tool to `fleetCall`.
const calling = (
  made: (name: string) => Effect.Effect<McpManagementTools.McpManagementTools> | undefined
): SessionManagement["callTool"] =>
(fleetCall) =>
(name, args, ctx) => {
  if (!McpManagementTools.isManagementTool(name)) return fleetCall(name, args, ctx)
  const management = made(name)
  if (management === undefined) {
    return Effect.succeed(toolError(
      `${name} keeps what it starts for the client's session, and a 2026-07-28 request has none: ` +
        "call it in a stateful session, or watch resources with subscriptions/listen"
    ))
  }
  return Effect.flatMap(management, (tools) => tools.call(name, args, reachOf(ctx))).pipe(
    // Every failure is the model's to read, as for the fleet's tools.
    Effect.catchAll((error) => Effect.succeed(toolError(error.message)))
  )
}

// The management tools of one session, their PollResults told to its client.
const start = (
  makeManagement: MakeManagement,
  subscriptions: Subscriptions.Subscriptions,
  session: Pick<McpServer.Session, "notify">
): Effect.Effect<McpManagementTools.McpManagementTools, never, Scope.Scope> =>
  Effect.gen(function*() {
    const management = yield* makeManagement({
      subscribe: subscriptions.acquire,
      unsubscribe: subscriptions.release
    })
    const events = yield* management.subscribeEvents
    yield* Queue.take(events).pipe(
      Effect.flatMap((event) =>
        event._tag === "PollResult"
          ? session.notify(McpSchema.Method.LoggingMessage, {
            level: "info",
            logger: POLL_LOGGER,
            data: pollData(event)
          })
          // Resource updates reach the client as resources/updated: the session holds them.
          : Effect.void
      ),
      Effect.forever,
      Effect.forkScoped
    )
    return management
  })
