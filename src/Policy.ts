/**
 * Tool policy, the same for every edge of the fleet (library calls, the CLI, the gateway):
 * rules that allow, deny or ask before a tool is called; validation of the arguments
 * against the tool's inputSchema; limits on time, concurrency, rate and result size; and
 * an audit log with one JSON line per call.
 *
 * **Rules.** `allow`, `deny` and `ask` hold globs on tool names: `*` matches any run of
 * characters (none included, `_` included), `?` exactly one, anything else itself; a glob
 * matches the whole name, case-sensitively. Global rules match the qualified name
 * (`mcp__github__create_issue`). A server's rules match either the qualified name or the
 * tool's original name (`create_issue`), so both `"delete_*"` and `"mcp__github__delete_*"`
 * work in the block of server `github`, and they only ever match that server's tools.
 *
 * **Precedence.** Every rule that matches a tool counts, global and per server alike:
 * `deny` beats `ask`, and `ask` beats `allow`. When no rule matches, the server's
 * `default` decides, else the global `default`, else the tool is allowed. So `allow`
 * rules matter where a `default` of `deny` or `ask` is set, and never override a
 * matching `deny` or `ask`. `ask` needs an {@link Approval} service; without one it is
 * `deny`.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import { createHash } from "node:crypto"
import * as fs from "node:fs/promises"
import * as Catalog from "./Catalog.js"
import * as Glob from "./internal/policy/glob.js"
import { ValidatorCache } from "./internal/jsonSchema.js"
import { traced } from "./internal/traced.js"
import * as McpError from "./McpError.js"
import type * as McpSchema from "./McpSchema.js"
import * as ServerRegistry from "./ServerRegistry.js"

// --- config -------------------------------------------------------------------------

/**
 * What a rule does with the tools it matches.
 *
 * @since 0.1.0
 */
export type Action = "allow" | "deny" | "ask"

/**
 * At most `calls` calls per `per` (a number is milliseconds), as a token bucket: the
 * bucket holds `calls` tokens and refills continuously at `calls` per `per`.
 *
 * @since 0.1.0
 */
export interface RateLimit {
  readonly calls: number
  readonly per: Duration.DurationInput
}

/**
 * Limits of calls. Set globally they are the defaults of every server; in a server's block
 * they hold for that server; under `tools` for each matching tool. A field set closer to
 * the tool wins: server tool > server > global tool > global.
 *
 * `maxConcurrent` and `rateLimit` count calls per server (from `limits`) and per tool
 * (from `tools`); a call must get a place in both. `timeout`, `maxResultBytes` and
 * `onOversize` hold for each call.
 *
 * @since 0.1.0
 */
export interface Limits {
  /**
   * The longest a call may take once it has its concurrency slots, waiting for the server
   * to be ready included. A call that runs longer is cancelled and fails with a Timeout
   * reason. Default: none (the connection's request timeout still applies).
   */
  readonly timeout?: Duration.DurationInput | undefined
  /** How many calls may run at once; more wait for a free slot, in order. Default: no limit. */
  readonly maxConcurrent?: number | undefined
  /**
   * A call over the rate fails at once with a Limit reason saying when the next is
   * allowed; it does not wait. Calls count when admitted, before they wait for a slot;
   * denied and invalid calls do not count. Default: no limit.
   */
  readonly rateLimit?: RateLimit | undefined
  /** The largest result, in bytes of its JSON. Default: no limit. */
  readonly maxResultBytes?: number | undefined
  /**
   * What a larger result becomes: `truncate` (the default) keeps the content blocks that
   * fit, cuts the first text block that does not, drops `structuredContent`, and ends with
   * the text block `[truncated by mcp-fleet: <limit> of <size> bytes]`; `fail` fails the
   * call with a Limit reason.
   */
  readonly onOversize?: "truncate" | "fail" | undefined
}

/**
 * Rules and limits, of the whole fleet or of one server.
 *
 * @since 0.1.0
 */
export interface Rules {
  readonly allow?: ReadonlyArray<string> | undefined
  readonly deny?: ReadonlyArray<string> | undefined
  readonly ask?: ReadonlyArray<string> | undefined
  /** What happens to a tool no rule matches. Default: allow. */
  readonly default?: Action | undefined
  readonly limits?: Limits | undefined
  /**
   * Limits per tool, keyed by glob: the qualified name at the top level; the original or
   * the qualified name in a server's block. Each matching tool has limits of its own.
   */
  readonly tools?: Readonly<Record<string, Limits>> | undefined
}

/**
 * The whole policy: global rules and limits, each server's by server name, and the audit
 * log file. `{}` is no policy at all: everything allowed, no limits, no audit file.
 *
 * @since 0.1.0
 */
export interface Config extends Rules {
  readonly servers?: Readonly<Record<string, Rules>> | undefined
  /** A file to append one JSON line per call to. */
  readonly audit?: string | undefined
}

const strictness: Record<Action, number> = { allow: 0, ask: 1, deny: 2 }

const stricter = (a: Action | undefined, b: Action | undefined): Action | undefined =>
  a === undefined ? b : b === undefined ? a : strictness[b] > strictness[a] ? b : a

const concat = (a: ReadonlyArray<string> | undefined, b: ReadonlyArray<string> | undefined) =>
  a === undefined ? b : b === undefined ? a : [...a, ...b]

const mergeLimits = (a: Limits | undefined, b: Limits | undefined): Limits | undefined =>
  a === undefined ? b : b === undefined ? a : { ...a, ...b }

const mergeRecords = <A>(
  a: Readonly<Record<string, A>> | undefined,
  b: Readonly<Record<string, A>> | undefined,
  f: (a: A | undefined, b: A | undefined) => A | undefined
): Readonly<Record<string, A>> | undefined => {
  if (a === undefined || b === undefined) return a ?? b
  const merged: Record<string, A> = { ...a }
  for (const [key, value] of Object.entries(b)) merged[key] = f(a[key], value)!
  return merged
}

const mergeRules = (a: Rules | undefined, b: Rules | undefined): Rules | undefined =>
  a === undefined ? b : b === undefined ? a : dropUndefined({
    allow: concat(a.allow, b.allow),
    deny: concat(a.deny, b.deny),
    ask: concat(a.ask, b.ask),
    default: stricter(a.default, b.default),
    limits: mergeLimits(a.limits, b.limits),
    tools: mergeRecords(a.tools, b.tools, mergeLimits)
  })

const dropUndefined = <A extends object>(value: A): A =>
  Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as A

/**
 * Merges two configs, `b` later (a project file after the user's): rules are concatenated,
 * so a later file cannot lift an earlier `deny`; limits and `audit` of `b` win field by
 * field; `default` is the stricter of the two (deny > ask > allow).
 *
 * @since 0.1.0
 */
export const merge = (a: Config, b: Config): Config =>
  dropUndefined({
    ...mergeRules(a, b),
    servers: mergeRecords(a.servers, b.servers, mergeRules),
    audit: b.audit ?? a.audit
  })

// --- decisions ----------------------------------------------------------------------

/**
 * One rule as written: its action, its glob, and the server whose block holds it
 * (undefined for a global rule).
 *
 * @since 0.1.0
 */
export interface Rule {
  readonly action: Action
  readonly pattern: string
  readonly server?: string | undefined
}

/**
 * A rule as a person reads it: `deny "mcp__github__*" (global)`,
 * `ask "delete_*" (server 'github')`.
 *
 * @since 0.1.0
 */
export const ruleText = (rule: Rule): string =>
  `${rule.action} "${rule.pattern}" (${rule.server === undefined ? "global" : `server '${rule.server}'`})`

/**
 * What policy does with one tool. `action` is what a call meets: an `ask` rule with no
 * Approval service is `deny` here. `rule` is the rule that decided (undefined when a
 * `default` or the absence of rules did), `reason` says it in words.
 *
 * @since 0.1.0
 */
export interface Decision {
  readonly action: Action
  readonly rule: Rule | undefined
  readonly reason: string
}

interface CompiledRule {
  readonly rule: Rule
  readonly match: Glob.Matcher
}

interface CompiledLimits {
  readonly match: Glob.Matcher
  readonly limits: Limits
}

interface CompiledScope {
  readonly rules: ReadonlyArray<CompiledRule>
  readonly default: Action | undefined
  readonly limits: Limits | undefined
  readonly tools: ReadonlyArray<CompiledLimits>
}

interface Compiled {
  readonly config: Config
  readonly global: CompiledScope
  readonly servers: ReadonlyMap<string, CompiledScope>
}

const actions: ReadonlyArray<Action> = ["deny", "ask", "allow"]

const compileScope = (rules: Rules, server: string | undefined): CompiledScope => ({
  rules: actions.flatMap((action) =>
    (rules[action] ?? []).map((pattern) => ({
      rule: server === undefined ? { action, pattern } : { action, pattern, server },
      match: Glob.compile(pattern)
    }))
  ),
  default: rules.default,
  limits: rules.limits,
  tools: Object.entries(rules.tools ?? {}).map(([pattern, limits]) => ({ match: Glob.compile(pattern), limits }))
})

const compile = (config: Config): Compiled => ({
  config,
  global: compileScope(config, undefined),
  servers: new Map(Object.entries(config.servers ?? {}).map(([server, rules]) => [server, compileScope(rules, server)]))
})

/** The tool a name stands for: its server and original name, when known. */
interface Target {
  readonly name: string
  readonly server?: string | undefined
  readonly tool?: string | undefined
}

const targetOf = (entry: Catalog.ToolEntry): Target => ({ name: entry.name, server: entry.server, tool: entry.tool.name })

// A server's globs match the qualified or the original name; global ones the qualified name.
const matchesIn = (scope: CompiledScope | undefined, target: Target) =>
  (match: Glob.Matcher) => match(target.name) || (scope !== undefined && target.tool !== undefined && match(target.tool))

// A decision and what made it, as written in errors and audit lines: `deny "x" (global)`,
// `default deny (server 'a')`; undefined when nothing did.
interface Judged extends Decision {
  readonly source: string | undefined
}

const decideWith = (compiled: Compiled, target: Target, approver: boolean): Judged => {
  const scope = target.server === undefined ? undefined : compiled.servers.get(target.server)
  let best: Rule | undefined
  const consider = (candidates: ReadonlyArray<CompiledRule>, matches: (match: Glob.Matcher) => boolean) => {
    for (const { match, rule } of candidates) {
      if ((best === undefined || strictness[rule.action] > strictness[best.action]) && matches(match)) best = rule
    }
  }
  consider(compiled.global.rules, (match) => match(target.name))
  consider(scope?.rules ?? [], matchesIn(scope, target))
  const fallback = scope?.default ?? compiled.global.default
  if (best === undefined && fallback === undefined) {
    return { action: "allow", rule: undefined, reason: "no rule matches", source: undefined }
  }
  const action = best?.action ?? fallback!
  const source = best !== undefined
    ? ruleText(best)
    : `default ${fallback} (${scope?.default !== undefined ? `server '${target.server}'` : "global"})`
  const reason = best !== undefined ? `rule ${source}` : source
  return action === "ask" && !approver
    ? { action: "deny", rule: best, reason: `${reason} needs approval, and no approver is provided`, source }
    : { action, rule: best, reason, source }
}

interface Resolved {
  /** Per call: timeout, size. */
  readonly call: Limits
  /** The server's shared slots and bucket. */
  readonly server: Limits
  /** The tool's own slots and bucket. */
  readonly tool: Limits
}

const resolveLimits = (compiled: Compiled, target: Target): Resolved => {
  const scope = target.server === undefined ? undefined : compiled.servers.get(target.server)
  const globalTool = compiled.global.tools.filter((entry) => entry.match(target.name)).map((entry) => entry.limits)
  const inScope = matchesIn(scope, target)
  const serverTool = (scope?.tools ?? []).filter((entry) => inScope(entry.match)).map((entry) => entry.limits)
  const merged = (all: ReadonlyArray<Limits | undefined>) =>
    all.reduce<Limits>((limits, more) => more === undefined ? limits : { ...limits, ...more }, {})
  return {
    call: merged([compiled.global.limits, ...globalTool, scope?.limits, ...serverTool]),
    server: merged([compiled.global.limits, scope?.limits]),
    tool: merged([...globalTool, ...serverTool])
  }
}

// --- approval -----------------------------------------------------------------------

/**
 * A call that an `ask` rule holds until someone approves it.
 *
 * @since 0.1.0
 */
export interface ApprovalRequest {
  readonly server: string
  /** The tool's original name on its server. */
  readonly tool: string
  /** The qualified name. */
  readonly name: string
  readonly arguments: Readonly<Record<string, unknown>>
  /** The `ask` rule that matched; undefined when a `default` of `ask` decided. */
  readonly rule: Rule | undefined
}

/**
 * The approver's answer; `reason` is shown in the error when it denies.
 *
 * @since 0.1.0
 */
export interface ApprovalAnswer {
  readonly decision: "allow" | "deny"
  readonly reason?: string | undefined
}

/**
 * Who answers `ask` rules (a terminal prompt, a UI, a test). Provide it to the Policy's
 * layer; without it every `ask` is a `deny`. An approver that cannot answer should say
 * `deny`.
 *
 * @since 0.1.0
 */
export interface Approval {
  readonly approve: (request: ApprovalRequest) => Effect.Effect<ApprovalAnswer>
}

/**
 * The Approval service tag.
 *
 * @since 0.1.0
 */
export const Approval = Context.GenericTag<Approval>("mcp-fleet/Policy/Approval")

/**
 * A layer with an approver made of one function.
 *
 * @since 0.1.0
 */
export const layerApproval = (approve: Approval["approve"]): Layer.Layer<Approval> =>
  Layer.succeed(Approval, Approval.of({ approve }))

// --- audit --------------------------------------------------------------------------

/**
 * One line of the audit log. `argsDigest` is `sha256:` and the hex SHA-256 of the
 * arguments' canonical JSON (keys sorted), never the arguments; `outcome` is `ok`,
 * `isError`, `denied`, `invalid`, `timeout`, `cancelled` or `error:<reason tag>`;
 * `resultBytes` is the size of the JSON of the result as the server sent it, when one came;
 * `rule` is the rule (or default) that denied or asked.
 *
 * @since 0.1.0
 */
export const AuditEntry = Schema.Struct({
  time: Schema.String,
  server: Schema.String,
  tool: Schema.String,
  name: Schema.String,
  argsDigest: Schema.String,
  durationMs: Schema.Number,
  outcome: Schema.String,
  resultBytes: Schema.optional(Schema.Number),
  truncated: Schema.optional(Schema.Boolean),
  rule: Schema.optional(Schema.String)
}).annotations({ identifier: "AuditEntry" })

/**
 * @since 0.1.0
 */
export interface AuditEntry extends Schema.Schema.Type<typeof AuditEntry> {}

/**
 * Where audit entries go besides the `audit` file: provide it to the Policy's layer.
 *
 * @since 0.1.0
 */
export interface AuditSink {
  readonly write: (entry: AuditEntry) => Effect.Effect<void>
}

/**
 * The AuditSink service tag.
 *
 * @since 0.1.0
 */
export const AuditSink = Context.GenericTag<AuditSink>("mcp-fleet/Policy/AuditSink")

const canonical = (value: unknown): string => {
  if (value !== null && typeof value === "object" && typeof (value as { toJSON?: unknown }).toJSON === "function") {
    return canonical((value as { toJSON: () => unknown }).toJSON())
  }
  if (Array.isArray(value)) return `[${value.map((item) => item === undefined ? "null" : canonical(item)).join(",")}]`
  if (value !== null && typeof value === "object") {
    const record = value as Record<string, unknown>
    const keys = Object.keys(record).filter((key) => record[key] !== undefined && typeof record[key] !== "function").sort()
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical(record[key])}`).join(",")}}`
  }
  return JSON.stringify(value) ?? "null"
}

/**
 * The digest the audit log keeps of a call's arguments: `sha256:` and the hex SHA-256 of
 * their canonical JSON (object keys sorted, no whitespace). Absent arguments count as `{}`.
 *
 * @since 0.1.0
 */
export const digestArguments = (args: Readonly<Record<string, unknown>> | undefined): string =>
  `sha256:${createHash("sha256").update(canonical(args ?? {})).digest("hex")}`

// --- result size --------------------------------------------------------------------

const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value), "utf8")

// The bytes one code point takes inside a JSON string.
const escapedBytes = (code: number): number =>
  code === 0x22 || code === 0x5c
    ? 2
    : code < 0x20
    ? (code === 0x08 || code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d ? 2 : 6)
    : code < 0x80
    ? 1
    : code < 0x800
    ? 2
    : code >= 0xd800 && code <= 0xdfff
    ? 6 // a lone surrogate is escaped
    : code < 0x10000
    ? 3
    : 4

// The length of the longest prefix of `text` whose JSON takes at most `room` bytes,
// never splitting a surrogate pair.
const fittingPrefix = (text: string, room: number): number => {
  let used = 0
  let i = 0
  while (i < text.length) {
    const code = text.codePointAt(i)!
    used += escapedBytes(code)
    if (used > room) break
    i += code > 0xffff ? 2 : 1
  }
  return i
}

/**
 * The marker that ends a truncated result.
 *
 * @since 0.1.0
 */
export const truncationMarker = (limit: number, size: number): string =>
  `[truncated by mcp-fleet: ${limit} of ${size} bytes]`

/**
 * Cuts a result of `size` bytes down to at most `limit` bytes of JSON: the content blocks
 * that fit, then as much of the next block as fits if it is text, then the marker block
 * (alone, if even the marker does not fit). `structuredContent` is dropped (cut, it would
 * no longer match the tool's outputSchema); `isError` and `_meta` are kept.
 *
 * @since 0.1.0
 */
export const truncate = (result: McpSchema.CallToolResult, limit: number, size: number): McpSchema.CallToolResult => {
  const { content, structuredContent: _, ...rest } = result
  const marker: McpSchema.TextContent = { type: "text", text: truncationMarker(limit, size) }
  let used = jsonBytes({ ...rest, content: [marker] })
  const kept: Array<McpSchema.CallToolResult["content"][number]> = []
  for (const block of content) {
    const cost = jsonBytes(block) + 1
    if (used + cost <= limit) {
      kept.push(block)
      used += cost
      continue
    }
    if (block.type === "text") {
      const room = limit - used - jsonBytes({ ...block, text: "" }) - 1
      const cut = room > 0 ? fittingPrefix((block as McpSchema.TextContent).text, room) : 0
      if (cut > 0) kept.push({ ...block, text: (block as McpSchema.TextContent).text.slice(0, cut) } as typeof block)
    }
    break
  }
  return { ...rest, content: [...kept, marker] }
}

// --- limits at run time -------------------------------------------------------------

interface Bucket {
  readonly calls: number
  readonly perMs: number
  tokens: number
  updated: number
}

interface Pool {
  concurrency: { readonly max: number; readonly semaphore: Effect.Semaphore } | undefined
  rate: Bucket | undefined
}

const refill = (bucket: Bucket, now: number) => {
  bucket.tokens = Math.min(bucket.calls, bucket.tokens + (now - bucket.updated) * bucket.calls / bucket.perMs)
  bucket.updated = now
}

// --- the service --------------------------------------------------------------------

/**
 * The policy in front of a fleet.
 *
 * @since 0.1.0
 */
export interface Policy {
  /** The catalog without the tools a call to would be denied (see {@link Decision}); everything else kept. */
  readonly filter: (catalog: Catalog.Catalog) => Catalog.Catalog
  /** The registry's catalog, filtered, now and after every change of it or of the policy. */
  readonly catalog: Stream.Stream<Catalog.Catalog>
  /**
   * What a call of the tool meets, for display. A qualified name is looked up in the
   * current catalog; a name it does not hold is judged by the global rules alone.
   */
  readonly decide: (tool: Catalog.ToolEntry | string) => Decision
  /**
   * Checks arguments against the tool's inputSchema; fails with a Validation reason naming
   * the server, the tool and the bad field.
   */
  readonly validate: (
    name: string,
    args?: Readonly<Record<string, unknown>> | undefined
  ) => Effect.Effect<void, McpError.McpError>
  /**
   * Calls a tool by qualified name under policy: catalog lookup, rule decision (a deny
   * fails with a Denied reason), argument validation, approval for `ask`, limits (rate,
   * concurrency, timeout), the call, the size limit; then one audit entry.
   */
  readonly callTool: (
    name: string,
    args?: Record<string, unknown> | undefined,
    options?: ServerRegistry.CallToolOptions | undefined
  ) => Effect.Effect<McpSchema.CallToolResult, McpError.McpError>
  /** The config in force. */
  readonly config: Effect.Effect<Config>
  /** Puts a new config in force (a config file edit); calls already running keep their limits. */
  readonly update: (config: Config) => Effect.Effect<void>
}

/**
 * The Policy service tag.
 *
 * @since 0.1.0
 */
export const Policy = Context.GenericTag<Policy>("mcp-fleet/Policy")

const denied = (entry: Catalog.ToolEntry, decision: Judged) =>
  McpError.make(
    entry.server,
    new McpError.DeniedReason(
      decision.source === undefined
        ? { tool: entry.name, message: decision.reason }
        : { tool: entry.name, rule: decision.source, message: decision.reason }
    )
  )

const outcomeOf = (exit: Exit.Exit<McpSchema.CallToolResult, McpError.McpError>): string => {
  if (Exit.isSuccess(exit)) return exit.value.isError === true ? "isError" : "ok"
  if (Exit.isInterrupted(exit)) return "cancelled"
  const failure = exit.cause._tag === "Fail" ? exit.cause.error : undefined
  if (failure === undefined) return "error:defect"
  const tag = failure.reason._tag
  return tag === "Denied" ? "denied" : tag === "Timeout" ? "timeout" : `error:${tag}`
}

/**
 * Makes the policy of the registry in context. The Approval and AuditSink services are
 * taken from the context if present. The audit file, if set, gets one line appended per
 * call; a line that cannot be written is logged as a warning and the call goes on.
 *
 * @since 0.1.0
 */
export const make = (
  config: Config = {}
): Effect.Effect<Policy, never, ServerRegistry.ServerRegistry | Scope.Scope> =>
  Effect.gen(function*() {
    const registry = yield* ServerRegistry.ServerRegistry
    const approval = yield* Effect.serviceOption(Approval)
    const sink = yield* Effect.serviceOption(AuditSink)
    const approver = Option.isSome(approval)
    // Read synchronously by `filter` and `decide`; written only together with `state`.
    let compiled = compile(config)
    const state = yield* SubscriptionRef.make(compiled)
    let known = yield* SubscriptionRef.get(registry.catalog)
    yield* registry.catalog.changes.pipe(
      Stream.runForEach((catalog) => Effect.sync(() => known = catalog)),
      Effect.forkScoped
    )
    const validators = new ValidatorCache()
    // A catalog keeps its tools' schema objects, so most calls skip the cache's JSON key.
    const bySchema = new WeakMap<object, ReturnType<ValidatorCache["get"]>>()
    const validatorOf = (schema: Record<string, unknown>) => {
      let validator = bySchema.get(schema)
      if (validator === undefined) {
        validator = validators.get(schema)
        bySchema.set(schema, validator)
      }
      return validator
    }
    const pools = new Map<string, Pool>()
    const fileLock = yield* Effect.makeSemaphore(1)

    const filterWith = (rules: Compiled, catalog: Catalog.Catalog): Catalog.Catalog => {
      const tools = catalog.tools.filter((entry) => decideWith(rules, targetOf(entry), approver).action !== "deny")
      return tools.length === catalog.tools.length
        ? catalog
        : { ...catalog, tools, toolsByName: new Map(tools.map((entry) => [entry.name, entry])) }
    }

    const decide: Policy["decide"] = (tool) => {
      const entry = typeof tool === "string" ? known.toolsByName.get(tool) : tool
      return decideWith(compiled, entry === undefined ? { name: tool as string } : targetOf(entry), approver)
    }

    const lookup = (name: string) =>
      Effect.flatMap(SubscriptionRef.get(registry.catalog), (catalog) => {
        const entry = catalog.toolsByName.get(name)
        return entry !== undefined
          ? Effect.succeed(entry)
          : Effect.fail(McpError.make(
            undefined,
            new McpError.NotFoundReason({
              what: "tool",
              name,
              // From the filtered catalog: a hidden tool is never named.
              suggestions: Catalog.suggest(name, filterWith(compiled, catalog).toolsByName.keys())
            })
          ))
      })

    const check = (entry: Catalog.ToolEntry, args: Readonly<Record<string, unknown>> | undefined) =>
      Effect.suspend(() => {
        const validator = validatorOf(entry.tool.inputSchema)
        // A schema that cannot be compiled is the server's to enforce.
        if (validator._tag === "Left") {
          return Effect.logDebug(`the inputSchema of tool '${entry.name}' cannot be compiled: ${validator.left}`)
        }
        const problem = validator.right(args ?? {})
        return problem === undefined ? Effect.void : Effect.fail(McpError.make(
          entry.server,
          new McpError.ValidationReason({
            method: "tools/call",
            message: `invalid arguments for tool '${entry.tool.name}': ${problem}`
          })
        ))
      })

    // The decision on a tool; a denied tool fails here.
    const judge = (entry: Catalog.ToolEntry, rules: Compiled): Effect.Effect<Judged, McpError.McpError> => {
      const decision = decideWith(rules, targetOf(entry), approver)
      return decision.action === "deny" ? Effect.fail(denied(entry, decision)) : Effect.succeed(decision)
    }

    const validate: Policy["validate"] = traced("Policy.validate")((name, args) =>
      Effect.flatMap(lookup(name), (entry) => Effect.zipRight(judge(entry, compiled), check(entry, args)))
    )

    const poolOf = (key: string, limits: Limits): Pool => {
      let pool = pools.get(key)
      if (pool === undefined) {
        pool = { concurrency: undefined, rate: undefined }
        pools.set(key, pool)
      }
      const max = limits.maxConcurrent
      if (max === undefined) pool.concurrency = undefined
      else if (pool.concurrency?.max !== max) pool.concurrency = { max, semaphore: Effect.unsafeMakeSemaphore(max) }
      const rate = limits.rateLimit
      if (rate === undefined) pool.rate = undefined
      else {
        const perMs = Duration.toMillis(Duration.decode(rate.per))
        if (pool.rate?.calls !== rate.calls || pool.rate.perMs !== perMs) {
          pool.rate = { calls: rate.calls, perMs, tokens: rate.calls, updated: -Infinity }
        }
      }
      return pool
    }

    // Takes a token from every bucket, or from none when one is empty.
    const takeTokens = (entry: Catalog.ToolEntry, scoped: ReadonlyArray<readonly [Pool, string]>) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        for (const [pool, what] of scoped) {
          const bucket = pool.rate
          if (bucket === undefined) continue
          refill(bucket, now)
          if (bucket.tokens < 1) {
            const wait = Math.ceil((1 - bucket.tokens) * bucket.perMs / bucket.calls)
            return Effect.fail(McpError.make(
              entry.server,
              new McpError.LimitReason({
                what: `calls per ${bucket.perMs} ms to ${what} (the next is allowed in ${wait} ms)`,
                limit: bucket.calls
              })
            ))
          }
        }
        for (const [pool] of scoped) if (pool.rate !== undefined) pool.rate.tokens -= 1
        return Effect.void
      })

    const limited = <A>(
      entry: Catalog.ToolEntry,
      resolved: Resolved,
      call: Effect.Effect<A, McpError.McpError>
    ): Effect.Effect<A, McpError.McpError> =>
      Effect.suspend(() => {
        const scoped = [
          [poolOf(`${entry.server}\u0000${entry.tool.name}`, resolved.tool), `tool '${entry.tool.name}'`],
          [poolOf(entry.server, resolved.server), "the server"]
        ] as const
        const timeout = resolved.call.timeout
        const timed = timeout === undefined ? call : Effect.timeoutFail(call, {
          duration: timeout,
          onTimeout: () =>
            McpError.make(
              entry.server,
              new McpError.TimeoutReason({
                method: "tools/call",
                afterMs: Duration.toMillis(Duration.decode(timeout)),
                kind: "total"
              })
            )
        })
        // Slots are always taken tool first, then server, so two calls never wait on each other.
        const slotted = scoped.reduceRight<Effect.Effect<A, McpError.McpError>>(
          (inner, [pool]) => pool.concurrency === undefined ? inner : pool.concurrency.semaphore.withPermits(1)(inner),
          timed
        )
        return Effect.zipRight(takeTokens(entry, scoped), slotted)
      })

    const appendLine = (path: string, line: string) =>
      fileLock.withPermits(1)(Effect.tryPromise(() => fs.appendFile(path, line)).pipe(
        Effect.catchAll((error) => {
          const why = error.cause instanceof Error ? error.cause.message : String(error.cause)
          return Effect.logWarning(`the audit log ${path} cannot be written: ${why}`)
        })
      ))

    const audit = (entry: AuditEntry) =>
      Effect.suspend(() => {
        const path = compiled.config.audit
        return Effect.all([
          Option.isSome(sink) ? sink.value.write(entry) : Effect.void,
          path === undefined ? Effect.void : appendLine(path, `${JSON.stringify(entry)}\n`)
        ], { discard: true, concurrency: "unbounded" })
      })

    const callTool: Policy["callTool"] = traced("Policy.callTool")((name, args, options) =>
      Effect.gen(function*() {
        const start = yield* Clock.currentTimeMillis
        const rules = compiled
        const auditing = Option.isSome(sink) || rules.config.audit !== undefined
        // Filled in as the call goes, for its audit entry.
        const facts: {
          entry: Catalog.ToolEntry | undefined
          invalid: boolean
          rule: string | undefined
          resultBytes: number | undefined
          truncated: boolean
        } = { entry: undefined, invalid: false, rule: undefined, resultBytes: undefined, truncated: false }

        const run = Effect.gen(function*() {
          const entry = yield* lookup(name)
          facts.entry = entry
          const decision = yield* judge(entry, rules).pipe(
            Effect.tapError((error) => Effect.sync(() => facts.rule = (error.reason as McpError.DeniedReason).rule))
          )
          facts.rule = decision.source
          yield* Effect.tapError(check(entry, args), () => Effect.sync(() => facts.invalid = true))
          if (decision.action === "ask" && Option.isSome(approval)) {
            const answer = yield* approval.value.approve({
              server: entry.server,
              tool: entry.tool.name,
              name,
              arguments: args ?? {},
              rule: decision.rule
            })
            if (answer.decision !== "allow") {
              const declined = `${decision.reason}: the approver declined${answer.reason ? ` (${answer.reason})` : ""}`
              return yield* Effect.fail(denied(entry, { ...decision, action: "deny", reason: declined }))
            }
          }
          const resolved = resolveLimits(rules, targetOf(entry))
          const result = yield* limited(
            entry,
            resolved,
            registry.withClient(entry.server, (client) => client.callTool(entry.tool.name, args, options), options)
          )
          const max = resolved.call.maxResultBytes
          if (max === undefined && !auditing) return result
          const size = jsonBytes(result)
          facts.resultBytes = size
          if (max === undefined || size <= max) return result
          if (resolved.call.onOversize === "fail") {
            return yield* Effect.fail(McpError.make(
              entry.server,
              new McpError.LimitReason({ what: `the result of tool '${entry.tool.name}' in bytes`, size, limit: max })
            ))
          }
          facts.truncated = true
          return truncate(result, max, size)
        })

        if (!auditing) return yield* run
        return yield* run.pipe(Effect.onExit((exit) =>
          Effect.flatMap(Clock.currentTimeMillis, (end) =>
            audit({
              time: new Date(start).toISOString(),
              server: facts.entry?.server ?? "",
              tool: facts.entry?.tool.name ?? "",
              name,
              argsDigest: digestArguments(args),
              durationMs: end - start,
              outcome: facts.invalid ? "invalid" : outcomeOf(exit),
              ...(facts.resultBytes === undefined ? {} : { resultBytes: facts.resultBytes }),
              ...(facts.truncated ? { truncated: true } : {}),
              ...(facts.rule === undefined ? {} : { rule: facts.rule })
            })
          )
        ))
      })
    )

    return Policy.of({
      filter: (catalog) => filterWith(compiled, catalog),
      catalog: Stream.zipLatestWith(
        registry.catalog.changes,
        state.changes,
        (catalog, rules) => ({ catalog, filtered: filterWith(rules, catalog) })
      ).pipe(
        // A policy edit that hides nothing new is no change.
        Stream.changesWith((a, b) =>
          a.catalog === b.catalog && a.filtered.tools.length === b.filtered.tools.length &&
          a.filtered.tools.every((entry, i) => entry === b.filtered.tools[i])
        ),
        Stream.map(({ filtered }) => filtered)
      ),
      decide,
      validate,
      callTool,
      config: Effect.sync(() => compiled.config),
      update: (next) =>
        SubscriptionRef.update(state, () => {
          compiled = compile(next)
          return compiled
        })
    })
  })

/**
 * A layer with the policy `config` in front of the registry in context; provide an
 * Approval and an AuditSink to it as needed.
 *
 * @since 0.1.0
 */
export const layer = (config: Config = {}): Layer.Layer<Policy, never, ServerRegistry.ServerRegistry> =>
  Layer.scoped(Policy, make(config))

/**
 * No rules and no limits: every tool visible and every call passed on, arguments still
 * validated and nothing audited.
 *
 * @since 0.1.0
 */
export const layerAllowAll: Layer.Layer<Policy, never, ServerRegistry.ServerRegistry> = layer({})
