/**
 * The Policy service, composed of its parts: rule decisions (`rules.ts`), argument checks
 * (`validate.ts`), limits (`limits.ts`), the result size (`resultSize.ts`) and the audit
 * log (`audit.ts`). The config in force is read synchronously by `filter` and `decide`,
 * and published to `catalog` on every update.
 *
 * @internal
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as MetricLabel from "effect/MetricLabel"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Catalog from "../../Catalog.js"
import * as McpError from "../../McpError.js"
import type * as Policy from "../../Policy.js"
import type * as ServerRegistry from "../../ServerRegistry.js"
import * as Telemetry from "../../Telemetry.js"
import * as ToolPins from "../../ToolPins.js"
import { traced } from "../traced.js"
import { type Auditor, digestArguments, makeAuditor, outcomeOf } from "./audit.js"
import { type Limiter, makeLimiter, withTimeout } from "./limits.js"
import { enforce } from "./resultSize.js"
import * as Rules from "./rules.js"
import { type Check, makeCheck } from "./validate.js"

/** What a policy is made of besides its config. */
export interface Parts {
  readonly registry: ServerRegistry.ServerRegistry
  readonly approval: Option.Option<Policy.Approval>
  readonly sink: Option.Option<Policy.AuditSink>
  /** Appends the lines of the config's `audit` file, when in context. */
  readonly files: Option.Option<FileSystem.FileSystem>
}

const denied = (entry: Catalog.ToolEntry, decision: Rules.Judged) =>
  McpError.denied(
    entry.server,
    decision.source === undefined
      ? { tool: entry.name, message: decision.reason }
      : { tool: entry.name, rule: decision.source, message: decision.reason }
  )

const filterWith = (rules: Rules.Compiled, catalog: Catalog.Catalog, approver: boolean): Catalog.Catalog => {
  const tools = catalog.tools.filter((entry) => Rules.decide(rules, Rules.targetOf(entry), approver).action !== "deny")
  return tools.length === catalog.tools.length
    ? catalog
    : { ...catalog, tools, toolsByName: new Map(tools.map((entry) => [entry.name, entry])) }
}

// What `callTool` needs, shared by every call of one policy.
interface Env extends Parts {
  readonly compiled: () => Rules.Compiled
  readonly lookup: (name: string) => Effect.Effect<Catalog.ToolEntry, McpError.McpError>
  readonly judge: (
    entry: Catalog.ToolEntry,
    rules: Rules.Compiled,
    ownApprover?: boolean
  ) => Effect.Effect<Rules.Judged, McpError.McpError>
  readonly check: Check
  readonly limiter: Limiter
  readonly auditor: Auditor
}

// What a call found out as it went, for its audit entry.
interface Facts {
  entry: Catalog.ToolEntry | undefined
  invalid: boolean
  rule: string | undefined
  resultBytes: number | undefined
  truncated: boolean
  decision: Rules.Judged["action"] | undefined
}

const approve = (
  env: Env,
  entry: Catalog.ToolEntry,
  decision: Rules.Judged,
  args: Record<string, unknown> | undefined,
  own: Policy.Approval["approve"] | undefined
) => {
  const approver = own ?? Option.getOrUndefined(env.approval)?.approve
  return approver === undefined || decision.action !== "ask"
    ? Effect.void
    : Effect.flatMap(
      approver({
        server: entry.server,
        tool: entry.tool.name,
        name: entry.name,
        arguments: args ?? {},
        rule: decision.rule
      }),
      (answer) => {
        if (answer.decision === "allow") return Effect.void
        const declined = `${decision.reason}: the approver declined${answer.reason ? ` (${answer.reason})` : ""}`
        return Effect.fail(denied(entry, { ...decision, action: "deny", reason: declined }))
      }
    )
}

/** What the audit entry of a call refused for a secret in its arguments names as its rule. */
export const SECRETS_RULE = "secret in arguments"

// Arguments that carry a secret of any server of the fleet (a configured one or an OAuth
// token) leave it only where an `allow` rule names the tool: a prompt-injected model must
// not be able to send one server's key to another (Docker's gateway `--block-secrets`).
const secretsIn = (
  env: Env,
  entry: Catalog.ToolEntry,
  decision: Rules.Judged,
  args: Record<string, unknown> | undefined
): Effect.Effect<void, McpError.McpError> =>
  Effect.suspend(() => {
    if (args === undefined || decision.rule?.action === "allow") return Effect.void
    const owner = env.registry.secretIn(args)
    return owner === undefined ? Effect.void : Effect.fail(McpError.denied(entry.server, {
      tool: entry.name,
      rule: SECRETS_RULE,
      message: `the arguments carry a secret of server '${owner}'; only a tool an allow rule names may be sent one`
    }))
  })

// The call as its caller's: a per-principal server runs it in the caller's own instance.
const forPrincipal = <O extends object>(
  options: O | undefined,
  caller: Policy.CallToolOptions["caller"]
): O | (O & { readonly principal: string }) | undefined =>
  caller?.subject === undefined || (options !== undefined && "principal" in options)
    ? options
    : { ...options!, principal: caller.subject }

// The caller as the audit log names it: only what was given (the Principal has more).
const callerOf = (caller: NonNullable<Policy.CallToolOptions["caller"]>) => ({
  ...(caller.subject === undefined ? {} : { subject: caller.subject }),
  ...(caller.clientId === undefined ? {} : { clientId: caller.clientId })
})

// A refusal counted in `mcp_fleet.policy.denials`: `ask` when an approver declined.
const denial = (error: McpError.McpError, facts: Facts) =>
  Effect.sync(() => {
    if (error.reason._tag !== "Denied") return
    Telemetry.denials.unsafeUpdate(1, [
      MetricLabel.make(Telemetry.ServerName, facts.entry?.server ?? ""),
      MetricLabel.make(Telemetry.Attributes.toolName, facts.entry?.tool.name ?? error.reason.tool),
      MetricLabel.make(Telemetry.Attributes.policyDecision, facts.decision === "ask" ? "ask" : "deny")
    ])
  })

const callTool = (env: Env): Policy.Policy["callTool"] =>
  traced("Policy.callTool")((name, args, options) =>
    Effect.gen(function*() {
      const start = yield* Clock.currentTimeMillis
      // The config at the call's start holds for the whole call.
      const rules = env.compiled()
      const auditing = env.auditor.enabled(rules.config)
      const facts: Facts = {
        entry: undefined,
        invalid: false,
        rule: undefined,
        resultBytes: undefined,
        truncated: false,
        decision: undefined
      }

      const run = Effect.gen(function*() {
        const entry = yield* env.lookup(name)
        facts.entry = entry
        const decision = yield* env.judge(entry, rules, options?.approve !== undefined).pipe(
          Effect.tapError((error) => Effect.sync(() => facts.rule = (error.reason as McpError.DeniedReason).rule))
        )
        facts.rule = decision.source
        facts.decision = decision.action
        yield* Effect.annotateCurrentSpan(Telemetry.Attributes.policyDecision, decision.action)
        yield* Effect.tapError(
          secretsIn(env, entry, decision, args),
          () => Effect.sync(() => facts.rule = SECRETS_RULE)
        )
        yield* Effect.tapError(env.check(entry, args), () => Effect.sync(() => facts.invalid = true))
        yield* approve(env, entry, decision, args, options?.approve)
        const resolved = Rules.resolveLimits(rules, Rules.targetOf(entry))
        const result = yield* env.limiter.limited(
          entry,
          resolved,
          env.registry.callServerTool(
            entry.server,
            entry.tool.name,
            args,
            forPrincipal(withTimeout(options, resolved.call.timeout), options?.caller)
          )
        )
        const sized = enforce(entry, result, resolved.call, auditing)
        facts.resultBytes = sized.bytes
        facts.truncated = sized.truncated
        return yield* sized.outcome
      })

      const counted = Effect.tapError(run, (error) => denial(error, facts))
      if (!auditing) return yield* counted
      return yield* counted.pipe(Effect.onExit((exit) =>
        Effect.flatMap(Clock.currentTimeMillis, (end) =>
          env.auditor.write({
            time: new Date(start).toISOString(),
            server: facts.entry?.server ?? "",
            tool: facts.entry?.tool.name ?? "",
            name,
            argsDigest: digestArguments(args),
            durationMs: end - start,
            outcome: facts.invalid ? "invalid" : outcomeOf(exit),
            ...(facts.resultBytes === undefined ? {} : { resultBytes: facts.resultBytes }),
            ...(facts.truncated ? { truncated: true } : {}),
            ...(facts.rule === undefined ? {} : { rule: facts.rule }),
            ...(options?.caller === undefined ? {} : { caller: callerOf(options.caller) })
          }, rules.config))
      ))
    })
  )

/** See `Policy.make`. */
export const make = (config: Policy.Config, parts: Parts): Effect.Effect<Policy.Policy, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { registry } = parts
    const approver = Option.isSome(parts.approval)
    // Read synchronously by `filter` and `decide`; written only together with `state`.
    let compiled = Rules.compile(config)
    const state = yield* SubscriptionRef.make(compiled)
    let known = yield* SubscriptionRef.get(registry.catalog)
    yield* registry.catalog.changes.pipe(
      Stream.runForEach((catalog) => Effect.sync(() => known = catalog)),
      Effect.forkScoped
    )

    // A quarantined tool fails with how to approve it.
    const lookup = (name: string) =>
      Effect.flatMap(SubscriptionRef.get(registry.catalog), (catalog) => {
        const entry = Catalog.findTool(catalog, name)
        if (entry !== undefined) return Effect.succeed(entry)
        // From the filtered catalog: a hidden tool is never named.
        const known = filterWith(compiled, catalog, approver).toolsByName.keys()
        return Effect.flatMap(registry.drifted, (drifts) => Effect.fail(ToolPins.missingTool(drifts, name, known)))
      })

    // The decision on a tool; a denied tool fails here.
    const judge = (
      entry: Catalog.ToolEntry,
      rules: Rules.Compiled,
      ownApprover = false
    ): Effect.Effect<Rules.Judged, McpError.McpError> => {
      const decision = Rules.decide(rules, Rules.targetOf(entry), approver || ownApprover)
      return decision.action === "deny" ? Effect.fail(denied(entry, decision)) : Effect.succeed(decision)
    }
    const check = makeCheck()
    const env: Env = {
      ...parts,
      compiled: () => compiled,
      lookup,
      judge,
      check,
      limiter: makeLimiter(),
      auditor: yield* makeAuditor(parts.sink, parts.files)
    }

    // The gateway filters per request: the same catalog under the same rules gets the very
    // same answer (its views are made again only when that changes), once per approver kind.
    const last: Array<{ rules: Rules.Compiled; catalog: Catalog.Catalog; filtered: Catalog.Catalog }> = []
    const filter = (catalog: Catalog.Catalog, asApprover: boolean): Catalog.Catalog => {
      const slot = asApprover ? 1 : 0
      const memo = last[slot]
      if (memo?.rules === compiled && memo.catalog === catalog) return memo.filtered
      const filtered = filterWith(compiled, catalog, asApprover)
      last[slot] = { rules: compiled, catalog, filtered }
      return filtered
    }

    return {
      filter: (catalog, options) => filter(catalog, approver || options?.approver === true),
      catalog: Stream.zipLatestWith(
        registry.catalog.changes,
        state.changes,
        (catalog, rules) => ({ catalog, filtered: filterWith(rules, catalog, approver) })
      ).pipe(
        // A policy edit that hides nothing new is no change.
        Stream.changesWith((a, b) =>
          a.catalog === b.catalog && a.filtered.tools.length === b.filtered.tools.length &&
          a.filtered.tools.every((entry, i) => entry === b.filtered.tools[i])
        ),
        Stream.map(({ filtered }) => filtered)
      ),
      decide: (tool) => {
        const entry = typeof tool === "string" ? Catalog.findTool(known, tool) : tool
        return Rules.decide(compiled, entry === undefined ? { name: tool as string } : Rules.targetOf(entry), approver)
      },
      validate: traced("Policy.validate")((name, args) =>
        Effect.flatMap(lookup(name), (entry) => Effect.zipRight(judge(entry, compiled), check(entry, args)))
      ),
      callTool: callTool(env),
      config: Effect.sync(() => compiled.config),
      update: (next) =>
        SubscriptionRef.update(state, () => {
          compiled = Rules.compile(next)
          return compiled
        })
    }
  })
