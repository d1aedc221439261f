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
 * **Secrets.** A call whose arguments carry a secret of any server of the fleet
 * (`ServerRegistry.secretIn`: a configured secret or an OAuth token, in any form masking
 * finds) is denied, with an audit entry whose rule is `secret in arguments`, unless an
 * `allow` rule matches the tool: a model must not carry one server's key to another.
 *
 * The service is composed in `internal/policy/`, one file per part: rule decisions,
 * argument validation, limits, the result size and the audit log.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type * as Catalog from "./Catalog.js"
import * as audit from "./internal/policy/audit.js"
import * as auditChain from "./internal/policy/auditChain.js"
import * as merging from "./internal/policy/merge.js"
import * as resultSize from "./internal/policy/resultSize.js"
import * as rules from "./internal/policy/rules.js"
import * as service from "./internal/policy/service.js"
import type * as McpError from "./McpError.js"
import type * as McpSchema from "./McpSchema.js"
import * as ServerRegistry from "./ServerRegistry.js"

// --- config -------------------------------------------------------------------------

// The schemas below are the policy block of a config file (durations in milliseconds) and,
// as types, what a program passes (any DurationInput): one definition for both.

const Count = Schema.Int.pipe(Schema.positive())

const isDurationInput = (input: unknown): input is Duration.DurationInput =>
  Option.isSome(Duration.decodeUnknown(input))

// Milliseconds in a file; any DurationInput in a program.
const Milliseconds = Schema.transform(
  Schema.Number.pipe(Schema.finite(), Schema.positive()).annotations({ identifier: "PositiveMilliseconds" }),
  Schema.declare(isDurationInput, { identifier: "DurationInput" }),
  { strict: true, decode: (ms) => ms, encode: (input) => Duration.toMillis(Duration.decode(input)) }
)

/**
 * What a rule does with the tools it matches.
 *
 * @since 0.1.0
 * @category models
 */
export const Action = Schema.Literal("allow", "deny", "ask")

/**
 * @since 0.1.0
 * @category models
 */
export type Action = typeof Action.Type

/**
 * At most `calls` calls per `per` (a number is milliseconds), as a token bucket: the
 * bucket holds `calls` tokens and refills continuously at `calls` per `per`.
 *
 * @since 0.1.0
 * @category models
 */
export const RateLimit = Schema.Struct({ calls: Count, per: Milliseconds }).annotations({ identifier: "RateLimit" })

/**
 * @since 0.1.0
 * @category models
 */
export interface RateLimit extends Schema.Schema.Type<typeof RateLimit> {}

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
 * @category models
 */
export const Limits = Schema.Struct({
  /**
   * The longest a call may take once it has its concurrency slots, waiting for the server
   * to be ready included: the call's total limit (`ServerRegistry.CallToolOptions.maxTotalTimeout`,
   * the caller's own when shorter). A call that runs longer is cancelled and fails with a
   * Timeout reason. Default: none (the connection's request timeout still applies).
   */
  timeout: Schema.optional(Milliseconds),
  /** How many calls may run at once; more wait for a free slot, in order. Default: no limit. */
  maxConcurrent: Schema.optional(Count),
  /**
   * A call over the rate fails at once with a Limit reason saying when the next is
   * allowed; it does not wait. Calls count when admitted, before they wait for a slot;
   * denied and invalid calls do not count. Default: no limit.
   */
  rateLimit: Schema.optional(RateLimit),
  /** The largest result, in bytes of its JSON. Default: no limit. */
  maxResultBytes: Schema.optional(Count),
  /**
   * What a larger result becomes: `truncate` (the default) keeps the content blocks that
   * fit, cuts the first text block that does not, drops `structuredContent`, and ends with
   * the text block `[truncated by mcp-fleet: <limit> of <size> bytes]`; `fail` fails the
   * call with a Limit reason.
   */
  onOversize: Schema.optional(Schema.Literal("truncate", "fail"))
}).annotations({ identifier: "Limits" })

/**
 * @since 0.1.0
 * @category models
 */
export interface Limits extends Schema.Schema.Type<typeof Limits> {}

/**
 * Rules and limits, of the whole fleet or of one server.
 *
 * @since 0.1.0
 * @category models
 */
export const Rules = Schema.Struct({
  allow: Schema.optional(Schema.Array(Schema.String)),
  deny: Schema.optional(Schema.Array(Schema.String)),
  ask: Schema.optional(Schema.Array(Schema.String)),
  /** What happens to a tool no rule matches. Default: allow. */
  default: Schema.optional(Action),
  limits: Schema.optional(Limits),
  /**
   * Limits per tool, keyed by glob: the qualified name at the top level; the original or
   * the qualified name in a server's block. Each matching tool has limits of its own.
   */
  tools: Schema.optional(Schema.Record({ key: Schema.String, value: Limits }))
}).annotations({ identifier: "Rules" })

/**
 * @since 0.1.0
 * @category models
 */
export interface Rules extends Schema.Schema.Type<typeof Rules> {}

/**
 * The whole policy: global rules and limits, each server's by server name, and the audit
 * log file. `{}` is no policy at all: everything allowed, no limits, no audit file.
 *
 * @since 0.1.0
 * @category models
 */
export const Config = Schema.Struct({
  ...Rules.fields,
  servers: Schema.optional(Schema.Record({ key: Schema.String, value: Rules })),
  /** A file to append one JSON line per call to. */
  audit: Schema.optional(Schema.String),
  /** A file holding the Ed25519 private key that signs the audit log's checkpoints. */
  auditKey: Schema.optional(Schema.String)
}).annotations({ identifier: "Policy" })

/**
 * @since 0.1.0
 * @category models
 */
export interface Config extends Schema.Schema.Type<typeof Config> {}

/**
 * Merges two configs, `b` later (a project file after the user's): rules are concatenated,
 * so a later file cannot lift an earlier `deny`; limits and `audit` of `b` win field by
 * field; `default` is the stricter of the two (deny > ask > allow).
 *
 * @since 0.1.0
 * @category combinators
 */
export const merge: (a: Config, b: Config) => Config = merging.merge

// --- decisions ----------------------------------------------------------------------

/**
 * One rule as written: its action, its glob, and the server whose block holds it
 * (undefined for a global rule).
 *
 * @since 0.1.0
 * @category models
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
 * @category utils
 */
export const ruleText: (rule: Rule) => string = rules.ruleText

/**
 * What policy does with one tool. `action` is what a call meets: an `ask` rule with no
 * Approval service is `deny` here. `rule` is the rule that decided (undefined when a
 * `default` or the absence of rules did), `reason` says it in words.
 *
 * @since 0.1.0
 * @category models
 */
export interface Decision {
  readonly action: Action
  readonly rule: Rule | undefined
  readonly reason: string
}

// --- approval -----------------------------------------------------------------------

/**
 * A call that an `ask` rule holds until someone approves it.
 *
 * @since 0.1.0
 * @category models
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
 * @category models
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
 * @category models
 */
export interface Approval {
  readonly approve: (request: ApprovalRequest) => Effect.Effect<ApprovalAnswer>
}

/**
 * The Approval service tag.
 *
 * @since 0.1.0
 * @category tags
 */
export const Approval = Context.GenericTag<Approval>("mcp-fleet/Policy/Approval")

/**
 * A layer with an approver made of one function.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerApproval = (approve: Approval["approve"]): Layer.Layer<Approval> =>
  Layer.succeed(Approval, Approval.of({ approve }))

// --- audit --------------------------------------------------------------------------

/**
 * One line of the audit log. `argsDigest` is `sha256:` and the hex SHA-256 of the
 * arguments' canonical JSON (keys sorted), never the arguments; `outcome` is `ok`,
 * `isError`, `denied`, `invalid`, `timeout`, `cancelled` or `error:<reason tag>`;
 * `resultBytes` is the size of the JSON of the result as the server sent it, when one came;
 * `rule` is the rule (or default) that denied or asked; `caller` who made the call, when
 * known (the gateway's OAuth caller: the token's subject and client).
 *
 * @since 0.1.0
 * @category models
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
  rule: Schema.optional(Schema.String),
  caller: Schema.optional(Schema.Struct({
    subject: Schema.optional(Schema.String),
    clientId: Schema.optional(Schema.String)
  }))
}).annotations({ identifier: "AuditEntry" })

/**
 * @since 0.1.0
 * @category models
 */
export interface AuditEntry extends Schema.Schema.Type<typeof AuditEntry> {}

/**
 * Where audit entries go besides the `audit` file: provide it to the Policy's layer.
 *
 * @since 0.1.0
 * @category models
 */
export interface AuditSink {
  readonly write: (entry: AuditEntry) => Effect.Effect<void>
}

/**
 * The AuditSink service tag.
 *
 * @since 0.1.0
 * @category tags
 */
export const AuditSink = Context.GenericTag<AuditSink>("mcp-fleet/Policy/AuditSink")

/**
 * The digest the audit log keeps of a call's arguments: `sha256:` and the hex SHA-256 of
 * their canonical JSON (object keys sorted, no whitespace). Absent arguments count as `{}`.
 *
 * @since 0.1.0
 * @category utils
 */
export const digestArguments: (args: Readonly<Record<string, unknown>> | undefined) => string = audit.digestArguments

/**
 * The environment variable holding the audit log's signing key (an Ed25519 private key,
 * base64 or hex), which wins over the config's `auditKey` file.
 *
 * @since 0.2.0
 * @category audit
 */
export const AUDIT_KEY_ENV: string = audit.AUDIT_KEY_ENV

/**
 * What the check of an audit log found: its lines, checkpoints and signatures, its head (the
 * last line's hash, an anchor to keep elsewhere), and each problem with its line number.
 *
 * @since 0.2.0
 * @category audit
 */
export interface AuditReport extends auditChain.Report {}

/**
 * How an audit log is checked: the public key checkpoints must be signed with, an anchor
 * that must still be there, whether the log may still be written to.
 *
 * @since 0.2.0
 * @category audit
 */
export interface AuditVerifyOptions extends auditChain.VerifyOptions {}

/**
 * Checks an audit log's hash chain and signatures a line at a time, in constant memory: `push`
 * each line (without its newline), then `finish`.
 *
 * @since 0.2.0
 * @category audit
 */
export const makeAuditVerifier = (
  options?: AuditVerifyOptions
): { readonly push: (line: string) => void; readonly finish: () => AuditReport } => new auditChain.Verifier(options)

/**
 * A new Ed25519 key pair for the audit log, base64url: the private key for `auditKey`, the
 * public key for `verify`.
 *
 * @since 0.2.0
 * @category audit
 */
export const newAuditKey: () => { readonly privateKey: string; readonly publicKey: string } = auditChain.newKey

/**
 * The public key (base64url) of an audit private key as written in `auditKey`'s file, or why
 * the text is not one.
 *
 * @since 0.2.0
 * @category audit
 */
export const auditPublicKey = (privateKey: string): Either.Either<string, string> => {
  const key = auditChain.parseKey(privateKey)
  return typeof key === "string" ? Either.left(key) : Either.right(key.publicKey)
}

// --- result size --------------------------------------------------------------------

/**
 * The marker that ends a truncated result.
 *
 * @since 0.1.0
 * @category utils
 */
export const truncationMarker: (limit: number, size: number) => string = resultSize.truncationMarker

/**
 * Cuts a result of `size` bytes down to at most `limit` bytes of JSON: the content blocks
 * that fit, then as much of the next block as fits if it is text, then the marker block
 * (alone, if even the marker does not fit). `structuredContent` is dropped (cut, it would
 * no longer match the tool's outputSchema); `isError` and `_meta` are kept.
 *
 * @since 0.1.0
 * @category utils
 */
export const truncate: (result: McpSchema.CallToolResult, limit: number, size: number) => McpSchema.CallToolResult =
  resultSize.truncate

// --- the service --------------------------------------------------------------------

/**
 * Options of one call under policy.
 *
 * @since 0.2.0
 * @category models
 */
export interface CallToolOptions extends ServerRegistry.CallToolOptions {
  /**
   * This call's own approver for an `ask` rule, in place of the policy's Approval (the
   * gateway asks the calling client). With it, `ask` is asked even when the policy has none.
   */
  readonly approve?: Approval["approve"] | undefined
  /** Who makes the call (the gateway's OAuth caller), named in its audit entry. */
  readonly caller?: { readonly subject?: string | undefined; readonly clientId?: string | undefined } | undefined
}

/**
 * The policy in front of a fleet.
 *
 * @since 0.1.0
 * @category models
 */
export interface Policy {
  /**
   * The catalog without the tools a call to would be denied (see {@link Decision}); everything
   * else kept. With `approver: true`, for a caller that brings its own approver
   * (`CallToolOptions.approve`), tools under `ask` are kept even when the policy has none.
   */
  readonly filter: (
    catalog: Catalog.Catalog,
    options?: { readonly approver?: boolean | undefined } | undefined
  ) => Catalog.Catalog
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
    options?: CallToolOptions | undefined
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
 * @category tags
 */
export const Policy = Context.GenericTag<Policy>("mcp-fleet/Policy")

/**
 * Makes the policy of the registry in context. The Approval and AuditSink services are
 * taken from the context if present. The audit file, if set, gets one line appended per
 * call through @effect/platform's FileSystem in context (on Node, `NodeFleet.layer`
 * provides it); a line that cannot be written, or no FileSystem, is logged as a warning
 * and the call goes on.
 *
 * @example
 * ```ts
 * const policy = yield* Policy.make({ deny: ["mcp__*__delete_*"], limits: { timeout: "30 seconds" } })
 * yield* policy.callTool("mcp__github__search_issues", { q: "label:bug" })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  config: Config = {}
): Effect.Effect<Policy, never, ServerRegistry.ServerRegistry | Scope.Scope> =>
  Effect.gen(function*() {
    const registry = yield* ServerRegistry.ServerRegistry
    const approval = yield* Effect.serviceOption(Approval)
    const sink = yield* Effect.serviceOption(AuditSink)
    const files = yield* Effect.serviceOption(FileSystem.FileSystem)
    return Policy.of(yield* service.make(config, { registry, approval, sink, files }))
  })

/**
 * A layer with the policy `config` in front of the registry in context; provide an
 * Approval and an AuditSink to it as needed.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (config: Config = {}): Layer.Layer<Policy, never, ServerRegistry.ServerRegistry> =>
  Layer.scoped(Policy, make(config))

/**
 * No rules and no limits: every tool visible and every call passed on, arguments still
 * validated and nothing audited.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerAllowAll: Layer.Layer<Policy, never, ServerRegistry.ServerRegistry> = layer({})
