// Fixture MCP servers over HTTP on 127.0.0.1 (@effect/platform HttpServer), for the edge
// cases real servers do not produce on demand: every request is recorded, and a test
// decides each answer, starting from a plain Streamable HTTP server it can override.
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import type * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as http from "node:http"

/**
 * POSTs `body` to a Streamable HTTP endpoint as a 2025-11-25 client does, in `session` when
 * given: its status, the session id it answered with, its content type and its body's text.
 */
export const postMcp = async (url: string, body: string, session?: string) => {
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-11-25",
      ...(session === undefined ? {} : { "mcp-session-id": session })
    },
    body
  })
  return {
    status: response.status,
    session: response.headers.get("mcp-session-id"),
    contentType: response.headers.get("content-type") ?? "",
    text: await response.text()
  }
}

/**
 * Listens with a node:http server on 127.0.0.1 (a free port) until the Scope closes, when
 * open connections drop and the server closes; its base URL (`http://127.0.0.1:<port>`).
 */
export const listenLoopback = (listener: http.Server): Effect.Effect<string, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.async<string>((resume) =>
      void listener.listen(
        0,
        "127.0.0.1",
        () => resume(Effect.succeed(`http://127.0.0.1:${(listener.address() as { readonly port: number }).port}`))
      )
    ),
    () =>
      Effect.async<void>((resume) => {
        listener.close(() => resume(Effect.void))
        listener.closeAllConnections()
      })
  )

/** One request as the fixture saw it; `body` is the parsed JSON of a POST. */
export interface Seen {
  readonly method: string
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: any
}

export type Handler = (request: Seen) => Effect.Effect<HttpServerResponse.HttpServerResponse>

export interface Fixture {
  readonly url: string
  readonly port: number
  /** Every request so far, in order. */
  readonly seen: Array<Seen>
  /** Waits for the next request that matches (looking at those not yet waited past). */
  readonly next: (match: (request: Seen) => boolean) => Effect.Effect<Seen>
  /** Waits until a client hangs up on a response the fixture had not finished. */
  readonly hangup: Effect.Effect<void>
}

/** Serves `handler` on 127.0.0.1 (port 0 picks one) until the Scope closes. */
export const serve = (handler: Handler, port = 0): Effect.Effect<Fixture, never, Scope.Scope> =>
  Effect.gen(function*() {
    const seen: Array<Seen> = []
    const arrivals = yield* Queue.unbounded<Seen>()
    const node = http.createServer()
    const hangups = yield* Queue.unbounded<void>()
    node.on("request", (_, response: http.ServerResponse) =>
      response.on("close", () => {
        if (!response.writableEnded) hangups.unsafeOffer(undefined)
      }))
    const server = yield* NodeHttpServer.make(() => node, { host: "127.0.0.1", port }).pipe(Effect.orDie)
    // Closing the fixture is a server going away: open streams and idle connections drop.
    yield* Effect.addFinalizer(() => Effect.sync(() => node.closeAllConnections()))
    const app = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const text = request.method === "POST" ? yield* Effect.orDie(request.text) : ""
      const record: Seen = {
        method: request.method,
        url: request.url,
        headers: request.headers,
        body: text === "" ? undefined : JSON.parse(text)
      }
      seen.push(record)
      yield* Queue.offer(arrivals, record)
      return yield* handler(record)
    })
    yield* server.serve(app)
    const address = server.address as HttpServer.TcpAddress
    return {
      url: `http://127.0.0.1:${address.port}/mcp`,
      port: address.port,
      seen,
      next: (match) => Queue.take(arrivals).pipe(Effect.repeat({ until: match })),
      hangup: Queue.take(hangups)
    }
  })

/** One SSE event; `data` objects are sent as JSON. */
export interface Event {
  readonly id?: string
  readonly event?: string
  readonly retry?: number
  readonly data?: unknown
  /** A comment line (keep-alive). */
  readonly comment?: string
}

const encodeEvent = (event: Event): string => {
  let text = ""
  if (event.comment !== undefined) text += `: ${event.comment}\n`
  if (event.id !== undefined) text += `id: ${event.id}\n`
  if (event.event !== undefined) text += `event: ${event.event}\n`
  if (event.retry !== undefined) text += `retry: ${event.retry}\n`
  if (event.data !== undefined) {
    text += `data: ${typeof event.data === "string" ? event.data : JSON.stringify(event.data)}\n`
  }
  return text + "\n"
}

/**
 * An event-stream answer; `open` keeps it open after the events, `after` holds the events
 * back (not the headers) until it completes.
 */
export const sse = (
  events: ReadonlyArray<Event>,
  options: {
    readonly open?: boolean
    readonly headers?: Record<string, string>
    readonly after?: Effect.Effect<void>
  } = {}
): HttpServerResponse.HttpServerResponse => {
  const encoded = Stream.fromIterable(events).pipe(Stream.map((event) => new TextEncoder().encode(encodeEvent(event))))
  // A comment goes first, or the server would hold the headers back too.
  const body = options.after === undefined
    ? encoded
    : Stream.make(new TextEncoder().encode(": held\n\n")).pipe(
      Stream.concat(Stream.drain(Stream.fromEffect(options.after))),
      Stream.concat(encoded)
    )
  return HttpServerResponse.stream(options.open ? Stream.concat(body, Stream.never) : body, {
    contentType: "text/event-stream",
    headers: options.headers ?? {}
  })
}

/** A JSON answer. */
export const json = (body: unknown, headers: Record<string, string> = {}) =>
  HttpServerResponse.unsafeJson(body, { headers })

export const status = (code: number, body = "", headers: Record<string, string> = {}) =>
  HttpServerResponse.text(body, { status: code, headers })

export interface McpOptions {
  /** How requests are answered. Default: json. */
  readonly answer?: "json" | "sse"
  /** Whether initialize starts a session (Mcp-Session-Id). Default: true. */
  readonly sessions?: boolean
  /** The tools listed; each call of any of them echoes `arguments.text`. */
  readonly tools?: ReadonlyArray<string>
}

/** A plain Streamable HTTP MCP server, and the live sessions, which a test may forget. */
export const mcp = (options: McpOptions = {}) => {
  const sessions = new Set<string>()
  let made = 0
  const tools = options.tools ?? ["echo"]
  const answer = (message: unknown, headers: Record<string, string> = {}) =>
    Effect.succeed(
      options.answer === "sse" ? sse([{ event: "message", data: message }], { headers }) : json(message, headers)
    )
  const handler: Handler = (request) => {
    if (request.method === "GET") return Effect.succeed(status(405))
    const session = request.headers["mcp-session-id"]
    if (request.method === "DELETE") {
      if (session !== undefined) sessions.delete(session)
      return Effect.succeed(status(200))
    }
    const message = request.body
    if (message.method === "initialize") {
      const requested = message.params?.protocolVersion
      const result = {
        protocolVersion: ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"].includes(requested)
          ? requested
          : "2025-11-25",
        capabilities: { tools: { listChanged: true } },
        serverInfo: { name: "fixture", version: "1.0.0" }
      }
      const headers: Record<string, string> = {}
      if (options.sessions !== false) {
        const id = `session-${++made}`
        sessions.add(id)
        headers["mcp-session-id"] = id
      }
      return answer({ jsonrpc: "2.0", id: message.id, result }, headers)
    }
    if (options.sessions !== false && (session === undefined || !sessions.has(session))) {
      return Effect.succeed(status(session === undefined ? 400 : 404, "unknown session"))
    }
    if (message.id === undefined || message.method === undefined) return Effect.succeed(status(202))
    switch (message.method) {
      case "ping":
        return answer({ jsonrpc: "2.0", id: message.id, result: {} })
      case "tools/list":
        return answer({
          jsonrpc: "2.0",
          id: message.id,
          result: { tools: tools.map((name) => ({ name, inputSchema: { type: "object" } })) }
        })
      case "tools/call":
        return answer({ jsonrpc: "2.0", id: message.id, result: echo(message) })
      default:
        return answer({
          jsonrpc: "2.0",
          id: message.id,
          error: { code: -32601, message: `Method not found: ${message.method}` }
        })
    }
  }
  return { handler, sessions }
}

/** The result of echoing a tools/call request's `text` argument. */
export const echo = (message: any) => ({
  content: [{ type: "text", text: String(message.params?.arguments?.text ?? "") }]
})
