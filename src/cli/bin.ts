#!/usr/bin/env node
/**
 * The `mcp-fleet` executable: answers `--version` before anything else is loaded (a host
 * probing for the command should not wait for the whole CLI), and runs the CLI otherwise.
 *
 * In the bundle (`scripts/bundle-cli.mjs`) the CLI is `main.cjs`, one CommonJS file run with a
 * V8 code cache: Node 20 has no compile cache for modules, and compiling the bundle is a good
 * part of every start. The cache is kept per user (`$XDG_CACHE_HOME/mcp-fleet/code-cache`,
 * else `~/.cache/…`), one file per bundle digest, Node version, architecture and Node options
 * (V8 rejects a cache made under other flags), written when the first run of a bundle exits
 * (so it holds what that run compiled, not only the top level). A cache that cannot be read,
 * is rejected by V8 or cannot be written only costs the compile it would have saved.
 *
 * @since 0.1.0
 */
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as vm from "node:vm"
import { VERSION } from "./version.js"

// The sha256 of main.cjs, put in by scripts/bundle-cli.mjs; not defined outside the bundle.
declare const MCP_FLEET_MAIN_DIGEST: string

// How many code caches are kept: one per bundle built, so a few across checkouts and rebuilds.
const CACHES_KEPT = 8

const cacheDirectory = () =>
  path.join(
    process.env.XDG_CACHE_HOME !== undefined && path.isAbsolute(process.env.XDG_CACHE_HOME)
      ? process.env.XDG_CACHE_HOME
      : path.join(os.homedir(), ".cache"),
    "mcp-fleet",
    "code-cache"
  )

// Writes the cache whole by a rename, and keeps the newest few; any failure leaves it unwritten.
const writeCache = (directory: string, file: string, data: Buffer) => {
  try {
    fs.mkdirSync(directory, { recursive: true })
    const temporary = `${file}.${process.pid}.tmp`
    fs.writeFileSync(temporary, data)
    fs.renameSync(temporary, file)
    const older = fs.readdirSync(directory).filter((name) => name.endsWith(".bin")).map((name) => {
      const at = path.join(directory, name)
      return { at, time: fs.statSync(at).mtimeMs }
    }).sort((a, b) => b.time - a.time).slice(CACHES_KEPT)
    for (const { at } of older) fs.rmSync(at, { force: true })
  } catch {
    // no cache this time
  }
}

// Runs main.cjs as Node runs a CommonJS module, compiled with the code cache when there is one.
const runCached = (digest: string) => {
  const main = fileURLToPath(new URL("./main.cjs", import.meta.url))
  const directory = cacheDirectory()
  const flags = [...process.execArgv, process.env.NODE_OPTIONS ?? ""].join(" ").trim()
  const options = flags === "" ? "" : `-${createHash("sha256").update(flags).digest("hex").slice(0, 8)}`
  const file = path.join(directory, `${digest.slice(0, 32)}-${process.version}-${process.arch}${options}.bin`)
  let cachedData: Buffer | undefined
  try {
    cachedData = fs.readFileSync(file)
  } catch {
    // none yet
  }
  const script = new vm.Script(
    `(function (exports, require, module, __filename, __dirname, __mcpFleetImport) {${
      fs.readFileSync(main, "utf8")
    }\n})`,
    { filename: main, cachedData }
  )
  if (cachedData === undefined || script.cachedDataRejected === true) {
    process.once("exit", () => writeCache(directory, file, script.createCachedData()))
  }
  const module = { exports: {} }
  const run = script.runInThisContext() as (...args: ReadonlyArray<unknown>) => void
  // main.cjs's import() calls are this module's (see scripts/bundle-cli.mjs).
  run(module.exports, createRequire(main), module, main, path.dirname(main), (specifier: string) => import(specifier))
}

if (process.argv.length === 3 && (process.argv[2] === "--version" || process.argv[2] === "-v")) {
  process.stdout.write(`${VERSION}\n`)
} else if (typeof MCP_FLEET_MAIN_DIGEST === "string") {
  runCached(MCP_FLEET_MAIN_DIGEST)
} else {
  await import("./main.js")
}
