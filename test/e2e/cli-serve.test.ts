// The `mcp-fleet` CLI end to end (see cli.test.ts): `watch`, `serve` (the gateway) under the
// official SDK client, the processes `serve --stdio` leaves (none, however its host ends it),
// and the secrets no command shows.
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import {
  CLI,
  cliEnv,
  config,
  FIXTURES,
  leavesNothing,
  MARK,
  marked,
  realServers,
  run,
  SERVERS,
  start,
  tempDir
} from "../support/cli.js"
import { eventually } from "../support/eventually.js"
import { hangGuard } from "../support/guard.js"
import { bound, groupMembers, guardianOf, procState, within } from "../support/processes.js"

const mark = `cli-serve-${process.pid}-${Date.now()}`
const servers = realServers(mark)
const json = (text: string) => JSON.parse(text) as any

// Every server any command started has ended with it.
afterAll(() => leavesNothing(mark))

describe("watch", () => {
  it("prints events as they happen and follows an edit of the config", async () => {
    const dir = tempDir({ ".mcp.json": config({ memory: servers.memory }) })
    const watching = start(["watch", "--json"], { cwd: dir, mark })
    const ready = (server: string) => (line: string) => {
      const event = JSON.parse(line)
      return event.type === "ServerStateChanged" && event.server === server && event.state === "Ready"
    }
    await watching.line(ready("memory"), "memory ready")
    const added = await run([
      "add",
      "notes",
      "--env",
      `MEMORY_FILE_PATH=${path.join(tempDir(), "notes.jsonl")}`,
      "--env",
      `${MARK}=${mark}`,
      "--",
      process.execPath,
      SERVERS.memory
    ], { cwd: dir, mark })
    expect(added.code).toBe(0)
    const applied = JSON.parse(
      await watching.line((line) => JSON.parse(line).type === "ConfigApplied" && line.includes("notes"), "the edit")
    )
    expect(applied).toMatchObject({ added: ["notes"], removed: [], unchanged: ["memory"] })
    await watching.line(ready("notes"), "notes ready")
    expect(await watching.stop()).toBe(0)
  })

  it("shows an invalid edit and a deleted file at the default log level, and keeps the servers", async () => {
    const dir = tempDir({ ".mcp.json": config({ memory: servers.memory }) })
    const file = path.join(dir, ".mcp.json")
    const watching = start(["watch"], { cwd: dir, mark })
    await watching.line((line) => line.includes("memory: Connecting → Ready"), "memory ready")
    fs.writeFileSync(file, config({ memory: { ...servers.memory, command: 5 } }))
    await watching.line(
      (line) =>
        line.endsWith(
          `config: invalid config file ${file}: mcpServers.memory.command: expected a string, got 5; ` +
            "keeping the last good config"
        ),
      "the invalid edit"
    )
    fs.rmSync(file)
    await watching.line(
      (line) => line.endsWith(`config: config file ${file} was deleted; keeping the last good config until it is back`),
      "the deletion"
    )
    expect(await watching.stop()).toBe(0)
    // Nothing was stopped or applied while the file was broken or gone.
    const after = watching.stdout().slice(watching.stdout().indexOf("invalid config file"))
    expect(after).not.toMatch(/→|config: (added|removed)/)
  })
})

describe("serve (the gateway through the CLI)", () => {
  const pair = tempDir({
    ".mcp.json": config({ memory: servers.memory, everything: servers.everything })
  })

  it("over stdio, the official SDK client lists and calls tools of two servers", async () => {
    const client = new Client({ name: "cli-test", version: "1.0.0" })
    const transport = new StdioClientTransport({
      command: CLI[0],
      args: [...CLI.slice(1), "serve", "--stdio"],
      cwd: pair,
      env: { ...process.env, ...cliEnv(), [MARK]: mark } as Record<string, string>,
      stderr: "pipe"
    })
    await client.connect(transport)
    try {
      // As over HTTP below: a server ready after the settle window shows in a later list.
      const names = await eventually(
        async () => (await client.listTools()).tools.map((tool) => tool.name),
        (names) => names.includes("mcp__memory__read_graph") && names.includes("mcp__everything__echo"),
        hangGuard(10_000)
      )
      expect(names).toContain("mcp__memory__read_graph")
      expect(names).toContain("mcp__everything__echo")
      const echo = await client.callTool({ name: "mcp__everything__echo", arguments: { message: "via gateway" } })
      expect(echo.content).toEqual([{ type: "text", text: "Echo: via gateway" }])
      const graph = await client.callTool({ name: "mcp__memory__read_graph", arguments: {} })
      expect(graph.isError).not.toBe(true)
    } finally {
      await client.close()
    }
  })

  it("over HTTP, with the URL printed by --json", async () => {
    const serving = start(["serve", "--http", "0", "--json"], { cwd: pair, mark })
    try {
      const url = JSON.parse(await serving.line((line) => line.includes("\"url\""), "the URL")).url as string
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
      const client = new Client({ name: "cli-test", version: "1.0.0" })
      await client.connect(new StreamableHTTPClientTransport(new URL(url)))
      // The list holds the servers ready by the end of the settle window (3 s): on a busy machine
      // server-everything can come after it, and then shows in a later list.
      const names = await eventually(
        async () => (await client.listTools()).tools.map((tool) => tool.name),
        (names) => names.includes("mcp__everything__echo"),
        hangGuard(10_000)
      )
      expect(names).toContain("mcp__everything__echo")
      const echo = await client.callTool({ name: "mcp__everything__echo", arguments: { message: "over http" } })
      expect(echo.content).toEqual([{ type: "text", text: "Echo: over http" }])
      await client.close()
    } finally {
      expect(await serving.stop()).toBe(0)
    }
  })

  it("prints an invalid edit of the config at the default log level", async () => {
    const dir = tempDir({ ".mcp.json": config({ memory: servers.memory }) })
    const file = path.join(dir, ".mcp.json")
    const serving = start(["serve", "--http", "0", "--json"], { cwd: dir, mark })
    try {
      await serving.line((line) => line.includes("\"url\""), "the URL")
      fs.writeFileSync(file, "{ not json")
      await serving.errorLine(
        (line) => line.startsWith(`mcp-fleet: warning: invalid config file ${file}: not valid JSON`),
        "the warning"
      )
    } finally {
      expect(await serving.stop()).toBe(0)
    }
  })
})

describe("serve --stdio leaves no process behind, however its host ends it", () => {
  // Each wait below looks for as long as the load makes a bound (`bound` adds 3 × lateness, which is
  // seconds on a busy machine): a shorter look would give up before the bound it checks.
  // A server that ignores stdin's end and SIGTERM, with a grandchild in its group, and one
  // whose children left its group (detached, setsid, a double-forked daemon).
  const unruly = tempDir({
    ".mcp.json": config({
      stubborn: marked({ command: process.execPath, args: [FIXTURES.stubborn] }, mark),
      escaping: marked({ command: process.execPath, args: [FIXTURES.escaping] }, mark)
    })
  })

  /** The official SDK client on `serve --stdio`, and every process of the two servers. */
  const connect = async () => {
    const transport = new StdioClientTransport({
      command: CLI[0],
      args: [...CLI.slice(1), "serve", "--stdio"],
      cwd: unruly,
      env: { ...process.env, ...cliEnv(), [MARK]: mark } as Record<string, string>,
      stderr: "pipe"
    })
    const client = new Client({ name: "cli-test", version: "1.0.0" })
    await client.connect(transport)
    const pids = async (tool: string) =>
      JSON.parse((await client.callTool({ name: tool, arguments: {} }) as any).content[0].text)
    const stubborn = await pids("mcp__stubborn__pids")
    const escaping = await pids("mcp__escaping__pids")
    const groups = [stubborn.server, escaping.server] as Array<number>
    const escaped = [escaping.detached, escaping.setsid, escaping.daemon] as Array<number>
    const gone = () =>
      groups.every((pgid) => groupMembers(pgid).length === 0) && escaped.every((pid) => procState(pid) !== "alive")
    expect(gone()).toBe(false)
    return { client, gateway: transport.pid!, gone }
  }

  it("a one-shot command ends the children that left a server's group with it", async () => {
    const result = await run(["call", "escaping", "pids", "--json"], { cwd: unruly, mark })
    expect(result.code).toBe(0)
    const pids = JSON.parse(json(result.stdout).content[0].text)
    // The command returned after the stop: nothing is left, not even for a moment.
    expect(groupMembers(pids.server)).toEqual([])
    expect([pids.detached, pids.setsid, pids.daemon].map(procState).filter((state) => state === "alive")).toEqual([])
  }, hangGuard(15_000))

  it("client.close(): every server is gone within 1.5 s of stdin's end, before the SDK's SIGTERM", async () => {
    const { client, gone } = await connect()
    const slack = bound(0)
    const start = performance.now()
    const closed = client.close().then(() => performance.now() - start)
    expect(await within(gone, hangGuard(10_000))).toBeLessThan(1500 + (await slack))
    // The gateway exited by itself: the SDK sends SIGTERM after 2 s.
    expect(await closed).toBeLessThan(2000 + (await slack))
  })

  it("SIGTERM: every server is gone within 1 s", async () => {
    const { client, gateway, gone } = await connect()
    const limit = bound(1000)
    process.kill(gateway, "SIGTERM")
    expect(await within(gone, hangGuard(10_000))).toBeLessThan(await limit)
    await client.close()
  })

  it("SIGKILL: the guardian ends every server within 3 s, and then itself", async () => {
    const { client, gateway, gone } = await connect()
    const guardian = guardianOf(gateway)
    expect(guardian).toBeDefined()
    const limit = bound(3000)
    process.kill(gateway, "SIGKILL")
    expect(await within(gone, hangGuard(10_000))).toBeLessThan(await limit)
    expect(await within(() => procState(guardian!) !== "alive", hangGuard(10_000))).toBeDefined()
    await client.close()
  })
})

describe("secrets", () => {
  const TOKEN = "tok-7c1e94b0d2a5"
  const AUTH = "auth-5b2d8e61f0c3"
  const KEY = "key-e40a9c3d71b6"
  const PASSWORD = "pw-9f03b7a1c5e2"
  const echoSecret = path.join(path.dirname(FIXTURES.failing), "echo-secret.mjs")
  const echo = (args: Array<string>) => ({
    command: process.execPath,
    args: [echoSecret, ...args],
    env: { API_TOKEN: "${API_TOKEN}" },
    restart: { maxAttempts: 1 }
  })
  const dir = tempDir({
    ".mcp.json": config({
      remote: {
        url: `http://user:${PASSWORD}@127.0.0.1:1/mcp?token=${TOKEN}`,
        headers: { Authorization: "Bearer ${REMOTE_AUTH}", "X-Key": KEY },
        restart: { maxAttempts: 1 }
      },
      echo: echo([]),
      crash: echo(["crash"])
    })
  })
  const env = { API_TOKEN: TOKEN, REMOTE_AUTH: AUTH }
  const secretsCli = (...args: Array<string>) => run(args, { cwd: dir, mark, env })
  const expectNoSecret = (result: { readonly stdout: string; readonly stderr: string }) => {
    for (const secret of [TOKEN, AUTH, KEY, PASSWORD]) {
      expect(result.stdout).not.toContain(secret)
      expect(result.stderr).not.toContain(secret)
    }
  }

  it("servers, its --json and its debug logs show no header, URL credential, token or echoed env secret", async () => {
    const human = await secretsCli("servers")
    expect(human.stdout).toContain("crash: server 'crash' exited with code 1 before answering the handshake")
    expect(human.stdout).toContain("error: the token *** was refused")
    expectNoSecret(human)
    const asJson = await secretsCli("servers", "--json")
    const crash = json(asJson.stdout).find((status: any) => status.name === "crash")
    expect(crash.error.message).toContain("the token *** was refused")
    expectNoSecret(asJson)
    const debug = await secretsCli("--log-level", "debug", "servers")
    expect(debug.stderr).toContain("starting with API_TOKEN=***")
    expectNoSecret(debug)
  })

  it("call and test <name> show the server's errors masked and a URL without user:password@", async () => {
    const called = await secretsCli("call", "echo", "leak")
    expect(called.code).toBe(1)
    expect(called.stderr).toContain("the token *** is not allowed")
    expectNoSecret(called)
    const tested = await secretsCli("test", "remote")
    expect(tested.code).toBe(1)
    expect(tested.stderr).toContain("testing 'remote' (http: http://127.0.0.1:1/mcp)")
    expectNoSecret(tested)
    const crashed = await secretsCli("--log-level", "debug", "test", "crash")
    expect(crashed.stdout).toContain("error: the token *** was refused")
    expectNoSecret(crashed)
  })

  it("the gateway answers with the server's error masked, and logs no secret at debug level", async () => {
    const client = new Client({ name: "cli-test", version: "1.0.0" })
    const transport = new StdioClientTransport({
      command: CLI[0],
      args: [...CLI.slice(1), "--log-level", "debug", "serve", "--stdio"],
      cwd: dir,
      env: { ...process.env, ...cliEnv(), ...env, [MARK]: mark } as Record<string, string>,
      stderr: "pipe"
    })
    let stderr = ""
    transport.stderr!.on("data", (chunk: Buffer) => stderr += chunk.toString("utf8"))
    await client.connect(transport)
    try {
      // The server is ready (on a busy machine, after the settle window a call waits out).
      await eventually(
        async () => (await client.listTools()).tools.map((tool) => tool.name),
        (names) => names.includes("mcp__echo__leak"),
        hangGuard(10_000)
      )
      const answer = await client.callTool({ name: "mcp__echo__leak", arguments: {} }).then(
        (result) => JSON.stringify(result),
        (error: Error) => error.message
      )
      expect(answer).toContain("the token *** is not allowed")
      expectNoSecret({ stdout: answer, stderr })
    } finally {
      await client.close()
    }
    expect(stderr).toContain("starting with API_TOKEN=***")
  })
})
