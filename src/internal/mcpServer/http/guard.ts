/**
 * The checks a request to the gateway's HTTP endpoint passes before anything else sees it:
 * Origin and Host against DNS rebinding, the bearer token (a static one, or an OAuth access
 * token checked by a `ResourceServer`), and for each method the headers and body size it must
 * come with. Each check answers with the refusal to send, or `undefined` to go on. Refusals
 * never repeat the token.
 *
 * With OAuth, a token the `ResourceServer` validated before is judged in the request's
 * callback; only a new token (a signature check, a JWKS fetch, an introspection) runs as a
 * fiber before the request goes on. Without `oauth` none of it runs.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as JsonRpc from "../../../JsonRpc.js"
import * as McpSchema from "../../../McpSchema.js"
import type * as ResourceServer from "../../../ResourceServer.js"
import { timingSafeEqual } from "../../crypto.js"
import * as Response from "./response.js"

/** A request's headers, by lower-case name. */
export type RequestHeaders = Readonly<Record<string, string | undefined>>

/** A refusal: a JSON-RPC error (id null) with an HTTP status. */
export const jsonRpcError = (status: number, code: number, message: string, headers: Record<string, string> = {}) =>
  Response.json(status, { jsonrpc: "2.0", id: null, error: { code, message } }, headers)

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]", "::1"])

/** The lower-case host name of an origin or Host header, if it has one. */
export const hostnameOf = (value: string): string | undefined => {
  try {
    return new URL(value.includes("://") ? value : `http://${value}`).hostname.toLowerCase()
  } catch {
    return undefined
  }
}

const normalizeOrigin = (origin: string) => origin.toLowerCase().replace(/\/$/, "")

/** What the endpoint-wide guard checks against. */
export interface GuardOptions {
  /** The address the server is bound to. */
  readonly host: string
  readonly token: Redacted.Redacted<string> | undefined
  readonly allowedOrigins: ReadonlyArray<string>
}

/**
 * The check every request passes: a foreign Origin or (bound to loopback) Host is 403, a
 * missing or wrong bearer token 401. A browser's preflight carries no credentials, so only
 * its Origin and Host are checked.
 */
export const make = (options: GuardOptions) => {
  const allowedOrigins = new Set(options.allowedOrigins.map(normalizeOrigin))
  const allowedHosts = new Set(options.allowedOrigins.flatMap((origin) => hostnameOf(origin) ?? []))
  // Bound to a loopback address, Host must name one too (or an allowed origin's host); bound
  // elsewhere, the operator chose to be reachable by other names.
  const checkHost = LOOPBACK.has(options.host.toLowerCase())
  const token = options.token

  return (headers: RequestHeaders, preflight: boolean): Response.Answer | undefined => {
    const origin = headers["origin"]
    if (origin !== undefined) {
      const host = hostnameOf(origin)
      if (!allowedOrigins.has(normalizeOrigin(origin)) && (host === undefined || !LOOPBACK.has(host))) {
        return jsonRpcError(403, JsonRpc.ErrorCode.InvalidRequest, `Forbidden: Origin ${origin} is not allowed`)
      }
    }
    if (checkHost) {
      const host = hostnameOf(headers["host"] ?? "")
      if (host === undefined || (!LOOPBACK.has(host) && !allowedHosts.has(host))) {
        return jsonRpcError(403, JsonRpc.ErrorCode.InvalidRequest, `Forbidden: Host ${headers["host"]} is not allowed`)
      }
    }
    if (token === undefined || preflight) return undefined
    const given = bearerToken(headers)
    if (given !== undefined && timingSafeEqual(given, Redacted.value(token))) return undefined
    return jsonRpcError(401, JsonRpc.ErrorCode.InvalidRequest, UNAUTHORIZED, {
      "www-authenticate": given === undefined
        ? `Bearer realm="mcp-fleet"`
        : `Bearer realm="mcp-fleet", error="invalid_token"`
    })
  }
}

const UNAUTHORIZED = "Unauthorized: a valid bearer token is required"

const bearerToken = (headers: RequestHeaders): string | undefined =>
  /^Bearer\s+(.+)$/i.exec((headers["authorization"] ?? "").trim())?.[1]

/** Who a request's access token speaks for: the principal a `ResourceServer` validated. */
export type Caller = ResourceServer.Principal

/**
 * Whether a request may use a session opened by `owner`: by the same user (issuer, subject)
 * through the same client; anyone when the session was opened without OAuth.
 */
export const sameCaller = (owner: Caller | undefined, caller: Caller | undefined): boolean =>
  owner === undefined ||
  (caller !== undefined && owner.issuer === caller.issuer && owner.subject === caller.subject &&
    owner.clientId === caller.clientId)

/** The verdict of the OAuth check: go on as the principal, the refusal, or one to wait for. */
export type Verdict =
  | ResourceServer.Principal
  | Response.Answer
  | Effect.Effect<ResourceServer.Principal | Response.Answer>

/**
 * The OAuth check of a request to the endpoint, by a resource server: a request without a
 * bearer token is 401 with the challenge that leads to the metadata; a bad token 401
 * `invalid_token`, one without the required scopes 403 `insufficient_scope`, and 503 when
 * the authorization server could not be asked. A token validated before is judged at once;
 * only a new one is an Effect (a signature check, a JWKS fetch or an introspection).
 */
export const oauth = (server: ResourceServer.ResourceServer) => {
  const refuse = (error: ResourceServer.ResourceServerError | undefined): Response.Answer => {
    const challenge = { "www-authenticate": server.challenge(error) }
    switch (error?.reason) {
      case undefined:
        return jsonRpcError(401, JsonRpc.ErrorCode.InvalidRequest, UNAUTHORIZED, challenge)
      case "invalid_token":
        return jsonRpcError(401, JsonRpc.ErrorCode.InvalidRequest, `Unauthorized: ${error.message}`, challenge)
      case "insufficient_scope":
        return jsonRpcError(403, JsonRpc.ErrorCode.InvalidRequest, `Forbidden: ${error.message}`, challenge)
      case "unavailable":
        return jsonRpcError(503, JsonRpc.ErrorCode.InternalError, "the token could not be checked; try again later")
    }
  }
  const later = (token: string) =>
    server.verify(token).pipe(
      Effect.tapErrorTag("ResourceServerError", (error) =>
        error.reason === "unavailable" ? Effect.logWarning(`gateway: ${error.message}`) : Effect.void),
      Effect.catchAll((error) =>
        Effect.succeed(refuse(error))
      )
    )
  return (headers: RequestHeaders): Verdict => {
    const token = bearerToken(headers)
    if (token === undefined) return refuse(undefined)
    const known = server.check(token)
    if (known === undefined) return later(token)
    return "reason" in known ? refuse(known) : known
  }
}

/** The Protected Resource Metadata of `server` (RFC 9728), for a GET of one of its paths. */
export const metadata = (server: ResourceServer.ResourceServer): Response.Answer =>
  Response.json(200, server.metadata, { "cache-control": "max-age=300" })

const accepts = (headers: RequestHeaders, type: string) => {
  const accept = headers["accept"]
  return accept === undefined || accept.includes(type) || accept.includes("*/*")
}

/** 413 for a body over `maxMessageBytes`; the connection closes rather than read the rest. */
export const tooLarge = (maxMessageBytes: number) =>
  jsonRpcError(413, JsonRpc.ErrorCode.InvalidRequest, `the body exceeds ${maxMessageBytes} bytes`, {
    connection: "close"
  })

/**
 * 408 for a body that did not all come within `timeoutMs` (a client trickling bytes holds a
 * connection and a buffer); the connection closes rather than wait for the rest.
 */
export const tooSlow = (timeoutMs: number) =>
  jsonRpcError(408, JsonRpc.ErrorCode.InvalidRequest, `the body did not arrive within ${timeoutMs} ms`, {
    connection: "close"
  })

/** 400 for a body that could not be read. */
export const unreadable = jsonRpcError(400, JsonRpc.ErrorCode.ParseError, "the body could not be read")

/**
 * The headers of a POST: it must accept JSON or an event stream (406), send JSON (415), and
 * announce no more than `maxMessageBytes` (413; the body read is checked again).
 */
export const checkPost = (headers: RequestHeaders, maxMessageBytes: number): Response.Answer | undefined => {
  if (!accepts(headers, "application/json") && !accepts(headers, "text/event-stream")) {
    return jsonRpcError(
      406,
      JsonRpc.ErrorCode.InvalidRequest,
      "Not Acceptable: accept application/json and text/event-stream"
    )
  }
  const contentType = headers["content-type"]
  if (contentType !== undefined && !contentType.toLowerCase().includes("application/json")) {
    return jsonRpcError(415, JsonRpc.ErrorCode.InvalidRequest, "Unsupported Media Type: send application/json")
  }
  if (Number(headers["content-length"] ?? 0) > maxMessageBytes) return tooLarge(maxMessageBytes)
  return undefined
}

/** A GET opens an event stream, so it must accept one (406). */
export const checkGet = (headers: RequestHeaders): Response.Answer | undefined =>
  (headers["accept"] ?? "").includes("text/event-stream")
    ? undefined
    : jsonRpcError(406, JsonRpc.ErrorCode.InvalidRequest, "Not Acceptable: the GET stream is text/event-stream")

/** A `MCP-Protocol-Version` header naming a revision the gateway does not speak is 400. */
export const checkVersion = (headers: RequestHeaders): Response.Answer | undefined => {
  const version = headers["mcp-protocol-version"]
  if (version === undefined || (McpSchema.SUPPORTED_PROTOCOL_VERSIONS as ReadonlyArray<string>).includes(version)) {
    return undefined
  }
  return jsonRpcError(
    400,
    JsonRpc.ErrorCode.InvalidRequest,
    `Bad Request: unsupported protocol version ${version} (supported: ${
      McpSchema.SUPPORTED_PROTOCOL_VERSIONS.join(", ")
    })`
  )
}
