import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import { fetchAll } from "../../../src/internal/serverRegistry/listing.js"
import * as McpClient from "../../../src/McpClient.js"
import * as Peer from "../../../src/Peer.js"
import { Transport } from "../../../src/Transport.js"
import { modernServer } from "../../support/modern.js"

const notFound = () => Effect.fail(new Peer.HandlerError({ code: -32601, message: "Method not found" }))

describe("listing: an optional list the server declared but does not answer", () => {
  it.scoped("a -32601 to resources/templates/list is an empty list, logged once; the other lists are kept", () =>
    Effect.gen(function*() {
      const logs: Array<string> = []
      const fake = yield* modernServer("s", { resources: {}, tools: {} }, {
        "resources/list": () => Effect.succeed({ resultType: "complete", resources: [{ uri: "a://b", name: "b" }] }),
        "resources/templates/list": notFound
      })
      const c = yield* McpClient.make().pipe(Effect.provideService(Transport, fake.transport))
      const capture = Logger.replace(
        Logger.defaultLogger,
        Logger.make(({ message }) => logs.push(String(message)))
      )
      const first = yield* fetchAll(c).pipe(Effect.provide(capture))
      expect(first.templates).toEqual([])
      expect(first.resources.map((r) => r.uri)).toEqual(["a://b"])
      const again = yield* fetchAll(c).pipe(Effect.provide(capture))
      expect(again.templates).toEqual([])
      const warned = logs.filter((line) => line.includes("resources/templates/list"))
      expect(warned).toEqual([
        "server 's' declares resources but answers resources/templates/list with -32601; taking it as empty"
      ])
    }))

  it.scoped("other errors still fail the listing", () =>
    Effect.gen(function*() {
      const fake = yield* modernServer("s", { resources: {} }, {
        "resources/templates/list": () => Effect.fail(new Peer.HandlerError({ code: -32603, message: "boom" }))
      })
      const c = yield* McpClient.make().pipe(Effect.provideService(Transport, fake.transport))
      const error = yield* Effect.flip(fetchAll(c))
      expect(error.message).toContain("boom")
    }))
})
