/**
 * The shape of a config file: the `mcpServers` / `servers` entries, a `defaults` block,
 * `pinning`, `sanitize`, `lazy` and a `policy` block (Policy's own schema). Unknown keys are ignored, since these files hold
 * other tools' settings too.
 *
 * @internal
 */
import * as Schema from "effect/Schema"
import * as Catalog from "../../Catalog.js"
import * as McpSchema from "../../McpSchema.js"
import * as Policy from "../../Policy.js"
import * as ToolPins from "../../ToolPins.js"

// What hidden text in the names and descriptions a server sends meets (Catalog.SanitizeMode).
const Sanitize = Schema.Literal("strip", "flag", "off")

const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })

const Milliseconds = Schema.Number.pipe(Schema.finite(), Schema.nonNegative()).annotations({
  identifier: "Milliseconds"
})
const PositiveMilliseconds = Schema.Number.pipe(Schema.finite(), Schema.positive()).annotations({
  identifier: "PositiveMilliseconds"
})

// Env and header values may be secrets: schema errors must not quote them.
const SecretString = Schema.String.annotations({ message: () => "Expected a string (value not shown)" })
const StringRecord = Schema.Record({ key: Schema.String, value: SecretString }).annotations({
  identifier: "Record<string, string>",
  message: () => ({ message: "Expected an object of strings (values not shown)", override: false })
})

const RestartEntry = Schema.Struct({
  initialDelay: optional(Milliseconds),
  maxDelay: optional(Milliseconds),
  stableAfter: optional(Milliseconds),
  factor: optional(Schema.Number.pipe(Schema.finite(), Schema.greaterThanOrEqualTo(1))),
  jitter: optional(Schema.Number.pipe(Schema.between(0, 1))),
  maxAttempts: optional(Schema.NonNegativeInt)
}).annotations({ identifier: "Restart" })

const HealthEntry = Schema.Struct({
  interval: optional(PositiveMilliseconds),
  timeout: optional(PositiveMilliseconds),
  failures: optional(Schema.Int.pipe(Schema.positive()))
}).annotations({ identifier: "Health" })

// What a `defaults` block and a server entry share.
const supervisionFields = {
  restart: optional(RestartEntry),
  health: optional(HealthEntry),
  initializeTimeout: optional(Milliseconds),
  startupTimeout: optional(Milliseconds),
  requestTimeout: optional(Milliseconds),
  // No `timeout` alias: Cline writes it in seconds and Gemini CLI in milliseconds.
  readyTimeout: optional(Milliseconds),
  idleTimeout: optional(Milliseconds)
}

const Defaults = Schema.Struct(supervisionFields).annotations({ identifier: "Defaults" })

// Tool policy, in Policy's own schema: kept out of the ServerSpec, so an edit never restarts
// a server. A file's servers keep their rules in their own entries, not under `servers`.
const PolicyEntry = Policy.Config.omit("servers").annotations({ identifier: "Policy" })

// Enterprise-managed authorization: the enterprise IdP and the ID token its sign-on gave.
const EnterpriseEntry = Schema.Struct({
  idpTokenEndpoint: Schema.String,
  idToken: Schema.String,
  idpClientId: optional(Schema.String),
  idpClientSecret: optional(Schema.String)
}).annotations({ identifier: "OAuthEnterprise" })

// A remote server's OAuth settings; secrets (`clientSecret`, the enterprise `idToken` and
// `idpClientSecret`) are expanded like `env` values (`${VAR}`).
const OAuthEntry = Schema.Struct({
  clientId: optional(Schema.String),
  clientSecret: optional(Schema.String),
  scopes: optional(Schema.Array(Schema.String)),
  callbackPort: optional(Schema.Int.pipe(Schema.between(1, 65535))),
  clientMetadataUrl: optional(Schema.String),
  dpop: optional(Schema.Boolean),
  enterprise: optional(EnterpriseEntry)
}).annotations({ identifier: "OAuth" })

// Unknown keys are ignored: these files hold other tools' settings too. `type` is any
// string, so a transport we do not know marks one server, not the whole file.
const ServerEntry = Schema.Struct({
  ...supervisionFields,
  type: optional(Schema.String),
  command: optional(Schema.String),
  args: optional(Schema.Array(Schema.String)),
  env: optional(StringRecord),
  envFile: optional(Schema.String),
  inheritEnv: optional(Schema.Boolean),
  cwd: optional(Schema.String),
  url: optional(Schema.String),
  headers: optional(StringRecord),
  oauth: optional(OAuthEntry),
  disabled: optional(Schema.Boolean),
  enabled: optional(Schema.Boolean),
  required: optional(Schema.Boolean),
  // Not started with the fleet: listed from the catalog cache until its first call.
  lazy: optional(Schema.Boolean),
  perPrincipal: optional(Schema.Boolean),
  pinning: optional(ToolPins.Mode),
  sanitize: optional(Sanitize),
  policy: optional(Policy.Rules),
  // Host features turned off for this server: only `false` means anything.
  sampling: optional(Schema.Boolean),
  elicitation: optional(Schema.Boolean),
  roots: optional(Schema.Boolean),
  // The revision to speak (`ServerSpec.protocolVersion`); absent, the fleet negotiates.
  protocolVersion: optional(
    Schema.Literal(...McpSchema.SUPPORTED_PROTOCOL_VERSIONS, ...McpSchema.MODERN_PROTOCOL_VERSIONS)
  )
}).annotations({ identifier: "ServerEntry" })

/** One server's entry as decoded. */
export type ServerEntry = typeof ServerEntry.Type
/** A `defaults` block as decoded. */
export type Defaults = typeof Defaults.Type

const Servers = Schema.Record({ key: Schema.String, value: ServerEntry })

// Where a value holds a key named `__proto__`. Decoding would drop such a key (assigning it
// sets a prototype instead), so a server, variable or tool pattern would vanish unseen.
const prototypeKeys = (value: unknown, path: Array<PropertyKey> = [], found: Array<Schema.FilterIssue> = []) => {
  if (typeof value !== "object" || value === null) return found
  for (const [key, field] of Object.entries(value)) {
    if (key === "__proto__") found.push({ path: [...path, key], message: `a key named "__proto__" cannot be used` })
    else prototypeKeys(field, [...path, key], found)
  }
  return found
}

// The server names that cannot stand in qualified names (Catalog's naming rule): a name
// holding `__`, or two that sanitize alike, would let one server's tools take another's names.
const serverNames = (value: unknown): Array<Schema.FilterIssue> => {
  if (typeof value !== "object" || value === null) return []
  const keys: Array<readonly [string, string]> = []
  for (const block of ["mcpServers", "servers"] as const) {
    const entries = (value as Record<string, unknown>)[block]
    if (typeof entries !== "object" || entries === null) continue
    // (`__proto__` has its own error.)
    for (const name of Object.keys(entries)) if (name !== "__proto__") keys.push([block, name])
  }
  const errors = Catalog.serverNameErrors(keys.map(([, name]) => name))
  return keys.flatMap(([block, name]) => {
    const error = errors.get(name)
    return error === undefined ? [] : [{ path: [block, name], message: `the server name '${name}' ${error}` }]
  })
}

// VS Code's prompts for `${input:id}`: what to say when asking, and whether to hide the answer.
const Input = Schema.Struct({
  id: Schema.String,
  type: optional(Schema.String),
  description: optional(Schema.String),
  password: optional(Schema.Boolean)
}).annotations({ identifier: "Input" })

/** A VS Code input as decoded. */
export type Input = typeof Input.Type

// The CLI's sampling: a program that answers sampling/createMessage (JSON in, JSON out).
const SamplingEntry = Schema.Struct({
  command: Schema.String.pipe(Schema.nonEmptyString()),
  args: optional(Schema.Array(Schema.String)),
  timeout: optional(PositiveMilliseconds)
}).annotations({ identifier: "Sampling" })

/** A `sampling` block as decoded. */
export type SamplingEntry = typeof SamplingEntry.Type

const ConfigFile = Schema.Unknown.pipe(
  Schema.filter((json) => [...prototypeKeys(json), ...serverNames(json)]),
  Schema.compose(
    Schema.Struct({
      mcpServers: optional(Servers),
      servers: optional(Servers),
      inputs: optional(Schema.Array(Input)),
      defaults: optional(Defaults),
      // What a drifted tool meets, for every server of the file that does not say (ToolPins.Mode).
      pinning: optional(ToolPins.Mode),
      // What hidden text in server text meets, for every server of the file that does not say.
      sanitize: optional(Sanitize),
      // Whether the file's servers are lazy, for every server of the file that does not say.
      lazy: optional(Schema.Boolean),
      policy: optional(PolicyEntry),
      sampling: optional(SamplingEntry)
    }).annotations({ identifier: "ConfigFile" }),
    { strict: false }
  )
)

/** A config file as decoded. */
export type ConfigFile = typeof ConfigFile.Type

/** Decodes a file's JSON, with all its errors. */
export const decode = Schema.decodeUnknownEither(ConfigFile, { errors: "all" })
