// `mcp-fleet auth`, end to end: the bundled CLI prints the authorization URL and listens on
// its loopback redirect; the test plays the browser. The grant (DPoP-bound: the authorization
// server offers DPoP) is stored with its key, mode 0600, under the user config dir, listed
// without its tokens or key, and forgotten by --logout.
import * as cp from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
// @ts-expect-error: a JavaScript fixture without types
import { start } from "../fixtures/oauth-server.mjs"
import { CLI, cliEnv, config, leavesNothing, MARK, run, tempDir } from "../support/cli.js"
import { hangGuard } from "../support/guard.js"

const mark = `cli-auth-${process.pid}-${Date.now()}`

afterAll(() => leavesNothing(mark))

describe("mcp-fleet auth", () => {
  it("authorizes a server in the browser, lists it without tokens, and logs out", async () => {
    const as = await start({ dpop: true })
    try {
      const dir = tempDir({ "mcp.json": config({ remote: { url: `${as.base}/mcp` } }) })
      const cli = (...args: Array<string>) => run(args, { cwd: dir, mark })

      const child = cp.spawn(CLI[0], [...CLI.slice(1), "auth", "remote"], {
        cwd: dir,
        env: { ...process.env, ...cliEnv(), [MARK]: mark, NO_COLOR: "1" },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let stdout = ""
      let stderr = ""
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => stdout += chunk)
      const url = await new Promise<string>((resolve) =>
        child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
          stderr += chunk
          const found = /https?:\/\/\S+\/authorize\?\S+/.exec(stderr)
          if (found !== null) resolve(found[0])
        })
      )
      // The browser: the authorization server approves at once and redirects to the CLI.
      const page = await fetch(url)
      expect(await page.text()).toContain("Authorized")
      const code = await new Promise<number | null>((resolve) => child.on("close", resolve))
      expect(code).toBe(0)
      expect(stdout).toBe("authorized 'remote'\n")

      const store = path.join(cliEnv().XDG_CONFIG_HOME!, "mcp-fleet", "oauth")
      for (const name of fs.readdirSync(store)) expect(fs.statSync(path.join(store, name)).mode & 0o777).toBe(0o600)
      const tokens = fs.readdirSync(store).find((name) => name.startsWith("tokens-"))!
      const stored = JSON.parse(fs.readFileSync(path.join(store, tokens), "utf8"))
      expect(stored.tokenType).toBe("dpop")
      const privateKey = JSON.parse(stored.dpopKey).d as string

      const listed = await cli("auth", "--list", "--json")
      expect(listed.code).toBe(0)
      expect(JSON.parse(listed.stdout)).toMatchObject([{ server: "remote", issuer: as.base, refreshable: true }])
      expect(listed.stdout + listed.stderr + stdout + stderr).not.toMatch(/at-\d+-secret|rt-\d+/)
      expect(listed.stdout + listed.stderr + stdout + stderr).not.toContain(privateKey)

      expect((await cli("auth", "remote", "--logout")).code).toBe(0)
      expect(JSON.parse((await cli("auth", "--list", "--json")).stdout)).toEqual([])
    } finally {
      await as.close()
    }
  }, hangGuard(60_000))
})
