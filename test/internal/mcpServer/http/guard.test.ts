import { describe, expect, it } from "@effect/vitest"
import * as Redacted from "effect/Redacted"
import * as Cors from "../../../../src/internal/mcpServer/http/cors.js"
import * as Guard from "../../../../src/internal/mcpServer/http/guard.js"

const guard = Guard.make({
  host: "127.0.0.1",
  token: Redacted.make("s3cret"),
  allowedOrigins: ["https://app.example.com/"]
})
const host = { host: "127.0.0.1:8080", authorization: "Bearer s3cret" }

describe("gateway guard", () => {
  it("refuses foreign Origins and Hosts (DNS rebinding), allows loopback and the allowed ones", () => {
    expect(guard(host, false)).toBeUndefined()
    expect(guard({ ...host, origin: "http://localhost:3000" }, false)).toBeUndefined()
    expect(guard({ ...host, origin: "https://APP.example.com" }, false)).toBeUndefined()
    expect(guard({ ...host, origin: "https://evil.example.com" }, false)?.status).toBe(403)
    expect(guard({ ...host, host: "evil.example.com" }, false)?.status).toBe(403)
    expect(guard({ ...host, host: "app.example.com" }, false)).toBeUndefined()
    expect(guard({ authorization: host.authorization }, false)?.status).toBe(403)
    // Bound elsewhere, any Host is the operator's choice.
    expect(Guard.make({ host: "0.0.0.0", token: undefined, allowedOrigins: [] })({ host: "box.lan" }, false))
      .toBeUndefined()
  })

  it("wants the bearer token, except of a preflight, and never repeats it", () => {
    const missing = guard({ host: host.host }, false)!
    expect(missing.status).toBe(401)
    expect(missing.headers["www-authenticate"]).toBe(`Bearer realm="mcp-fleet"`)
    const wrong = guard({ host: host.host, authorization: "Bearer nope" }, false)!
    expect(wrong.status).toBe(401)
    expect(wrong.headers["www-authenticate"]).toContain(`error="invalid_token"`)
    expect(JSON.stringify(wrong)).not.toContain("s3cret")
    expect(guard({ host: host.host, authorization: "bearer   s3cret " }, false)).toBeUndefined()
    expect(guard({ host: host.host }, true)).toBeUndefined()
  })

  it("checks a POST's Accept, Content-Type and announced size, a GET's Accept, and the revision", () => {
    const json = { accept: "application/json, text/event-stream", "content-type": "application/json" }
    expect(Guard.checkPost(json, 10)).toBeUndefined()
    expect(Guard.checkPost({}, 10)).toBeUndefined()
    expect(Guard.checkPost({ ...json, accept: "text/html" }, 10)?.status).toBe(406)
    expect(Guard.checkPost({ ...json, "content-type": "text/plain" }, 10)?.status).toBe(415)
    expect(Guard.checkPost({ ...json, "content-length": "11" }, 10)?.status).toBe(413)
    expect(Guard.checkGet({ accept: "text/event-stream" })).toBeUndefined()
    expect(Guard.checkGet({ accept: "application/json" })?.status).toBe(406)
    expect(Guard.checkVersion({})).toBeUndefined()
    expect(Guard.checkVersion({ "mcp-protocol-version": "2025-11-25" })).toBeUndefined()
    expect(Guard.checkVersion({ "mcp-protocol-version": "1999-01-01" })?.status).toBe(400)
    expect(Guard.checkVersion({ "mcp-protocol-version": "constructor" })?.status).toBe(400)
  })

  it("CORS: an allowed Origin may read the session id; its preflight is answered", () => {
    expect(Cors.headers(undefined)).toEqual({})
    expect(Cors.headers("https://app.example.com")).toMatchObject({
      "access-control-allow-origin": "https://app.example.com",
      "access-control-expose-headers": "mcp-session-id, www-authenticate"
    })
    const preflight = Cors.preflight("https://app.example.com")
    expect(preflight.status).toBe(204)
    expect(preflight.headers["access-control-allow-headers"]).toContain("last-event-id")
  })
})
