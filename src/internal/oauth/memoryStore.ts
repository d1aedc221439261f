/**
 * The token store in memory: maps, a semaphore per key for `withLock`, and its writes told
 * through a PubSub.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Stream from "effect/Stream"
import type { ClientRecord, TokenRecord, TokenStore } from "./model.js"

/** A store in memory. */
export const make: Effect.Effect<TokenStore> = Effect.map(PubSub.sliding<void>(16), (written) => {
  const changed = PubSub.publish(written, undefined)
  const tokens = new Map<string, TokenRecord>()
  const clients = new Map<string, ClientRecord>()
  const locks = new Map<string, Effect.Semaphore>()
  const key = (issuer: string, resource: string) => `${issuer}\n${resource}`
  return {
    getTokens: (issuer, resource) => Effect.sync(() => Option.fromNullable(tokens.get(key(issuer, resource)))),
    setTokens: (record) =>
      Effect.zipRight(Effect.sync(() => void tokens.set(key(record.issuer, record.resource), record)), changed),
    removeTokens: (issuer, resource) =>
      Effect.zipRight(Effect.sync(() => void tokens.delete(key(issuer, resource))), changed),
    listTokens: Effect.sync(() => [...tokens.values()]),
    getClient: (issuer) => Effect.sync(() => Option.fromNullable(clients.get(issuer))),
    setClient: (record) => Effect.sync(() => void clients.set(record.issuer, record)),
    withLock: (name, effect) =>
      Effect.suspend(() => {
        let lock = locks.get(name)
        if (lock === undefined) {
          lock = Effect.unsafeMakeSemaphore(1)
          locks.set(name, lock)
        }
        return lock.withPermits(1)(effect)
      }),
    changes: Stream.fromPubSub(written)
  }
})
