/**
 * The dashboard (see Dashboard) on a node:http listener of its own, and the package's built
 * front end. The front end is built by `npm run build` into `dist/dashboard/` (what a packed
 * install has); in a checkout, where `ui/dashboard/` is, it is bundled from there when the
 * dashboard starts (`scripts/bundle-dashboard.mjs`, esbuild, a few tens of milliseconds), so
 * `npm run cli` and the tests serve the sources as they are, with no build step.
 *
 * @since 0.6.0
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as fs from "node:fs"
import * as http from "node:http"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import * as Dashboard from "./Dashboard.js"
import { traced } from "./internal/traced.js"
import * as McpError from "./McpError.js"
import type * as Policy from "./Policy.js"
import type * as ServerRegistry from "./ServerRegistry.js"

// The package's root: the nearest folder above this module whose package.json is ours
// (this file sits in src/, dist/ or a CLI bundle's folder).
const packageRoot = (): string | undefined => {
  let dir = path.dirname(fileURLToPath(import.meta.url))
  while (true) {
    try {
      const manifest = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")) as { name?: unknown }
      if (manifest.name === "mcp-fleet") return dir
    } catch {
      // no package.json here
    }
    const parent = path.dirname(dir)
    if (parent === dir) return undefined
    dir = parent
  }
}

const unavailable = (message: string) => McpError.transport(undefined, { message })

/**
 * The built front end: bundled from `ui/dashboard/` in a checkout, else read from
 * `dist/dashboard/`. Fails with a sentence when neither is there.
 *
 * @since 0.6.0
 * @category constructors
 */
export const assets: Effect.Effect<Dashboard.Assets, McpError.McpError> = Effect.suspend(() => {
  const root = packageRoot()
  if (root === undefined) return Effect.fail(unavailable("the dashboard's page is missing: no mcp-fleet package found"))
  const script = path.join(root, "scripts", "bundle-dashboard.mjs")
  if (fs.existsSync(script) && fs.existsSync(path.join(root, "ui", "dashboard"))) {
    return Effect.tryPromise({
      try: () =>
        import(pathToFileURL(script).href).then((module: { bundleDashboard: () => Promise<Dashboard.Assets> }) =>
          module.bundleDashboard()
        ),
      catch: (error) => unavailable(`the dashboard's page could not be built: ${String(error)}`)
    })
  }
  return Effect.try({
    try: () => ({
      script: fs.readFileSync(path.join(root, "dist", "dashboard", "app.js"), "utf8"),
      style: fs.readFileSync(path.join(root, "dist", "dashboard", "app.css"), "utf8")
    }),
    catch: () => unavailable("the dashboard's page is missing: run 'npm run build'")
  })
})

/**
 * Where to listen, and the dashboard's options (its assets default to the package's).
 *
 * @since 0.6.0
 * @category models
 */
export interface ServeOptions extends Omit<Dashboard.Options, "assets" | "host"> {
  readonly assets?: Dashboard.Assets | undefined
  /** The port; 0 picks a free one. */
  readonly port: number
  /** The address; default 127.0.0.1 (this machine only). */
  readonly host?: string | undefined
}

/**
 * A served dashboard: the URL to open (with its token) and the dashboard.
 *
 * @since 0.6.0
 * @category models
 */
export interface Served {
  readonly url: string
  readonly dashboard: Dashboard.Dashboard
}

const MAX_BODY = 1024 * 1024

// A node:http request as a Web Request (its body read whole, up to 1 MiB), whose signal
// aborts when the client goes before the answer is sent.
const toRequest = async (
  request: http.IncomingMessage,
  response: http.ServerResponse,
  base: string
): Promise<Request> => {
  const gone = new AbortController()
  response.once("close", () => {
    if (!response.writableFinished) gone.abort()
  })
  const headers = new Headers()
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value)
  }
  const method = request.method ?? "GET"
  const target = new URL(request.url ?? "/", base)
  if (method === "GET" || method === "HEAD") return new Request(target, { method, headers, signal: gone.signal })
  const chunks: Array<Buffer> = []
  let size = 0
  for await (const chunk of request) {
    size += (chunk as Buffer).length
    if (size > MAX_BODY) throw new Error("request body too large")
    chunks.push(chunk as Buffer)
  }
  return new Request(target, { method, headers, body: Buffer.concat(chunks), signal: gone.signal })
}

// A Web Response written to node:http; a stream's reader is cancelled when the page goes.
const write = async (answer: Response, response: http.ServerResponse) => {
  response.writeHead(answer.status, Object.fromEntries(answer.headers))
  if (answer.body === null) return void response.end()
  const reader = answer.body.getReader()
  response.on("close", () => void reader.cancel().catch(() => undefined))
  response.flushHeaders()
  while (true) {
    const { done, value } = await reader.read()
    if (done) return void response.end()
    response.write(value)
  }
}

const listen = (port: number, host: string) =>
  Effect.acquireRelease(
    Effect.async<http.Server, McpError.McpError>((resume) => {
      const listener = http.createServer()
      listener.once(
        "error",
        (error) => resume(Effect.fail(unavailable(`could not listen on ${host}:${port}: ${error}`)))
      )
      listener.listen(port, host, () => resume(Effect.succeed(listener)))
    }),
    (listener) =>
      Effect.async<void>((resume) => {
        listener.close(() => resume(Effect.void))
        listener.closeAllConnections()
      })
  )

/**
 * Serves a dashboard of the registry and policy in context on node:http until the Scope
 * closes; returns the URL to open, `http://127.0.0.1:<port>/?token=…`.
 *
 * @since 0.6.0
 * @category constructors
 */
export const serve: (
  options: ServeOptions
) => Effect.Effect<Served, McpError.McpError, ServerRegistry.ServerRegistry | Policy.Policy | Scope.Scope> = traced(
  "NodeDashboard.serve"
)((options: ServeOptions) =>
  Effect.gen(function*() {
    const host = options.host ?? "127.0.0.1"
    const listener = yield* listen(options.port, host)
    const dashboard = yield* Dashboard.make({ ...options, host, assets: options.assets ?? (yield* assets) })
    const address = listener.address() as { readonly address: string; readonly port: number }
    const origin = `http://${address.address.includes(":") ? `[${address.address}]` : address.address}:${address.port}`
    listener.on("request", (request: http.IncomingMessage, response: http.ServerResponse) => {
      toRequest(request, response, origin).then(dashboard.handler).then(
        (answer) => write(answer, response),
        () => void response.writeHead(400).end()
      ).catch(() => response.destroy())
    })
    return { url: `${origin}/?token=${dashboard.token}`, dashboard }
  })
)
