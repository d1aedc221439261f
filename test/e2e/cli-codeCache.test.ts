// The CLI's V8 code cache (src/cli/bin.ts): the first run of a bundle writes it to the user
// cache dir, the next runs compile from it and leave it as it is, a cache V8 rejects is
// written anew, and a cache dir that cannot be written costs nothing but the cache.
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { leavesNothing, run, tempDir } from "../support/cli.js"

const mark = `cli-code-cache-${process.pid}-${Date.now()}`

afterAll(() => leavesNothing(mark))

const caches = (home: string) => {
  const dir = path.join(home, "mcp-fleet", "code-cache")
  return fs.existsSync(dir) ? fs.readdirSync(dir).map((name) => path.join(dir, name)) : []
}

describe("the code cache", () => {
  it("is written by the first run, kept by the next, and written anew when V8 rejects it", async () => {
    const home = tempDir()
    const cli = () => run(["--help"], { cwd: home, mark, env: { XDG_CACHE_HOME: home } })
    const first = await cli()
    expect(first.code).toBe(0)
    const [cache, ...others] = caches(home)
    expect(others).toEqual([])
    expect(path.basename(cache!)).toMatch(/^[0-9a-f]{32}-v\d+\.\d+\.\d+-\w+\.bin$/)
    const written = fs.readFileSync(cache!)
    expect(written.length).toBeGreaterThan(0)

    const second = await cli()
    expect(second).toEqual(first)
    expect(fs.readFileSync(cache!).equals(written)).toBe(true)

    // Bytes V8 cannot use: rejected, compiled without, and replaced.
    fs.writeFileSync(cache!, "not a code cache")
    const third = await cli()
    expect(third).toEqual(first)
    expect(fs.readFileSync(cache!).toString("latin1")).not.toBe("not a code cache")
  }, 60_000)

  it("a cache dir that cannot be made leaves the command as it is", async () => {
    const home = tempDir({ "a-file": "" })
    const result = await run(["--help"], { cwd: home, mark, env: { XDG_CACHE_HOME: path.join(home, "a-file") } })
    expect(result.code).toBe(0)
    expect(result.stdout).toContain("mcp-fleet")
    expect(result.stderr).toBe("")
  }, 60_000)
})
