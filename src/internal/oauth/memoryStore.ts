/**
 * The token store in memory: maps, and a semaphore per key for `withLock`.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { ClientRecord, TokenRecord, TokenStoreService } from "./model.js"

/** A store in memory. */
export const make: Effect.Effect<TokenStoreService> = Effect.sync(() => {
  const tokens = new Map<string, TokenRecord>()
  const clients = new Map<string, ClientRecord>()
  const locks = new Map<string, Effect.Semaphore>()
  const key = (issuer: string, resource: string) => `${issuer}\n${resource}`
  return {
    getTokens: (issuer, resource) => Effect.sync(() => Option.fromNullable(tokens.get(key(issuer, resource)))),
    setTokens: (record) => Effect.sync(() => void tokens.set(key(record.issuer, record.resource), record)),
    removeTokens: (issuer, resource) => Effect.sync(() => void tokens.delete(key(issuer, resource))),
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
      })
  }
})
