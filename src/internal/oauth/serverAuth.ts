/**
 * One server's authorization: which token to send, what to do after a refusal, and the
 * refreshes, single-flight in this process (a semaphore) and across processes (the store's
 * lock, under which the store is read again before refreshing).
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Challenge from "./challenge.js"
import { discover, type Discovered } from "./discovery.js"
import * as Dpop from "./dpop.js"
import * as Flow from "./flow.js"
import { REDIRECT_URI } from "./headless.js"
import {
  Authorizer,
  type Config,
  MAX_STEP_UPS,
  OAuthError,
  type Refusal,
  type ServerAuth,
  type TokenRecord,
  TokenStore
} from "./model.js"

/** A token expiring sooner than this is refreshed before it is sent. */
const EARLY_MS = 60_000

const same = (a: Redacted.Redacted<string> | undefined, b: Redacted.Redacted<string> | undefined) =>
  a === undefined || b === undefined ? a === b : Redacted.value(a) === Redacted.value(b)

const words = (scope: string | undefined) => (scope ?? "").split(" ").filter((word) => word !== "")

/** The union of scopes, in order of first appearance; undefined when empty. */
export const unionScopes = (...scopes: ReadonlyArray<string | undefined>): string | undefined => {
  const all = [...new Set(scopes.flatMap(words))]
  return all.length === 0 ? undefined : all.join(" ")
}

/**
 * The scopes of a first authorization: configured, else the challenge's, else the
 * resource's `scopes_supported`, else none; `offline_access` added when the authorization
 * server supports it (for a refresh token).
 */
export const selectScope = (config: Config, refusal: Challenge.Refusal | undefined, discovered: Discovered) => {
  const base = config.scopes !== undefined && config.scopes.length > 0
    ? config.scopes.join(" ")
    : refusal?.scope ?? discovered.resourceScopes?.join(" ")
  if (base === undefined) return undefined
  return discovered.as.scopes_supported?.includes("offline_access") === true
    ? unionScopes(base, "offline_access")
    : base
}

/**
 * The grants of one server: its client at an authorization server (registered once, kept),
 * and `authorizeWith`, which runs the grant the config and the server call for (one that
 * needs no person, else the code grant through the authorizer) and stores its tokens, bound
 * to a DPoP key where DPoP is used.
 */
const grants = (server: string, url: string, config: Config, store: TokenStore) => {
  const client = (found: Discovered, redirectUri = REDIRECT_URI) =>
    Effect.gen(function*() {
      const known = yield* store.getClient(found.as.issuer)
      const { record, registered } = yield* Flow.identify(server, config, found.as, known, redirectUri)
      if (registered) yield* store.setClient(record)
      return record
    })

  // The DPoP key of a grant: none when DPoP is not used with this authorization server,
  // else the one held (a new authorization keeps the server's key), else a new one.
  const dpopKeyFor = (found: Discovered) =>
    Effect.gen(function*() {
      const alg = Dpop.algorithmFor(found.as, config.dpop)
      if (alg === undefined) return undefined
      const held = Option.getOrUndefined(yield* store.getTokens(found.as.issuer, found.resource))
      return held?.dpopKey ?? (yield* Effect.promise(() => Dpop.generateKey(alg)))
    })

  // A grant that needs no person, when the config and the server allow one: enterprise-
  // managed, a workload's JWT, or client credentials at a server for machines only.
  const machineGrant = (grant: Omit<Flow.Grant, "client">) => {
    const { as } = grant.discovered
    if (config.enterprise !== undefined && Flow.takesJwtBearer(as)) {
      const idp = config.enterprise
      return Effect.flatMap(
        client(grant.discovered),
        (record) => Flow.enterprise(server, { ...grant, client: record }, idp)
      )
    }
    if (config.assertion !== undefined && Flow.takesJwtBearer(as)) {
      const record = { issuer: as.issuer, clientId: config.clientId ?? "mcp-fleet", authMethod: "none" as const }
      return Flow.jwtBearer(server, { ...grant, client: record }, config.assertion)
    }
    if (Flow.isMachineOnly(as) && config.clientId !== undefined) {
      return Effect.flatMap(
        client(grant.discovered),
        (record) => Flow.clientCredentials(server, { ...grant, client: record })
      )
    }
    return undefined
  }

  const authorizeWith = (found: Discovered, scope: string | undefined, by: Authorizer) =>
    Effect.scoped(Effect.gen(function*() {
      const grant = { discovered: found, scope, dpopKey: yield* dpopKeyFor(found) }
      const tokens = yield* (machineGrant(grant) ?? Effect.gen(function*() {
        const session = yield* by.open(server, config.callbackPort)
        const record = yield* client(found, session.redirectUri)
        return yield* Flow.authorizationCode(server, { ...grant, client: record }, session)
      }))
      yield* store.setTokens({ ...tokens, server, serverUrl: url })
    }))

  return { client, authorizeWith }
}

/**
 * What the parts of one server's authorization share: the server, its config, store and
 * grants, the permit that makes them single-flight, and what they learned on the way.
 */
interface Shared {
  readonly server: string
  readonly url: string
  readonly config: Config
  readonly store: TokenStore
  readonly grants: ReturnType<typeof grants>
  readonly permit: Effect.Semaphore
  discovered: Discovered | undefined
  stepUps: number
  // Whether the last recovery was a refresh: a refusal right after it means authorizing.
  refreshedLast: boolean
}

const discoverNow = (shared: Shared, refusal: Challenge.Refusal | undefined) =>
  Effect.tap(
    discover(shared.server, shared.url, refusal),
    (found) => Effect.sync(() => void (shared.discovered = found))
  )

// The stored tokens: by the discovered issuer and resource, else any for this URL.
const stored = (shared: Shared) =>
  Effect.suspend(() =>
    shared.discovered !== undefined
      ? shared.store.getTokens(shared.discovered.as.issuer, shared.discovered.resource)
      : Effect.map(
        shared.store.listTokens,
        (all) => Option.fromNullable(all.find((record) => record.serverUrl === shared.url))
      )
  )

// Refreshes `held` under the store's lock, unless another process already has.
const refresh = (shared: Shared, held: TokenRecord) =>
  shared.store.withLock(
    `${held.issuer}\n${held.resource}`,
    Effect.gen(function*() {
      const { server, store } = shared
      const latest = Option.getOrElse(yield* store.getTokens(held.issuer, held.resource), () => held)
      const now = yield* Clock.currentTimeMillis
      const fresh = latest.expiresAt === undefined || latest.expiresAt - now > EARLY_MS
      if (!same(latest.refreshToken, held.refreshToken) && fresh) return latest
      if (latest.refreshToken === undefined) {
        return yield* new OAuthError({ server, step: "refresh", message: "no refresh token", grantRevoked: true })
      }
      const found = shared.discovered ?? (yield* discoverNow(shared, undefined))
      const grant = {
        discovered: found,
        client: yield* shared.grants.client(found),
        scope: latest.scope,
        dpopKey: latest.dpopKey
      }
      // Not interrupted between the request and the write: a rotated refresh token the
      // server has issued is kept, never lost to a connection given up meanwhile.
      return yield* Effect.uninterruptible(Effect.gen(function*() {
        const next = yield* Flow.refresh(server, grant, latest.refreshToken!).pipe(
          Effect.tapError((error) =>
            Flow.isGrantRevoked(error) ? store.removeTokens(latest.issuer, latest.resource) : Effect.void
          )
        )
        const record: TokenRecord = { ...next, server, serverUrl: shared.url }
        yield* store.setTokens(record)
        return record
      }))
    })
  )

// The record to send, refreshed first when it expires within EARLY_MS.
const current = (shared: Shared) =>
  shared.permit.withPermits(1)(Effect.gen(function*() {
    const held = yield* stored(shared)
    if (Option.isNone(held)) {
      return Option.none<TokenRecord>()
    }
    const record = held.value
    const at = yield* Clock.currentTimeMillis
    if (record.expiresAt === undefined || record.expiresAt - at > EARLY_MS || record.refreshToken === undefined) {
      return held
    }
    const next = yield* Effect.either(refresh(shared, record))
    if (next._tag === "Right") {
      return Option.some(next.right)
    }
    if (Flow.isGrantRevoked(next.left)) {
      return Option.none<TokenRecord>()
    }
    return yield* next.left
  }))

// A 403 insufficient_scope: authorized again for the scopes held plus those asked, a bounded
// number of times in a row.
const stepUp = (
  shared: Shared,
  found: Discovered,
  held: Option.Option<TokenRecord>,
  refusal: Challenge.Refusal,
  authorizer: Authorizer
) =>
  Effect.gen(function*() {
    shared.stepUps += 1
    if (shared.stepUps > MAX_STEP_UPS) {
      return yield* new OAuthError({
        server: shared.server,
        step: "authorization",
        message: `still refused for insufficient scope after ${MAX_STEP_UPS} step-up authorizations`
      })
    }
    const granted = Option.getOrUndefined(Option.flatMapNullable(held, (record) => record.scope))
    return yield* shared.grants.authorizeWith(found, unionScopes(granted, refusal.scope), authorizer)
  })

// After a refusal: a step-up, else a refresh (unless one just failed to help), else the grant again.
const recover = (shared: Shared, authorizer: Authorizer) => (given: Refusal) =>
  shared.permit.withPermits(1)(Effect.gen(function*() {
    const refusal = Challenge.refusal(given.status, given.wwwAuthenticate)
    // Discovered again each time: the resource may have moved to another authorization server.
    const found = yield* discoverNow(shared, refusal)
    const held = yield* shared.store.getTokens(found.as.issuer, found.resource)
    if (refusal.status === 403 && refusal.error === "insufficient_scope") {
      return yield* stepUp(shared, found, held, refusal, authorizer)
    }
    if (Option.isSome(held) && held.value.refreshToken !== undefined && !shared.refreshedLast) {
      const next = yield* Effect.either(refresh(shared, held.value))
      if (next._tag === "Right") {
        shared.refreshedLast = true
        return
      }
      if (!Flow.isGrantRevoked(next.left)) return yield* next.left
    }
    shared.refreshedLast = false
    yield* shared.grants.authorizeWith(found, selectScope(shared.config, refusal, found), authorizer)
  }))

const authorize = (shared: Shared) =>
  Effect.flatMap(Authorizer, (by) =>
    shared.permit.withPermits(1)(Effect.gen(function*() {
      const found = yield* discoverNow(shared, undefined)
      shared.stepUps = 0
      shared.refreshedLast = false
      yield* shared.grants.authorizeWith(found, selectScope(shared.config, undefined, found), by)
    })))

const logout = (shared: Shared) =>
  shared.permit.withPermits(1)(Effect.gen(function*() {
    const all = yield* shared.store.listTokens
    for (const record of all) {
      if (record.serverUrl === shared.url) yield* shared.store.removeTokens(record.issuer, record.resource)
    }
  }))

/** A server's authorization, on the store and authorizer of the context. */
export const make = (options: {
  readonly server: string
  readonly url: string
  readonly config?: Config | undefined
}): Effect.Effect<ServerAuth, never, TokenStore | Authorizer> =>
  Effect.gen(function*() {
    const store = yield* TokenStore
    const authorizer = yield* Authorizer
    const { server, url } = options
    const config = options.config ?? {}
    const shared: Shared = {
      server,
      url,
      config,
      store,
      grants: grants(server, url, config, store),
      permit: yield* Effect.makeSemaphore(1),
      discovered: undefined,
      stepUps: 0,
      refreshedLast: false
    }
    const clock = yield* Effect.clock
    const credentialsOf = Dpop.credentials(() => clock.unsafeCurrentTimeMillis())
    const record = current(shared)
    return {
      server,
      accessToken: Effect.map(record, Option.map((held) => held.accessToken)),
      credentials: Effect.map(record, Option.map(credentialsOf)),
      recover: recover(shared, authorizer),
      authorize: authorize(shared),
      logout: logout(shared)
    } satisfies ServerAuth
  })
