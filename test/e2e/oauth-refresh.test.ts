// Two processes refreshing the same rotating token at once, on one file store: one refresh
// reaches the authorization server (the store's lock), both get the new token. The children
// run test/fixtures/oauth-refresh.ts bundled (support/bundle.ts): under tsx each cost about
// 7 s of CPU to start, more than the test's guard on a busy machine.
import { it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as cp from "node:child_process"
import { beforeAll, describe, expect } from "vitest"
import * as NodeOAuth from "../../src/NodeOAuth.js"
import * as OAuth from "../../src/OAuth.js"
import { tempDir } from "../../src/testing/node.js"
// @ts-expect-error: a JavaScript fixture without types
import { start } from "../fixtures/oauth-server.mjs"
import { bundled } from "../support/bundle.js"
import { hangGuard } from "../support/guard.js"

interface Fixture {
  readonly base: string
  readonly state: { refreshes: number }
  readonly close: () => Promise<void>
}

let script: string

beforeAll(async () => {
  script = await bundled("test/fixtures/oauth-refresh.ts")
})

// Asks for the access token in a child process sharing the store, once told to go; resolves
// with what it printed. `ready` fails if it exits before it is ready.
const child = (dir: string, url: string) => {
  const proc = cp.spawn(process.execPath, [script, dir, url], { stdio: ["pipe", "pipe", "pipe"] })
  let out = ""
  let err = ""
  proc.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()))
  const exited = new Promise<number | null>((resolve) => proc.on("exit", resolve))
  const ready = new Promise<void>((resolve, reject) => {
    proc.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString()
      if (out.startsWith("ready\n")) resolve()
    })
    void exited.then((code) => reject(new Error(`exited (${code}) before it was ready: ${err}`)))
  })
  const done = exited.then((code) => code === 0 ? out.slice("ready\n".length).trim() : Promise.reject(new Error(err)))
  return { proc, ready, done }
}

describe("OAuth across processes", () => {
  it.live(
    "two processes refreshing the same rotating token at once: one refresh reaches the server",
    () =>
      Effect.gen(function*() {
        const server = yield* Effect.acquireRelease(
          Effect.promise(() => start() as Promise<Fixture>),
          (server) => Effect.promise(() => server.close())
        )
        const dir = yield* tempDir()
        const url = `${server.base}/mcp`
        const auth = yield* OAuth.make({ server: "remote", url }).pipe(Effect.provide(NodeOAuth.layerFileStore(dir)))
        yield* auth.recover({
          status: 401,
          wwwAuthenticate: `Bearer resource_metadata="${server.base}/.well-known/oauth-protected-resource/mcp"`
        })
        const children = [child(dir, url), child(dir, url)]
        yield* Effect.addFinalizer(() => Effect.sync(() => children.forEach(({ proc }) => proc.kill("SIGKILL"))))
        yield* Effect.promise(() => Promise.all(children.map(({ ready }) => ready)))
        for (const { proc } of children) proc.stdin.write("go\n")
        const tokens = yield* Effect.promise(() => Promise.all(children.map(({ done }) => done)))
        expect(tokens).toEqual(["at-2-secret", "at-2-secret"])
        expect(server.state.refreshes).toBe(1)
      }).pipe(Effect.scoped, Effect.provide(OAuth.layerHeadless)),
    hangGuard(30_000)
  )
})
