/**
 * The dashboard's HTTP API, on Web `Request`/`Response`: the page and its assets, the live
 * stream (SSE), and the actions a person takes in the page (run a tool through the Policy,
 * answer an ask, approve a drifted tool, trust a project config, restart a server). Every
 * request passes the guard first.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Policy from "../../Policy.js"
import type * as ServerRegistry from "../../ServerRegistry.js"
import type * as Asks from "./asks.js"
import * as Guard from "./guard.js"
import type * as Hub from "./hub.js"
import * as Page from "./page.js"
import type * as State from "./state.js"

const SECURITY = {
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store"
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { ...SECURITY, "content-type": "application/json; charset=utf-8", ...headers }
  })

const text = (status: number, body: string, type: string, headers: Record<string, string> = {}) =>
  new Response(body, { status, headers: { ...SECURITY, "content-type": `${type}; charset=utf-8`, ...headers } })

/** What the routes work with. */
export interface Context {
  readonly token: string
  readonly guard: (request: Request) => Guard.Verdict
  readonly assets: Page.Assets
  readonly registry: ServerRegistry.ServerRegistry
  readonly policy: Policy.Policy
  readonly asks: Asks.Asks
  readonly hub: Hub.Hub
  readonly trust: State.TrustQueue | undefined
  readonly snapshot: Effect.Effect<unknown>
  /** The recent events, oldest first, as the page lists them. */
  readonly recent: () => ReadonlyArray<unknown>
}

const body = (request: Request): Effect.Effect<Readonly<Record<string, unknown>>> =>
  Effect.promise(() =>
    request.json().then(
      (value: unknown) => typeof value === "object" && value !== null ? value as Record<string, unknown> : {},
      () => ({})
    )
  )

const str = (value: unknown) => typeof value === "string" ? value : ""

// A failure the page shows: the error's sentence, never more.
const failed = (error: { readonly message: string }, status = 400) => json(status, { error: error.message })

const call = (context: Context, request: Request) =>
  Effect.gen(function*() {
    const given = yield* body(request)
    const args = typeof given.arguments === "object" && given.arguments !== null
      ? given.arguments as Record<string, unknown>
      : {}
    const result = yield* Effect.either(
      context.policy.callTool(str(given.name), args, { approve: context.asks.approval.approve })
    )
    return Either.isRight(result) ? json(200, { result: result.right }) : failed(result.left, 200)
  })

const answer = (context: Context, request: Request, id: string) =>
  Effect.gen(function*() {
    const given = yield* body(request)
    const decision = given.decision === "allow" ? "allow" : "deny"
    const answered = yield* context.asks.answer(
      id,
      decision === "allow" ? { decision } : { decision, reason: "denied in the dashboard" }
    )
    return answered ? json(200, { ok: true }) : json(404, { error: "this ask is no longer waiting" })
  })

const approveTool = (context: Context, request: Request) =>
  Effect.flatMap(body(request), (given) =>
    context.registry.approveTool(str(given.server), str(given.tool)).pipe(
      Effect.as(json(200, { ok: true })),
      Effect.catchAll((error) => Effect.succeed(failed(error)))
    ))

const trust = (context: Context, request: Request) =>
  Effect.flatMap(body(request), (given) =>
    context.trust === undefined
      ? Effect.succeed(json(404, { error: "no project config waits for trust here" }))
      : context.trust.trust(str(given.path)).pipe(
        Effect.as(json(200, { ok: true })),
        Effect.catchAll((message) => Effect.succeed(json(400, { error: message })))
      ))

const restart = (context: Context, server: string) =>
  context.registry.restart(server).pipe(
    Effect.as(json(200, { ok: true })),
    Effect.catchAll((error) => Effect.succeed(failed(error)))
  )

const events = (context: Context) =>
  Effect.map(context.snapshot, (state) =>
    new Response(
      context.hub.open([["state", state], ...context.recent().map((event) => ["event", event] as const)]),
      {
        headers: {
          ...SECURITY,
          "content-type": "text/event-stream; charset=utf-8",
          connection: "keep-alive"
        }
      }
    ))

// The API's POST routes, by path; `/api/asks/<id>` and `/api/servers/<name>/restart` by pattern.
const post = (context: Context, request: Request, path: string): Effect.Effect<Response> | undefined => {
  if (path === "/api/call") return call(context, request)
  if (path === "/api/drifted/approve") return approveTool(context, request)
  if (path === "/api/trust") return trust(context, request)
  const ask = /^\/api\/asks\/([0-9a-f]+)$/.exec(path)
  if (ask !== null) return answer(context, request, ask[1])
  const server = /^\/api\/servers\/([^/]+)\/restart$/.exec(path)
  if (server !== null) return restart(context, decodeURIComponent(server[1]))
  return undefined
}

const get = (context: Context, path: string): Effect.Effect<Response> | undefined => {
  switch (path) {
    case "/":
      return Effect.succeed(text(200, Page.html, "text/html", { "content-security-policy": Page.CSP }))
    case "/app.js":
      return Effect.succeed(text(200, context.assets.script, "text/javascript"))
    case "/app.css":
      return Effect.succeed(text(200, context.assets.style, "text/css"))
    case "/api/state":
      return Effect.map(context.snapshot, (state) => json(200, state))
    case "/api/events":
      return events(context)
    default:
      return undefined
  }
}

export const handle = (context: Context) => (request: Request): Effect.Effect<Response> => {
  const verdict = context.guard(request)
  if (verdict._tag === "Refused") return Effect.succeed(json(verdict.status, { error: verdict.reason }))
  const url = new URL(request.url)
  // Opened with the token: keep it in a cookie and take it out of the address bar.
  if (verdict.byUrl && request.method === "GET") {
    const rest = new URLSearchParams(url.searchParams)
    rest.delete("token")
    const query = rest.size > 0 ? `?${rest}` : ""
    return Effect.succeed(
      new Response(null, {
        status: 303,
        headers: { ...SECURITY, location: `${url.pathname}${query}`, "set-cookie": Guard.setCookie(context.token) }
      })
    )
  }
  const route = request.method === "GET"
    ? get(context, url.pathname)
    : request.method === "POST"
    ? post(context, request, url.pathname)
    : undefined
  return route ?? Effect.succeed(json(404, { error: `no ${request.method} ${url.pathname} here` }))
}
