// OAuth in the health check and first contact, as users run them: on a fresh token store,
// `servers` gets a client-credentials server its token (it is Ready, never `Failed … 401`),
// `test` uses the stored token, and a server that needs a person says so plainly, with
// where to authorize.
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
// @ts-expect-error: a JavaScript fixture without types
import { start } from "../fixtures/oauth-server.mjs"
import { config, leavesNothing, run, tempDir } from "../support/cli.js"

const mark = `oauth-health-${process.pid}-${Date.now()}`

interface AuthServer {
  readonly base: string
  readonly state: { access: string | undefined }
  readonly close: () => Promise<void>
}

// A protected MCP server (initialize, tools/list, ping) taking the authorization server's token.
const resource = (as: AuthServer) => {
  const server = http.createServer((req, res) => {
    let body = ""
    req.on("data", (chunk) => body += chunk)
    req.on("end", () => {
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      if (req.url === "/.well-known/oauth-protected-resource/mcp") {
        res.writeHead(200, { "content-type": "application/json" })
        return res.end(JSON.stringify({ resource: `${origin}/mcp`, authorization_servers: [as.base] }))
      }
      if (req.headers.authorization !== `Bearer ${as.state.access}` || as.state.access === undefined) {
        res.writeHead(401, {
          "www-authenticate": `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`
        })
        return res.end()
      }
      if (req.method !== "POST") {
        res.writeHead(405)
        return res.end()
      }
      const message = JSON.parse(body)
      if (message.id === undefined) {
        res.writeHead(202)
        return res.end()
      }
      const result = message.method === "initialize"
        ? { protocolVersion: "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "guarded", version: "1" } }
        : message.method === "tools/list"
        ? { tools: [{ name: "hello", inputSchema: { type: "object" } }] }
        : {}
      res.writeHead(200, { "content-type": "application/json" })
      res.end(JSON.stringify({ jsonrpc: "2.0", id: message.id, result }))
    })
  })
  return new Promise<{ url: string; close: () => void }>((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
        close: () => server.close()
      }))
  )
}

const servers: Array<{ close: () => unknown }> = []
let machines: { url: string; close: () => void }
let people: { url: string; close: () => void }

beforeAll(async () => {
  const forMachines = await start({ clientCredentials: { clientId: "cc-client", clientSecret: "cc-secret-9f3a1c" } })
  const forPeople = await start()
  machines = await resource(forMachines)
  people = await resource(forPeople)
  servers.push(forMachines, forPeople, machines, people)
})

afterAll(async () => {
  for (const server of servers) await server.close()
  leavesNothing(mark)
})

describe("OAuth in servers and test", () => {
  it("a client-credentials server is Ready on a fresh token store, and test uses the stored token", async () => {
    const dir = tempDir({
      ".mcp.json": config({
        remote: { url: machines.url, oauth: { clientId: "cc-client", clientSecret: "cc-secret-9f3a1c" } }
      })
    })
    const env = { XDG_CONFIG_HOME: tempDir() }
    const listed = await run(["servers", "--json"], { cwd: dir, mark, env })
    expect(JSON.parse(listed.stdout)).toMatchObject([{ name: "remote", state: "Ready", tools: 1 }])
    expect(listed.code).toBe(0)

    const tested = await run(["test", "remote", "--json"], { cwd: dir, mark, env })
    expect(JSON.parse(tested.stdout)).toMatchObject({ server: "remote", ok: true })
    expect(tested.code).toBe(0)
    expect(listed.stdout + tested.stdout + tested.stderr).not.toContain("cc-secret-9f3a1c")
  })

  it("a server that needs a person is NeedsAuth, said plainly, with its authorization URL", async () => {
    const dir = tempDir({ ".mcp.json": config({ remote: { url: people.url } }) })
    const env = { XDG_CONFIG_HOME: tempDir() }
    const listed = await run(["servers", "--json"], { cwd: dir, mark, env })
    const [status] = JSON.parse(listed.stdout)
    expect(status).toMatchObject({ name: "remote", state: "NeedsAuth" })
    expect(status.detail).toBe(
      "NeedsAuth: server 'remote' needs authorization (it answered HTTP 401): run 'mcp-fleet auth remote'"
    )
    expect(status.authorizationUrl).toMatch(/\/authorize\?/)
    expect(status.error.message).not.toContain("answered authorization")

    const text = await run(["servers"], { cwd: dir, mark, env })
    expect(text.stdout).not.toMatch(/Failed .*401/)
    expect(text.stdout).toContain("run 'mcp-fleet auth remote'")
  })
})
