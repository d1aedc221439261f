// The HttpWire seam: a transport's Context takes the HttpWire in context when it stands for
// the HttpClient in context, and otherwise carries each exchange through that HttpClient.
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import { HttpWire } from "../../../src/HttpWire.js"
import * as Http from "../../../src/internal/transport/http.js"
import { fakeWire } from "./fakeWire.js"

const answering = (body: string) =>
  HttpClient.make((request) =>
    Effect.succeed(
      HttpClientResponse.fromWeb(request, new Response(body, { status: 200, headers: { "x-by": "client" } }))
    )
  )

describe("HttpWire", () => {
  it.scoped("a transport dispatches on the HttpWire of the HttpClient in context", () =>
    Effect.gen(function*() {
      const { wire } = fakeWire()
      const client = answering("unused")
      const ctx = yield* Http.makeContext({ name: "fixture" }).pipe(
        Effect.provideService(HttpWire, { client, exchange: wire }),
        Effect.provideService(HttpClient.HttpClient, client)
      )
      expect(ctx.wire).toBe(wire)
    }))

  it.scoped("a wire of another client (the one in context derived from it) is not used", () =>
    Effect.gen(function*() {
      const { wire } = fakeWire()
      const client = answering("unused")
      const ctx = yield* Http.makeContext({ name: "fixture" }).pipe(
        Effect.provideService(HttpWire, { client, exchange: wire }),
        Effect.provideService(HttpClient.HttpClient, HttpClient.mapRequest(client, (request) => request))
      )
      expect(ctx.wire).not.toBe(wire)
    }))

  it.scoped("without one, an exchange goes through the HttpClient's execute", () =>
    Effect.gen(function*() {
      const ctx = yield* Http.makeContext({ name: "fixture" }).pipe(
        Effect.provideService(HttpClient.HttpClient, answering("hello"))
      )
      const ended = yield* Deferred.make<{ status: number; by: unknown; body: string }>()
      let status = 0
      let by: unknown
      let body = ""
      ctx.wire({ method: "POST", url: "http://127.0.0.1:9/mcp", headers: {}, body: "{}" }, {
        onHeaders: (s, headers) => {
          status = s
          by = headers["x-by"]
        },
        onData: (chunk) => void (body += new TextDecoder().decode(chunk)),
        onEnd: () => void Deferred.unsafeDone(ended, Effect.succeed({ status, by, body })),
        onError: (cause) => void Deferred.unsafeDone(ended, Effect.die(cause))
      })
      expect(yield* Deferred.await(ended)).toEqual({ status: 200, by: "client", body: "hello" })
    }))
})
