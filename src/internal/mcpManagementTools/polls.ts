/**
 * Polls: a tool called or a resource read every `intervalMs`, one fiber each in the
 * service's Scope, and a `PollResult` published when the outcome differs from the last.
 * Tool calls go through the Policy; the tool is looked up again on every fetch, so a poll
 * follows its tool through catalog changes and reports when it is gone or denied.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberMap from "effect/FiberMap"
import type * as Scope from "effect/Scope"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Catalog from "../../Catalog.js"
import * as McpError from "../../McpError.js"
import type * as McpManagementTools from "../../McpManagementTools.js"
import type * as McpSchema from "../../McpSchema.js"
import * as Policy from "../../Policy.js"
import type * as ServerRegistry from "../../ServerRegistry.js"
import { jsonResult, type SubscribePolling } from "./definitions.js"
import { reachable } from "./resources.js"

/** What polls work with. */
export interface Parts {
  readonly registry: ServerRegistry.ServerRegistry
  readonly policy: Policy.Policy
  readonly max: number
  readonly publish: (event: McpManagementTools.Event) => Effect.Effect<void>
}

/** The polls of one service. */
export interface Polls {
  readonly start: (
    params: typeof SubscribePolling.Type,
    reach: McpManagementTools.Reach
  ) => Effect.Effect<McpSchema.CallToolResult, McpError.McpError>
  readonly stop: (id: string) => Effect.Effect<McpSchema.CallToolResult, McpError.McpError>
  /** The polls in force, oldest first. */
  readonly running: () => ReadonlyArray<McpManagementTools.Poll>
}

type Fetched = McpSchema.CallToolResult | McpSchema.ReadResourceResult

const invalid = (message: string) => McpError.validation(undefined, { method: "SubscribePolling", message })

// What a fetch returned, to tell a change from a repeat; `_meta` (timestamps, ids) is not content.
const fingerprint = (exit: Exit.Exit<Fetched, McpError.McpError>): string => {
  if (Exit.isFailure(exit)) return `error:${exit.cause._tag === "Fail" ? exit.cause.error.message : String(exit.cause)}`
  const { _meta: _, ...content } = exit.value
  return JSON.stringify(content)
}

/**
 * The catalog entry of `tool` on `server` (by its original or qualified name) that the
 * caller may reach; a tool the policy denies, or holds for approval, fails with a Denied
 * reason, since a poll calls it with no one to approve each call.
 */
const toolOf = (parts: Parts, server: string, tool: string, reach: McpManagementTools.Reach) =>
  Effect.flatMap(SubscriptionRef.get(parts.registry.catalog), (catalog) => {
    const entry = catalog.tools.find((candidate) =>
      candidate.server === server && (candidate.tool.name === tool || candidate.name === tool) && reach.tool(candidate)
    )
    if (entry === undefined) {
      const visible = parts.policy.filter(catalog).tools.filter((candidate) =>
        candidate.server === server && reach.tool(candidate)
      )
      return Effect.fail(McpError.notFound(server, {
        what: "tool",
        name: tool,
        suggestions: Catalog.suggest(tool, visible.map((candidate) => candidate.tool.name))
      }))
    }
    const decision = parts.policy.decide(entry)
    if (decision.action === "allow") return Effect.succeed(entry)
    return Effect.fail(McpError.denied(server, {
      tool: entry.name,
      ...(decision.rule === undefined ? {} : { rule: Policy.ruleText(decision.rule) }),
      message: decision.action === "ask"
        ? `${decision.reason} needs approval, which a poll cannot ask for on each call`
        : decision.reason
    }))
  })

/** Makes the polls of one service; they stop when the Scope closes. */
export const make = (parts: Parts): Effect.Effect<Polls, never, Scope.Scope> =>
  Effect.gen(function*() {
    const fibers = yield* FiberMap.make<string>()
    const polls = new Map<string, McpManagementTools.Poll>()
    let next = 1

    // What the poll fetches: the tool (by its original name), else the resource (by URI).
    const targetOf = (params: typeof SubscribePolling.Type, reach: McpManagementTools.Reach) => {
      if (params.type === "resource") {
        return params.uri === undefined
          ? Effect.fail(invalid("a poll of type resource needs a uri"))
          : Effect.succeed(params.uri)
      }
      return params.toolName === undefined
        ? Effect.fail(invalid("a poll of type tool needs a toolName"))
        : Effect.map(toolOf(parts, params.server, params.toolName, reach), (entry) => entry.tool.name)
    }

    // One fetch; a tool is looked up anew each time, so the poll follows catalog changes.
    const fetchOf = (
      poll: McpManagementTools.Poll,
      reach: McpManagementTools.Reach
    ): Effect.Effect<Fetched, McpError.McpError> =>
      poll.type === "resource"
        ? parts.registry.readResource(poll.server, poll.target, { principal: reach.principal })
        : Effect.flatMap(
          toolOf(parts, poll.server, poll.target, reach),
          (entry) =>
            parts.policy.callTool(
              entry.name,
              { ...poll.arguments },
              reach.principal === undefined ? undefined : { caller: { subject: reach.principal } }
            )
        )

    const watch = (poll: McpManagementTools.Poll, fetch: Effect.Effect<Fetched, McpError.McpError>, first: string) => {
      let last = first
      return Effect.sleep(poll.intervalMs).pipe(
        Effect.zipRight(Effect.exit(fetch)),
        Effect.flatMap((exit) => {
          const now = fingerprint(exit)
          if (now === last) return Effect.void
          last = now
          return parts.publish({
            _tag: "PollResult",
            poll,
            result: Exit.isSuccess(exit) ? exit.value : undefined,
            error: Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined
          })
        }),
        Effect.forever
      )
    }

    const start: Polls["start"] = (params, reach) =>
      Effect.gen(function*() {
        yield* reachable(parts.registry, params.server, reach)
        const target = yield* targetOf(params, reach)
        if (polls.size >= parts.max) {
          return yield* Effect.fail(McpError.limit(
            undefined,
            { what: "the number of polls", limit: parts.max }
          ))
        }
        const id = `poll-${next++}`
        const poll: McpManagementTools.Poll = {
          id,
          type: params.type,
          server: params.server,
          target,
          arguments: params.arguments,
          intervalMs: params.intervalMs
        }
        // The place is taken before the first fetch, so concurrent starts cannot pass the limit.
        polls.set(id, poll)
        const fetch = fetchOf(poll, reach)
        // A first fetch that fails (or is interrupted) gives the place back.
        const current = yield* Effect.onError(fetch, () => Effect.sync(() => polls.delete(id)))
        yield* FiberMap.run(fibers, id, watch(poll, fetch, fingerprint(Exit.succeed(current))))
        return jsonResult({ pollId: id, ...poll, current })
      })

    const stop: Polls["stop"] = (id) =>
      Effect.suspend(() => {
        const poll = polls.get(id)
        if (poll === undefined) {
          const held = [...polls.keys()]
          return Effect.fail(McpError.validation(undefined, {
            method: "UnsubscribePolling",
            message: `no such poll; those in force: ${held.length === 0 ? "none" : held.join(", ")}`
          }))
        }
        polls.delete(id)
        return Effect.as(FiberMap.remove(fibers, id), jsonResult({ stopped: id }))
      })

    return { start, stop, running: () => [...polls.values()] }
  })
