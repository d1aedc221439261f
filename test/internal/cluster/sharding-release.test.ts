// A runner's shard releases go to its runner storage one at a time (src/internal/cluster/sharding.ts
// `oneReleaseAtATime`): the cluster releases each shard a runner gives up in a fiber of its own,
// and SqlRunnerStorage runs them all on the connection its lock refresh needs. The refresh does
// not wait for them.
import * as RunnerAddress from "@effect/cluster/RunnerAddress"
import * as RunnerStorage from "@effect/cluster/RunnerStorage"
import * as ShardId from "@effect/cluster/ShardId"
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import { oneReleaseAtATime } from "../../../src/internal/cluster/sharding.js"

const address = RunnerAddress.make("127.0.0.1", 1)
const shards = Array.from({ length: 8 }, (_, i) => ShardId.make("default", i + 1))

describe("oneReleaseAtATime", () => {
  it.scoped("releases one shard at a time; a refresh meanwhile goes straight through", () =>
    Effect.gen(function*() {
      const gate = yield* Deferred.make<void>()
      const started = yield* Queue.unbounded<ShardId.ShardId>()
      let inFlight = 0
      let most = 0
      const released: Array<ShardId.ShardId> = []
      const memory = yield* RunnerStorage.makeMemory
      const inner = RunnerStorage.RunnerStorage.of({
        ...memory,
        release: (_, shardId) =>
          Effect.gen(function*() {
            most = Math.max(most, ++inFlight)
            yield* Queue.offer(started, shardId)
            yield* Deferred.await(gate)
            inFlight--
            released.push(shardId)
          }),
        refresh: (_, shardIds) => Effect.succeed([...shardIds])
      })
      const storage = yield* RunnerStorage.RunnerStorage.pipe(
        Effect.provide(Layer.provide(oneReleaseAtATime, Layer.succeed(RunnerStorage.RunnerStorage, inner)))
      )
      const releases = yield* Effect.forEach(shards, (shardId) => Effect.fork(storage.release(address, shardId)))
      yield* Queue.take(started)
      // Every release fiber has run as far as it can: one in the storage, the rest waiting.
      yield* Effect.yieldNow().pipe(
        Effect.zipRight(Effect.forEach(releases, Fiber.status)),
        Effect.repeat({ until: (statuses) => statuses.every((status) => status._tag === "Suspended") })
      )
      expect(inFlight).toBe(1)
      expect(yield* Queue.size(started)).toBe(0)
      expect(yield* storage.refresh(address, shards)).toEqual(shards)
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.joinAll(releases)
      expect(most).toBe(1)
      expect(released).toEqual(shards)
    }))
})
