// SSRF through OAuth discovery: the authorization client of an MCP server that is not on a
// private, loopback or link-local address never requests such an address (metadata, token,
// registration), checked on the address it connects to, not on the name it was given.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { discover } from "../../../src/internal/oauth/discovery.js"
import { isPrivateAddress } from "../../../src/internal/oauth/http.js"
import * as NodeOAuth from "../../../src/NodeOAuth.js"

// A local server counting the requests it gets, answering metadata to any.
const counting = Effect.acquireRelease(
  Effect.async<{ readonly port: number; readonly hits: () => number; readonly close: () => void }>((resume) => {
    let hits = 0
    const server = http.createServer((_request, response) => {
      hits++
      response.writeHead(200, { "content-type": "application/json" })
      response.end(
        JSON.stringify({ resource: "https://mcp.example.com/mcp", authorization_servers: ["http://127.0.0.1"] })
      )
    })
    server.listen(0, "127.0.0.1", () =>
      resume(Effect.succeed({
        port: (server.address() as AddressInfo).port,
        hits: () => hits,
        close: () => server.close()
      })))
  }),
  (server) => Effect.sync(server.close)
)

describe("private addresses", () => {
  it("are told apart from public ones, IPv4 and IPv6, mapped forms included", () => {
    for (
      const ip of ["127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "0.0.0.0", "100.64.0.1"]
    ) {
      expect(isPrivateAddress(ip), ip).toBe(true)
    }
    for (const ip of ["::1", "[::1]", "::", "fd00::1", "fe80::1", "::ffff:127.0.0.1", "::ffff:a9fe:a9fe"]) {
      expect(isPrivateAddress(ip), ip).toBe(true)
    }
    for (const ip of ["8.8.8.8", "1.1.1.1", "172.32.0.1", "2606:4700::1111", "::ffff:8.8.8.8"]) {
      expect(isPrivateAddress(ip), ip).toBe(false)
    }
  })
})

describe("OAuth discovery of a public MCP server", () => {
  it.scopedLive("refuses resource metadata on a loopback address named by the challenge", () =>
    Effect.gen(function*() {
      const local = yield* counting
      const exit = yield* Effect.exit(discover("public", "https://mcp.example.com/mcp", {
        status: 401,
        scope: undefined,
        error: undefined,
        resourceMetadata: `http://127.0.0.1:${local.port}/.well-known/oauth-protected-resource`
      }))
      expect(Exit.isFailure(exit)).toBe(true)
      expect(local.hits()).toBe(0)
    }))

  it.scopedLive("refuses a name that resolves to a private address, checking the address connected to", () =>
    Effect.gen(function*() {
      const local = yield* counting
      // The name looks public; DNS answers loopback (a rebinding attacker's answer).
      const guard = NodeOAuth.makeNetworkGuard(async () => ["127.0.0.1"])
      const url = `http://rebind.example:${local.port}/.well-known/oauth-authorization-server`
      const refused = yield* Effect.either(Effect.tryPromise(() => guard.fetch(false)(url)))
      expect(refused._tag).toBe("Left")
      const cause = (refused as { left: { cause: Error & { cause?: Error } } }).left.cause
      expect(`${cause.message}: ${cause.cause?.message}`).toContain("private, loopback or link-local")
      expect(local.hits()).toBe(0)
      expect(yield* Effect.promise(() => guard.isPrivate("rebind.example"))).toBe(true)

      // For a server that is itself on such an address, the same guard connects.
      const allowed = yield* Effect.promise(() => guard.fetch(true)(url.replace("rebind.example", "127.0.0.1")))
      expect(allowed.status).toBe(200)
      expect(local.hits()).toBe(1)
    }))
})
