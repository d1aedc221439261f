/**
 * Choosing the revision of a connection. By default the server is probed with
 * `server/discover` (2026-07-28): a DiscoverResult, or an UnsupportedProtocolVersion error
 * naming what it supports, makes the connection modern; any other error (a JSON-RPC error
 * that is not one of the 2026-07-28 codes, an HTTP 4xx refusal without one, whose body the
 * transport already looked into), a success that is no DiscoverResult, or no answer while
 * the server answers a ping sent after the probe (or no answer at all by initializeTimeout)
 * means a server of an earlier revision,
 * and the connection falls back to the initialize handshake — as the spec's backward
 * compatibility rules say for stdio and HTTP alike. A connection that cannot be reached, is
 * closed or refuses our credentials fails as it is.
 *
 * @internal
 */
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as McpError from "../../McpError.js"
import * as McpSchema from "../../McpSchema.js"
import type * as Peer from "../../Peer.js"
import { decode } from "./decode.js"

/**
 * What we say about ourselves, and which revision to speak.
 */
export interface Hello {
  readonly clientInfo?: McpSchema.Implementation | undefined
  /**
   * A legacy revision: initialize asking for it, no probe. A modern one: only that one,
   * no fallback. Undefined: probe, then the newest both sides speak.
   */
  readonly protocolVersion?: McpSchema.Revision | undefined
  readonly capabilities?: McpSchema.ClientCapabilities | undefined
  readonly initializeTimeout?: Duration.DurationInput | undefined
  /** How long the probe may go unanswered before a ping asks whether the server is a legacy one. */
  readonly discoverTimeout?: Duration.DurationInput | undefined
  /** The log level a modern connection's requests ask for from the start. */
  readonly logLevel?: McpSchema.LoggingLevel | undefined
}

/**
 * What both sides agreed on: the revision, and the server's identity and capabilities (from
 * initialize, or from server/discover).
 */
export interface Agreed {
  readonly protocolVersion: McpSchema.Revision
  readonly capabilities: McpSchema.ServerCapabilities
  readonly serverInfo: McpSchema.Implementation
  readonly instructions: string | undefined
  /** The answer to server/discover, for a modern connection. */
  readonly discovery: McpSchema.DiscoverResult | undefined
}

/** Who we are, when the options do not say. */
export const defaultClientInfo: McpSchema.Implementation = { name: "mcp-fleet", version: "0.1.0" }

const isSupported = (version: string): version is McpSchema.ProtocolVersion =>
  (McpSchema.SUPPORTED_PROTOCOL_VERSIONS as ReadonlyArray<string>).includes(version)

const unsupported = (server: string, message: string) => Effect.fail(McpError.unsupported(server, { message }))

const spoken = [...McpSchema.MODERN_PROTOCOL_VERSIONS, ...McpSchema.SUPPORTED_PROTOCOL_VERSIONS].join(", ")

/**
 * Initializes the session; fails with Unsupported when the server chose a revision
 * mcp-fleet does not speak (and then sends nothing more).
 */
export const initialize = (peer: Peer.Peer, hello: Hello): Effect.Effect<Agreed, McpError.McpError> =>
  Effect.gen(function*() {
    const asked = hello.protocolVersion
    const answer = yield* peer.request(
      McpSchema.Method.Initialize,
      {
        protocolVersion: asked !== undefined && isSupported(asked) ? asked : McpSchema.LATEST_PROTOCOL_VERSION,
        capabilities: hello.capabilities ?? {},
        clientInfo: hello.clientInfo ?? defaultClientInfo
      },
      { timeout: hello.initializeTimeout ?? "30 seconds" }
    )
    const initialized = yield* decode(peer.server, McpSchema.Method.Initialize, McpSchema.InitializeResult, answer)
    const protocolVersion = initialized.protocolVersion
    if (!isSupported(protocolVersion)) {
      return yield* unsupported(
        peer.server,
        `the server chose protocol revision ${protocolVersion}; mcp-fleet speaks ${spoken}`
      )
    }
    yield* peer.notify(McpSchema.Method.Initialized)
    return {
      protocolVersion,
      capabilities: initialized.capabilities,
      serverInfo: initialized.serverInfo,
      instructions: initialized.instructions,
      discovery: undefined
    }
  })

/**
 * The `_meta` every request of a modern connection carries (2026-07-28).
 */
export const requestMeta = (
  protocolVersion: McpSchema.ModernProtocolVersion,
  hello: Hello,
  logLevel?: McpSchema.LoggingLevel | undefined
): Record<string, unknown> => ({
  [McpSchema.MetaKey.ProtocolVersion]: protocolVersion,
  [McpSchema.MetaKey.ClientInfo]: hello.clientInfo ?? defaultClientInfo,
  [McpSchema.MetaKey.ClientCapabilities]: hello.capabilities ?? {},
  ...(logLevel === undefined ? {} : { [McpSchema.MetaKey.LogLevel]: logLevel })
})

// What the probe learnt: a modern revision and the answer, the server's list of revisions
// to try again with, or that the server is a legacy one.
type Probed =
  | {
    readonly _tag: "Modern"
    readonly version: McpSchema.ModernProtocolVersion
    readonly discovery: McpSchema.DiscoverResult
  }
  | { readonly _tag: "Retry"; readonly supported: ReadonlyArray<string> }
  | { readonly _tag: "Legacy"; readonly why: string }

// Whether a failed probe tells a legacy server: any error but one of 2026-07-28's, a
// refusal over HTTP (not of our credentials), or silence.
const legacyBy = (error: McpError.McpError): string | undefined => {
  const reason = error.reason
  switch (reason._tag) {
    case "Protocol":
      return McpSchema.isModernErrorCode(reason.code) ? undefined : `error ${reason.code}`
    case "Http":
      return reason.status >= 400 && reason.status < 500 && !error.needsAuth ? `HTTP ${reason.status}` : undefined
    case "Timeout":
      return "no answer"
    default:
      return undefined
  }
}

const supportedOf = (error: McpError.McpError): ReadonlyArray<string> | undefined => {
  const reason = error.reason
  if (reason._tag !== "Protocol" || reason.code !== McpSchema.ModernErrorCode.UnsupportedProtocolVersion) {
    return undefined
  }
  const data = McpSchema.decodeUnknown(McpSchema.UnsupportedProtocolVersionData)(reason.data)
  return Either.isRight(data) ? data.right.supported : []
}

// The probe's answer; undefined when the server answered a ping sent after it but not it.
// A probe unanswered for `discoverTimeout` is not given up on: a server slow to start (a
// busy machine) is not one silent on methods it does not know. The ping tells them apart:
// a slow server answers the probe, sent first, before it; a legacy one answers only the
// ping (or neither, until initializeTimeout).
const discover = (
  peer: Peer.Peer,
  hello: Hello,
  version: McpSchema.ModernProtocolVersion
): Effect.Effect<Record<string, unknown> | undefined, McpError.McpError> => {
  const limit = { timeout: hello.initializeTimeout ?? "30 seconds" }
  // Any answer, an error one too, shows the server reads and answers requests.
  const alive = peer.request("ping", undefined, { ...limit, cancellable: false }).pipe(
    Effect.catchIf((error) => error.reason._tag === "Protocol", () => Effect.void),
    Effect.as(undefined)
  )
  return Effect.raceFirst(
    peer.request(McpSchema.DISCOVER_METHOD, { _meta: requestMeta(version, hello) }, limit),
    Effect.zipRight(Effect.sleep(hello.discoverTimeout ?? "5 seconds"), alive)
  )
}

const probe = (
  peer: Peer.Peer,
  hello: Hello,
  version: McpSchema.ModernProtocolVersion
): Effect.Effect<Probed, McpError.McpError> =>
  discover(peer, hello, version).pipe(
    // A success that is no DiscoverResult comes from a server that answers anything (some
    // legacy servers answer an unknown method with an empty result): a legacy one.
    Effect.map((result): Probed => {
      if (result === undefined) return { _tag: "Legacy", why: "no answer to server/discover, though it answers ping" }
      const discovery = decodeDiscovery(result)
      return Either.isRight(discovery)
        ? { _tag: "Modern", version, discovery: discovery.right }
        : { _tag: "Legacy", why: "an answer that is no DiscoverResult" }
    }),
    Effect.catchAll((error) => {
      const supported = supportedOf(error)
      if (supported !== undefined) return Effect.succeed<Probed>({ _tag: "Retry", supported })
      const why = legacyBy(error)
      return why === undefined ? Effect.fail(error) : Effect.succeed<Probed>({ _tag: "Legacy", why })
    })
  )

const decodeDiscovery = McpSchema.decodeUnknown(McpSchema.DiscoverResult)

// The discovery answer as what both sides agreed on.
const agreed = (
  server: string,
  version: McpSchema.ModernProtocolVersion,
  discovery: McpSchema.DiscoverResult
): Agreed => {
  const fromMeta = discovery._meta?.[McpSchema.MetaKey.ServerInfo] as McpSchema.Implementation | undefined
  return {
    protocolVersion: version,
    capabilities: discovery.capabilities,
    serverInfo: fromMeta ?? discovery.serverInfo ?? { name: server, version: "" },
    instructions: discovery.instructions,
    discovery
  }
}

const newestModern = (versions: ReadonlyArray<string>) =>
  McpSchema.MODERN_PROTOCOL_VERSIONS.find((v) => versions.includes(v))

/**
 * Agrees on a revision with the server, as `hello.protocolVersion` asks (see `Hello`).
 */
export const negotiate = (peer: Peer.Peer, hello: Hello): Effect.Effect<Agreed, McpError.McpError> =>
  Effect.gen(function*() {
    const forced = hello.protocolVersion
    if (forced !== undefined && !McpSchema.isModernVersion(forced)) return yield* initialize(peer, hello)
    let version: McpSchema.ModernProtocolVersion = forced ?? McpSchema.MODERN_PROTOCOL_VERSIONS[0]
    // One more attempt after an UnsupportedProtocolVersion error, with a version it named.
    for (let attempt = 0; attempt < 2; attempt++) {
      const probed = yield* probe(peer, hello, version)
      switch (probed._tag) {
        case "Modern": {
          const result = agreed(peer.server, version, probed.discovery)
          const supported = probed.discovery.supportedVersions
          if (supported.includes(version)) return result
          const other = newestModern(supported)
          if (other !== undefined && forced === undefined) return { ...result, protocolVersion: other }
          if (forced === undefined && supported.some(isSupported)) return yield* initialize(peer, hello)
          return yield* unsupported(
            peer.server,
            `the server speaks protocol revisions ${supported.join(", ")}; mcp-fleet speaks ${spoken}`
          )
        }
        case "Legacy": {
          if (forced !== undefined) {
            return yield* unsupported(peer.server, `the server refused ${version} (${probed.why})`)
          }
          yield* Effect.logDebug(`server '${peer.server}' is a legacy one (${probed.why}); initializing`).pipe(
            Effect.annotateLogs({ server: peer.server })
          )
          return yield* initialize(peer, hello)
        }
        case "Retry": {
          const other = newestModern(probed.supported)
          if (other !== undefined && (forced === undefined || other === forced)) {
            version = other
            continue
          }
          if (forced === undefined && probed.supported.some(isSupported)) return yield* initialize(peer, hello)
          return yield* unsupported(
            peer.server,
            `the server supports protocol revisions ${
              probed.supported.join(", ") || "(none named)"
            }; mcp-fleet speaks ${spoken}`
          )
        }
      }
    }
    return yield* unsupported(peer.server, `the server refused protocol revision ${version} twice`)
  })
