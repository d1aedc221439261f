// The fleet of the CLI's end-to-end tests (cli.test.ts, cli-call.test.ts): a temp folder with
// a `.mcp.json` of real servers from npm, a fixture that fails and one that never starts, and
// a second folder of server-everything beside the failing fixture alone.
import { config, FIXTURES, marked, realServers, run, tempDir } from "./cli.js"

/**
 * A fresh fleet marked `<name>-<pid>-<time>`: `cli` runs a command on the whole fleet (its
 * policy denies mcp__memory__delete_*), `onPair` on the pair, each in its folder.
 */
export const cliFleet = (name: string) => {
  const mark = `${name}-${process.pid}-${Date.now()}`

  const servers = {
    ...realServers(mark),
    failing: marked({ command: process.execPath, args: [FIXTURES.failing] }, mark),
    broken: marked({
      command: process.execPath,
      args: ["-e", "console.error('error: GITHUB_TOKEN is not set'); process.exit(1)"],
      restart: { maxAttempts: 1, initialDelay: 50 }
    }, mark)
  }

  const policy = { deny: ["mcp__memory__delete_*"] }
  const cwd = tempDir({ ".mcp.json": config(servers, { policy }) })
  const cli = (...args: Array<string>) => run(args, { cwd, mark })
  // Commands on server-everything alone need no other real server: a fixture beside it keeps
  // --server choosing one of two, and each run starts two processes rather than five.
  const pair = tempDir({ ".mcp.json": config({ everything: servers.everything, failing: servers.failing }) })
  const onPair = (...args: Array<string>) => run(args, { cwd: pair, mark })
  return { mark, servers, cwd, cli, onPair }
}

/** A command's JSON output, read loosely as the tests inspect it. */
export const json = (text: string) => JSON.parse(text) as any
