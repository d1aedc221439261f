// examples/app-server.ts as a real stdio server: the official SDK client and our CLI list and
// call its plain and toolkit tools. The example runs bundled (support/bundle.ts), as the CLI
// does: under tsx each start costs about 7 s of CPU, which on a busy machine outlasted the SDK
// client's own 60 s wait for its first answer.
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import * as Effect from "effect/Effect"
import { randomUUID } from "node:crypto"
import { fileURLToPath } from "node:url"
import { beforeAll, describe, expect, it } from "vitest"
import { bundled } from "../support/bundle.js"
import { config, MARK, marked, run, tempDir } from "../support/cli.js"
import { hangGuard } from "../support/guard.js"
import { survivors, waitGone } from "../support/processes.js"

const root = fileURLToPath(new URL("../..", import.meta.url))
let example: string

beforeAll(async () => {
  example = await bundled("examples/app-server.ts")
})

const gone = (mark: string) =>
  Effect.runPromise(Effect.suspend(() => {
    const pids = survivors(MARK, mark).map((line) => Number(line.split(" ")[0]))
    return waitGone(pids, hangGuard(10_000))
  }))

describe("examples/app-server.ts, a real stdio server", () => {
  it("the official SDK client lists and calls its plain and toolkit tools", async () => {
    const mark = randomUUID()
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [example],
      cwd: root,
      env: { ...process.env, [MARK]: mark } as Record<string, string>,
      stderr: "pipe"
    })
    let stderr = ""
    transport.stderr?.on("data", (chunk: Buffer) => stderr += chunk.toString())
    const client = new Client({ name: "app-server-test", version: "1.0.0" })
    // The SDK's own wait for an answer (60 s), grown with the load as the test's guard is.
    const wait = { timeout: hangGuard(60_000) }
    try {
      await client.connect(transport, wait)
      const { tools } = await client.listTools(undefined, wait)
      expect(tools.map((tool) => tool.name)).toEqual(["word_count", "celsius_to_fahrenheit", "add_note", "list_notes"])
      expect(tools.find((tool) => tool.name === "add_note")).toMatchObject({
        inputSchema: { type: "object", required: ["title", "body"] },
        outputSchema: { type: "object", properties: { count: { type: "number" } } },
        annotations: { destructiveHint: false }
      })
      const call = (name: string, args: Record<string, unknown>) =>
        client.callTool({ name, arguments: args }, undefined, wait)
      expect(await call("word_count", { text: "one two  three" })).toEqual({
        content: [{ type: "text", text: "3 words" }]
      })
      expect(await call("celsius_to_fahrenheit", { celsius: 100 })).toEqual({
        content: [{ type: "text", text: "212 °F" }]
      })
      const note = { title: "milk", body: "buy some" }
      expect(await call("add_note", note)).toMatchObject({ structuredContent: { count: 1 } })
      expect(await call("add_note", note)).toEqual({
        content: [{ type: "text", text: `{"title":"milk","_tag":"DuplicateNote"}` }],
        isError: true
      })
      expect(await call("list_notes", {})).toMatchObject({ structuredContent: { notes: [note] } })
      expect(await call("word_count", { text: 3 })).toMatchObject({ isError: true })
    } finally {
      await client.close()
    }
    expect(Object.values(await gone(mark)).filter((state) => state === "alive")).toEqual([])
    expect(stderr).toBe("")
  }, hangGuard(60_000))

  it("our CLI calls its tools as a server of the fleet", async () => {
    const mark = randomUUID()
    const cwd = tempDir({ ".mcp.json": config({ app: marked({ command: process.execPath, args: [example] }, mark) }) })
    // A tool of the toolkit, its structured result shown.
    const called = await run(["call", "app", "add_note", `{"title":"milk","body":"buy some"}`, "--json"], { cwd, mark })
    expect(called.stderr).toBe("")
    expect(called.code).toBe(0)
    expect(JSON.parse(called.stdout)).toMatchObject({ structuredContent: { count: 1 } })
    expect(Object.values(await gone(mark)).filter((state) => state === "alive")).toEqual([])
  }, hangGuard(60_000))
})
