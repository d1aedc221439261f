// The README's library example is examples/library.ts, word for word, and it runs as written
// from the sources (tsconfig's `paths`: the package has no install script that builds it)
// against a real server.
import { afterAll, describe, expect, it } from "@effect/vitest"
import * as cp from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { removeTempDirs, SERVERS, tempDir } from "../support/cli.js"

const root = fileURLToPath(new URL("../..", import.meta.url))
const example = path.join(root, "examples/library.ts")

const readmeExample = (): string => {
  const readme = fs.readFileSync(path.join(root, "README.md"), "utf8")
  const section = readme.slice(readme.indexOf("## Use it as a library"))
  const start = section.indexOf("```ts\n") + "```ts\n".length
  return section.slice(start, section.indexOf("```", start))
}

afterAll(removeTempDirs)

describe("the README's library example", () => {
  it("is examples/library.ts", () => {
    expect(readmeExample()).toBe(fs.readFileSync(example, "utf8"))
  })

  it("runs as written on a config with the memory server", async () => {
    const dir = tempDir()
    fs.writeFileSync(
      path.join(dir, ".mcp.json"),
      JSON.stringify({
        mcpServers: {
          memory: {
            command: process.execPath,
            args: [SERVERS.memory],
            env: { MEMORY_FILE_PATH: path.join(dir, "memory.jsonl") }
          }
        }
      })
    )
    const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = cp.spawn(path.join(root, "node_modules/.bin/tsx"), [
        "--tsconfig",
        path.join(root, "tsconfig.json"),
        example
      ], { cwd: dir })
      let stdout = ""
      let stderr = ""
      child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
      child.once("exit", (code) => resolve({ code, stdout, stderr }))
    })
    expect(run.stderr).toBe("")
    expect(run.code).toBe(0)
    expect(run.stdout).toContain("mcp__memory__read_graph")
    expect(run.stdout).toContain("entities")
  })
})
