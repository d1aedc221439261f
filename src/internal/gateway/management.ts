/**
 * The MCP management tools of one session, when the gateway serves them (its
 * `managementTools` option): listed after the fleet's tools, called by their own names,
 * their subscriptions counted with the session's own, and each `PollResult` sent to the
 * client as a log message (logger `mcp-fleet/poll`, level info, whatever level the client
 * set: it asked for them), the one notification MCP has for news not tied to a request.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Scope from "effect/Scope"
import * as McpManagementTools from "../../McpManagementTools.js"
import * as McpSchema from "../../McpSchema.js"
import type * as McpServer from "../../McpServer.js"
import type { Fleet, MakeManagement } from "./fleet.js"
import type { Subscriptions } from "./subscriptions.js"

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
  fleet: Fleet,
  subscriptions: Subscriptions,
  session: Pick<McpServer.Session, "notify">
): Effect.Effect<SessionManagement | undefined, never, Scope.Scope> =>
  Effect.gen(function*() {
    if (fleet.management === undefined) return undefined
    const management = yield* Effect.cached(
      start(fleet.management, subscriptions, session).pipe(
        Scope.extend(yield* Effect.scope)
      )
    )
    return {
      tools: McpManagementTools.tools,
      callTool: (fleetCall) => (name, args, ctx) => {
        if (!McpManagementTools.isManagementTool(name)) return fleetCall(name, args, ctx)
        return Effect.flatMap(management, (made) => made.call(name, args))
          .pipe(
            // Every failure is the model's to read, as for the fleet's tools.
            Effect.catchAll((error) =>
              Effect.succeed<McpSchema.CallToolResult>({
                content: [{ type: "text", text: error.message }],
                isError: true
              })
            )
          )
      }
    }
  })

// The management tools of one session, their PollResults told to its client.
const start = (
  makeManagement: MakeManagement,
  subscriptions: Subscriptions,
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
