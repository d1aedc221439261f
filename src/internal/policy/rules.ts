/**
 * Rule decisions and limit resolution: a config compiled once (globs turned into
 * matchers), then asked, per tool, which rule decides and which limits hold.
 *
 * @internal
 */
import type * as Catalog from "../../Catalog.js"
import type * as Policy from "../../Policy.js"
import * as Glob from "../glob.js"

const strictness: Record<Policy.Action, number> = { allow: 0, ask: 1, deny: 2 }

/** The stricter of two actions: deny > ask > allow; undefined when neither is set. */
export const stricter = (a: Policy.Action | undefined, b: Policy.Action | undefined): Policy.Action | undefined =>
  a === undefined ? b : b === undefined ? a : strictness[b] > strictness[a] ? b : a

/** See `Policy.ruleText`. */
export const ruleText = (rule: Policy.Rule): string =>
  `${rule.action} "${rule.pattern}" (${rule.server === undefined ? "global" : `server '${rule.server}'`})`

interface CompiledRule {
  readonly rule: Policy.Rule
  readonly match: Glob.Matcher
}

interface CompiledLimits {
  readonly match: Glob.Matcher
  readonly limits: Policy.Limits
}

interface CompiledScope {
  readonly rules: ReadonlyArray<CompiledRule>
  readonly default: Policy.Action | undefined
  readonly limits: Policy.Limits | undefined
  readonly tools: ReadonlyArray<CompiledLimits>
}

/** A config with its globs compiled. */
export interface Compiled {
  readonly config: Policy.Config
  readonly global: CompiledScope
  readonly servers: ReadonlyMap<string, CompiledScope>
}

const actions: ReadonlyArray<Policy.Action> = ["deny", "ask", "allow"]

const compileScope = (rules: Policy.Rules, server: string | undefined): CompiledScope => ({
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

/** Compiles a config once, for many decisions. */
export const compile = (config: Policy.Config): Compiled => ({
  config,
  global: compileScope(config, undefined),
  servers: new Map(Object.entries(config.servers ?? {}).map(([server, rules]) => [server, compileScope(rules, server)]))
})

/** The tool a name stands for: its server and original name, when known. */
export interface Target {
  readonly name: string
  readonly server?: string | undefined
  readonly tool?: string | undefined
}

/** The target of a catalog entry. */
export const targetOf = (entry: Catalog.ToolEntry): Target => ({
  name: entry.name,
  server: entry.server,
  tool: entry.tool.name
})

// A server's globs match the qualified or the original name; global ones the qualified name.
const matchesIn = (scope: CompiledScope | undefined, target: Target) => (match: Glob.Matcher) =>
  match(target.name) || (scope !== undefined && target.tool !== undefined && match(target.tool))

/**
 * A decision and what made it, as written in errors and audit lines: `deny "x" (global)`,
 * `default deny (server 'a')`; undefined when nothing did.
 */
export interface Judged extends Policy.Decision {
  readonly source: string | undefined
}

/** The decision on one tool; `approver` says whether an `ask` can be asked at all. */
export const decide = (compiled: Compiled, target: Target, approver: boolean): Judged => {
  const scope = target.server === undefined ? undefined : compiled.servers.get(target.server)
  let best: Policy.Rule | undefined
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

/** The limits that hold for one call, by what they count. */
export interface Resolved {
  /** Per call: timeout, size. */
  readonly call: Policy.Limits
  /** The server's shared slots and bucket. */
  readonly server: Policy.Limits
  /** The tool's own slots and bucket. */
  readonly tool: Policy.Limits
}

const mergeAll = (all: ReadonlyArray<Policy.Limits | undefined>) =>
  all.reduce<Policy.Limits>((limits, more) => more === undefined ? limits : { ...limits, ...more }, {})

/** The limits of one tool: closer to the tool wins (server tool > server > global tool > global). */
export const resolveLimits = (compiled: Compiled, target: Target): Resolved => {
  const scope = target.server === undefined ? undefined : compiled.servers.get(target.server)
  const globalTool = compiled.global.tools.filter((entry) => entry.match(target.name)).map((entry) => entry.limits)
  const inScope = matchesIn(scope, target)
  const serverTool = (scope?.tools ?? []).filter((entry) => inScope(entry.match)).map((entry) => entry.limits)
  return {
    call: mergeAll([compiled.global.limits, ...globalTool, scope?.limits, ...serverTool]),
    server: mergeAll([compiled.global.limits, scope?.limits]),
    tool: mergeAll([...globalTool, ...serverTool])
  }
}
