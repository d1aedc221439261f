/**
 * The checks a request to the gateway's HTTP endpoint passes before anything else sees it:
 * Origin and Host against DNS rebinding, the bearer token, and for each method the headers
 * and body size it must come with. Each check answers with the refusal to send, or
 * `undefined` to go on. Refusals never repeat the token.
 *
 * @internal
 */
import * as Redacted from "effect/Redacted"
import { createHash, timingSafeEqual } from "node:crypto"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpSchema from "../../McpSchema.js"
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

// Hashing both sides first gives equal lengths, so the comparison's time says nothing.
const sameSecret = (given: string, expected: string): boolean =>
  timingSafeEqual(createHash("sha256").update(given).digest(), createHash("sha256").update(expected).digest())

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
    const match = /^Bearer\s+(.+)$/i.exec((headers["authorization"] ?? "").trim())
    if (match !== null && sameSecret(match[1]!, Redacted.value(token))) return undefined
    return jsonRpcError(401, JsonRpc.ErrorCode.InvalidRequest, "Unauthorized: a valid bearer token is required", {
      "www-authenticate": match === null
        ? `Bearer realm="mcp-fleet"`
        : `Bearer realm="mcp-fleet", error="invalid_token"`
    })
  }
}

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
