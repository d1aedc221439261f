// `mcp-fleet tools --search`: real CLI processes on the SaaS-like fixture and server-memory.
// --json is an array best first with name, score, server and description; the table and its
// note; and the embeddings cached in the user config dir, so a second run embeds nothing.
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { cliEnv, config, leavesNothing, run, SERVERS, tempDir } from "../support/cli.js"

const mark = `cli-search-${process.pid}-${Date.now()}`
const saas = fileURLToPath(new URL("../fixtures/saas.mjs", import.meta.url))
const toolset = (name: string) => fileURLToPath(new URL(`../../bench/fixtures/toolsets/${name}.json`, import.meta.url))

afterAll(() => leavesNothing(mark))

const project = () => {
  const dir = tempDir({
    ".mcp.json": config({
      chat: { command: process.execPath, args: [saas, toolset("chat")] },
      tracker: { command: process.execPath, args: [saas, toolset("tracker")] },
      memory: { command: process.execPath, args: [SERVERS.memory] }
    })
  })
  return (...args: Array<string>) => run(args, { cwd: dir, mark })
}

const embeddings = () => path.join(cliEnv().XDG_CONFIG_HOME!, "mcp-fleet", "embeddings")

describe("tools --search", () => {
  it("--json: best first, with name, score, server and description; --limit", async () => {
    const cli = project()
    const result = await cli("tools", "--search", "tell the team channel the deploy is done", "--json", "--limit", "3")
    expect(result.code).toBe(0)
    const hits = JSON.parse(result.stdout) as Array<Record<string, unknown>>
    expect(hits).toHaveLength(3)
    expect(hits[0]).toMatchObject({
      name: "mcp__chat__post_message",
      server: "chat",
      tool: "post_message",
      description: "Post a message to a channel.",
      ranking: "hybrid"
    })
    const scores = hits.map((hit) => hit.score as number)
    expect(scores[0]).toBe(1)
    expect([...scores].sort((a, b) => b - a)).toEqual(scores)
  })

  it("a table with a note; the embeddings cached, so a second run writes none", async () => {
    const cli = project()
    const first = await cli("tools", "--search", "open a bug report")
    expect(first.code).toBe(0)
    expect(first.stdout.split("\n")[0]).toMatch(/^name\s+score\s+description/)
    expect(first.stdout).toContain("mcp__tracker__create_issue")
    expect(first.stderr).toContain("ranked by words and meaning")
    const [file] = fs.readdirSync(embeddings())
    const written = fs.statSync(path.join(embeddings(), file!)).mtimeMs
    const second = await cli("tools", "--search", "merge the pull request", "--json")
    expect(second.code).toBe(0)
    expect((JSON.parse(second.stdout) as Array<{ name: string }>)[0]!.name).toBe("mcp__tracker__merge_pull_request")
    expect(fs.statSync(path.join(embeddings(), file!)).mtimeMs).toBe(written)
  })
})
