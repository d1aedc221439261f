import { describe, expect, it } from "vitest"
import * as Challenge from "../../../src/internal/oauth/challenge.js"
import {
  authorizationServerMetadataUrls,
  resourceMatches,
  resourceMetadataUrls
} from "../../../src/internal/oauth/discovery.js"
import { selectScope, unionScopes } from "../../../src/internal/oauth/serverAuth.js"

describe("WWW-Authenticate", () => {
  it("reads Bearer's parameters, quoted or not, among other challenges", () => {
    const refusal = Challenge.refusal(
      403,
      `Basic realm="x", Bearer error="insufficient_scope", scope="a b", resource_metadata="https://r.example/.well-known/oauth-protected-resource/mcp"`
    )
    expect(refusal).toEqual({
      status: 403,
      error: "insufficient_scope",
      scope: "a b",
      resourceMetadata: "https://r.example/.well-known/oauth-protected-resource/mcp"
    })
  })

  it("takes resource_metadata from a challenge that is not Bearer", () => {
    expect(Challenge.refusal(401, `DPoP resource_metadata="https://r.example/prm", algs="ES256"`).resourceMetadata)
      .toBe("https://r.example/prm")
    expect(Challenge.refusal(401, undefined)).toEqual({
      status: 401,
      error: undefined,
      scope: undefined,
      resourceMetadata: undefined
    })
  })
})

describe("discovery order", () => {
  it("protected-resource metadata: the challenge's, then path-aware, then root", () => {
    expect(resourceMetadataUrls(new URL("https://r.example/tenant/mcp"), "https://r.example/prm")).toEqual([
      "https://r.example/prm",
      "https://r.example/.well-known/oauth-protected-resource/tenant/mcp",
      "https://r.example/.well-known/oauth-protected-resource"
    ])
    expect(resourceMetadataUrls(new URL("https://r.example/"), undefined)).toEqual([
      "https://r.example/.well-known/oauth-protected-resource"
    ])
  })

  it("authorization-server metadata in the MCP spec's order, path-aware variants included", () => {
    expect(authorizationServerMetadataUrls(new URL("https://as.example/tenant1"))).toEqual([
      "https://as.example/.well-known/oauth-authorization-server/tenant1",
      "https://as.example/.well-known/openid-configuration/tenant1",
      "https://as.example/tenant1/.well-known/openid-configuration"
    ])
    expect(authorizationServerMetadataUrls(new URL("https://as.example"))).toEqual([
      "https://as.example/.well-known/oauth-authorization-server",
      "https://as.example/.well-known/openid-configuration"
    ])
  })

  it("a resource stands for the server's URL or a parent of it, on the same origin", () => {
    const server = new URL("https://r.example/api/mcp")
    expect(resourceMatches("https://r.example/api/mcp", server)).toBe(true)
    expect(resourceMatches("https://r.example", server)).toBe(true)
    expect(resourceMatches("https://r.example/api", server)).toBe(true)
    expect(resourceMatches("https://r.example/ap", server)).toBe(false)
    expect(resourceMatches("https://evil.example/api/mcp", server)).toBe(false)
  })
})

describe("scopes", () => {
  const discovered = (scopesSupported?: Array<string>, resourceScopes?: Array<string>) => ({
    resource: "https://r.example/mcp",
    as: { issuer: "https://as.example", ...(scopesSupported ? { scopes_supported: scopesSupported } : {}) },
    resourceScopes
  })

  it("configured, else the challenge's, else the resource's, else none; offline_access when supported", () => {
    const challenge = Challenge.refusal(401, `Bearer scope="read"`)
    expect(selectScope({ scopes: ["x"] }, challenge, discovered())).toBe("x")
    expect(selectScope({}, challenge, discovered(undefined, ["all"]))).toBe("read")
    expect(selectScope({}, undefined, discovered(undefined, ["all"]))).toBe("all")
    expect(selectScope({}, undefined, discovered())).toBeUndefined()
    expect(selectScope({}, challenge, discovered(["read", "offline_access"]))).toBe("read offline_access")
  })

  it("a step-up asks for the union of what was granted and what is challenged", () => {
    expect(unionScopes("a b", "b c")).toBe("a b c")
    expect(unionScopes(undefined, undefined)).toBeUndefined()
  })
})
