// The dashboard's command line without a browser: `serve --http 0 --dashboard` prints both
// URLs, and a project config not trusted yet waits in the page, trusted there to start its
// server. Read through the page's own API and live stream (SSE), as the page reads them.
import * as cp from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { config, leavesNothing, MARK, marked, run, SERVERS, start, tempDir } from "../support/cli.js"

const root = fileURLToPath(new URL("../..", import.meta.url))
const mark = `dashboard-cli-${process.pid}-${Date.now()}`

afterAll(() => leavesNothing(mark))

interface Opened {
  readonly origin: string
  readonly cookie: string
}

// Opens the printed URL as a browser would: the token answered with a cookie and a redirect.
const open = async (url: string): Promise<Opened> => {
  const answer = await fetch(url, { redirect: "manual" })
  expect(answer.status).toBe(303)
  expect(answer.headers.get("location")).toBe("/")
  const cookie = answer.headers.get("set-cookie")!.split(";")[0]!
  expect(answer.headers.get("set-cookie")).toContain("HttpOnly")
  return { origin: new URL(url).origin, cookie }
}

// Reads the live stream until a `state` message satisfies `done`; returns that state.
const stateWhere = async (opened: Opened, done: (state: any) => boolean): Promise<any> => {
  const controller = new AbortController()
  const answer = await fetch(`${opened.origin}/api/events`, {
    headers: { cookie: opened.cookie },
    signal: controller.signal
  })
  expect(answer.headers.get("content-type")).toContain("text/event-stream")
  const reader = answer.body!.pipeThrough(new TextDecoderStream()).getReader()
  let buffer = ""
  try {
    while (true) {
      const { done: ended, value } = await reader.read()
      if (ended) throw new Error("the stream ended")
      buffer += value
      const frames = buffer.split("\n\n")
      buffer = frames.pop()!
      for (const frame of frames) {
        const [event, data] = frame.split("\n")
        if (event !== "event: state") continue
        const state = JSON.parse(data!.slice("data: ".length))
        if (done(state)) return state
      }
    }
  } finally {
    controller.abort()
  }
}

const post = (opened: Opened, route: string, body: unknown) =>
  fetch(`${opened.origin}${route}`, {
    method: "POST",
    headers: { cookie: opened.cookie, "content-type": "application/json", origin: opened.origin },
    body: JSON.stringify(body)
  }).then(async (answer) => ({ status: answer.status, body: await answer.json() as any }))

const ready = (name: string) => (state: any) =>
  state.servers.some((server: any) => server.name === name && server.state === "Ready")

describe("the dashboard from the command line", () => {
  it("serve --http --dashboard prints the gateway's and the dashboard's URLs on one line", async () => {
    const dir = tempDir({
      ".mcp.json": config({ memory: marked({ command: process.execPath, args: [SERVERS.memory] }, mark) })
    })
    const serving = start(["serve", "--http", "0", "--dashboard", "--json"], { cwd: dir, mark })
    try {
      const line = JSON.parse(await serving.line((text) => text.startsWith("{"), "the URLs"))
      expect(line.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
      expect(line.dashboard).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]{64}$/)
      const opened = await open(line.dashboard)
      const state = await stateWhere(opened, ready("memory"))
      expect(state.tools.map((tool: any) => tool.name)).toContain("mcp__memory__read_graph")
      const called = await post(opened, "/api/call", { name: "mcp__memory__read_graph", arguments: {} })
      expect(called.body.result.content[0].type).toBe("text")
    } finally {
      expect(await serving.stop()).toBe(0)
    }
  })

  it("lists a project config waiting for trust instead of stopping, and starts it once trusted in the page", async () => {
    const dir = tempDir({
      ".mcp.json": config({ memory: marked({ command: process.execPath, args: [SERVERS.memory] }, mark) })
    })
    const file = fs.realpathSync(path.join(dir, ".mcp.json"))
    const serving = start(["dashboard", "--json"], { cwd: dir, mark, env: { MCP_FLEET_TRUST: "" } })
    try {
      const opened = await open(JSON.parse(await serving.line((text) => text.startsWith("{"), "the URL")).url)
      const waiting = await stateWhere(opened, (state) => state.untrusted.length > 0)
      expect(waiting.servers).toEqual([])
      expect(waiting.untrusted).toEqual([
        {
          path: expect.stringContaining(".mcp.json"),
          servers: [expect.stringContaining(SERVERS.memory)],
          changed: false
        }
      ])
      expect((await post(opened, "/api/trust", { path: "/etc/passwd" })).status).toBe(400)
      expect((await post(opened, "/api/trust", { path: waiting.untrusted[0].path })).body).toEqual({ ok: true })
      const trusted = await stateWhere(opened, ready("memory"))
      expect(trusted.untrusted).toEqual([])
      expect(fs.realpathSync(waiting.untrusted[0].path)).toBe(file)
    } finally {
      expect(await serving.stop()).toBe(0)
    }
  })

  it("the README's dashboard example is examples/dashboard.ts, and serves the page as written", async () => {
    const readme = fs.readFileSync(path.join(root, "README.md"), "utf8")
    const section = readme.slice(readme.indexOf("## The dashboard"))
    const begin = section.indexOf("```ts\n") + "```ts\n".length
    const example = path.join(root, "examples/dashboard.ts")
    expect(section.slice(begin, section.indexOf("```", begin))).toBe(fs.readFileSync(example, "utf8"))
    const dir = tempDir({
      ".mcp.json": config({ memory: marked({ command: process.execPath, args: [SERVERS.memory] }, mark) })
    })
    const child = cp.spawn(
      process.execPath,
      [path.join(root, "node_modules/.bin/tsx"), "--tsconfig", path.join(root, "tsconfig.json"), example],
      { cwd: dir, env: { ...process.env, [MARK]: mark }, stdio: ["ignore", "pipe", "pipe"] }
    )
    try {
      const line = await new Promise<string>((resolve, reject) => {
        let out = ""
        child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
          out += chunk
          const found = out.split("\n").find((text) => text.startsWith("open "))
          if (found !== undefined) resolve(found)
        })
        child.on("exit", () => reject(new Error(`exited before printing the URL: ${out}`)))
      })
      const opened = await open(line.slice("open ".length))
      expect((await stateWhere(opened, ready("memory"))).tools.length).toBeGreaterThan(0)
    } finally {
      const exited = new Promise((resolve) => child.once("exit", resolve))
      child.kill("SIGTERM")
      await exited
    }
  })

  it("says there is no config, with exit code 2", async () => {
    const result = await run(["dashboard", "--json"], { cwd: tempDir(), mark })
    expect(result.code).toBe(2)
  })
})
