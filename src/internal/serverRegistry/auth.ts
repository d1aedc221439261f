/**
 * A server's OAuth in the fleet (internal to the registry). A remote server that refuses
 * its connection (401, or 403 `insufficient_scope`) while a `TokenStore` is in the fleet's
 * context gets one more attempt: before it, the refusal is recovered from (a refresh, or the
 * authorization when no person is needed); when a person is needed, the server is
 * `NeedsAuth` with the authorization URL until `ServerRegistry.authorize` runs it, or until
 * the store holds a new token for it (`mcp-fleet auth` in another process: `granted`).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as McpError from "../../McpError.js"
import * as OAuth from "../../OAuth.js"
import type * as ServerSpec from "../../ServerSpec.js"
import type * as StreamableHttp from "../../StreamableHttp.js"

/** One server's authorization across its sessions. */
export class AuthState {
  /** The refusal to recover from before the next connection. */
  private refusal: OAuth.Refusal | undefined
  /** Whether recovery from the current refusal was tried: a refusal after it is final. */
  private tried = false
  private auth: OAuth.ServerAuth | undefined
  private store: OAuth.TokenStore | undefined
  /** The access token the last connection was made with. */
  private sent: Redacted.Redacted<string> | undefined
  /** Where a person authorizes the server, once recovery found it needs one. */
  authorizationUrl: string | undefined

  /**
   * `learn` is told every token and key of the server the moment they are known (access,
   * refresh and DPoP material, a registered client's secret): they join its secrets, masked
   * in whatever it sends.
   */
  constructor(
    private readonly spec: ServerSpec.ServerSpec,
    private readonly learn: (secrets: ReadonlyArray<Redacted.Redacted<string>>) => void = () => {}
  ) {}

  private get remote(): ServerSpec.RemoteTransportSpec | undefined {
    const transport = this.spec.transport
    return transport.type === "http" || transport.type === "sse" ? transport : undefined
  }

  // The server's authorization, made on first use on the store of the context; none
  // without a store (OAuth off) or for a server that is not Streamable HTTP.
  private serverAuth: Effect.Effect<OAuth.ServerAuth | undefined> = Effect.suspend(() => {
    const remote = this.remote
    if (this.auth !== undefined || remote === undefined) return Effect.succeed(this.auth)
    return Effect.flatMap(
      Effect.serviceOption(OAuth.TokenStore),
      (store) =>
        Option.isNone(store) ? Effect.succeed(undefined) : OAuth.make({
          server: this.spec.name,
          url: remote.url,
          config: remote.oauth
        }).pipe(
          Effect.provideService(OAuth.TokenStore, store.value),
          Effect.provideService(OAuth.Authorizer, OAuth.deferredAuthorizer),
          Effect.tap((auth) =>
            Effect.sync(() => {
              this.auth = auth
              this.store = store.value
            })
          )
        )
    )
  })

  /**
   * Notes how a session failed; true when OAuth may recover from it, so that the server
   * tries once more instead of waiting in NeedsAuth.
   */
  refused(error: McpError.McpError): boolean {
    // Without a token store (made at the connection's start) there is no OAuth to try.
    if (this.auth === undefined || !error.needsAuth || error.reason._tag !== "Http") return false
    this.refusal = { status: error.reason.status, wwwAuthenticate: error.reason.wwwAuthenticate }
    return !this.tried
  }

  /** The connection is ready: the refusal is behind it. */
  ready(): void {
    this.refusal = undefined
    this.tried = false
    this.authorizationUrl = undefined
  }

  /**
   * The credentials of the next connection, after recovering from the last refusal: a
   * bearer token, or the per-request credentials of a DPoP-bound one. Fails with an Http
   * error (needsAuth) when a person must authorize, a Transport error when the
   * authorization or token store could not be reached.
   */
  readonly token: Effect.Effect<
    Option.Option<Redacted.Redacted<string> | StreamableHttp.RequestAuth>,
    McpError.McpError
  > = Effect.gen(
    this,
    function*() {
      const auth = yield* this.serverAuth
      if (auth === undefined) return Option.none()
      const refusal = this.refusal
      if (refusal !== undefined && !this.tried) {
        this.tried = true
        yield* Effect.catchAll(auth.recover(refusal), (error) => Effect.fail(this.failure(refusal, error)))
      }
      const credentials = yield* Effect.mapError(auth.credentials, (error) => this.failure(undefined, error))
      this.sent = Option.getOrUndefined(credentials)?.token
      yield* this.learnStored(this.sent)
      return Option.map(credentials, (given) => given.perRequest ?? given.token)
    }
  )

  /**
   * Whether the store holds a token for this server other than the one the last connection
   * was made with: someone authorized it meanwhile (another process sharing the store).
   */
  readonly granted: Effect.Effect<boolean> = Effect.suspend(() => {
    const sent = this.sent
    return Effect.map(
      this.held,
      (held) => held !== undefined && (sent === undefined || Redacted.value(held) !== Redacted.value(sent))
    )
  })

  // The tokens the store holds for this server (and its client's secret), and `sent`, told
  // to `learn` before any connection is made with them.
  private learnStored(sent: Redacted.Redacted<string> | undefined): Effect.Effect<void> {
    const { remote, store } = this
    if (sent !== undefined) this.learn([sent])
    if (store === undefined || remote === undefined) return Effect.void
    return store.listTokens.pipe(
      Effect.flatMap((records) => {
        const record = records.find((candidate) => candidate.serverUrl === remote.url)
        if (record === undefined) return Effect.void
        this.learn([record.accessToken, record.refreshToken, record.dpopKey].filter((s) => s !== undefined))
        return Effect.map(
          store.getClient(record.issuer),
          (client) =>
            Option.map(
              client,
              (found) => this.learn([found.clientSecret, found.privateKey].filter((s) => s !== undefined))
            )
        )
      }),
      Effect.ignore
    )
  }

  // The access token the store holds for this server, if any.
  private held: Effect.Effect<Redacted.Redacted<string> | undefined> = Effect.suspend(() => {
    const { store, remote } = this
    if (store === undefined || remote === undefined) return Effect.succeed(undefined)
    return store.listTokens.pipe(
      Effect.map((records) => records.find((record) => record.serverUrl === remote.url)?.accessToken),
      Effect.orElseSucceed(() => undefined)
    )
  })

  /** Runs the authorization with the Authorizer of the context. */
  readonly authorize: Effect.Effect<void, McpError.McpError, OAuth.Authorizer | OAuth.TokenStore> = Effect.gen(
    this,
    function*() {
      const auth = yield* this.serverAuth
      if (auth === undefined) {
        return yield* McpError.unsupported(
          this.spec.name,
          { message: "only Streamable HTTP servers are authorized with OAuth" }
        )
      }
      yield* Effect.mapError(auth.authorize, (error) => this.failure(undefined, error))
      // The grant made here is not one to pick up: the server connects again with it anyway.
      this.sent = yield* this.held
      this.ready()
    }
  )

  // An authorization failure as the fleet's error: a person is needed (needsAuth), or it
  // could not be done now (retryable).
  private failure(refusal: OAuth.Refusal | undefined, error: OAuth.OAuthError): McpError.McpError {
    if (error.step === "needsUser" || refusal !== undefined) {
      this.authorizationUrl = error.authorizationUrl
      // Said plainly: the refusal, then what a person must do, or why the recovery failed.
      return McpError.http(this.spec.name, {
        status: refusal?.status ?? 401,
        method: "our requests",
        body: error.step === "needsUser"
          ? `it needs authorization; run 'mcp-fleet auth ${this.spec.name}'`
          : `the authorization failed at ${error.step}: ${error.message}`,
        wwwAuthenticate: refusal?.wwwAuthenticate
      })
    }
    return McpError.transport(
      this.spec.name,
      { message: `OAuth ${error.step}: ${error.message}` }
    )
  }
}

/**
 * With a TokenStore in the fleet's context: whenever the store tells of new tokens (written
 * here or by another process, such as `mcp-fleet auth`), every server waiting in NeedsAuth
 * checks for a grant of its own and connects again when it has one.
 */
export const followGrants = (
  actors: ReadonlyMap<string, { readonly pickUpGrant: Effect.Effect<void> }>
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.flatMap(
    Effect.serviceOption(OAuth.TokenStore),
    (store) => {
      const changes = Option.getOrUndefined(store)?.changes
      return changes === undefined ? Effect.void : changes.pipe(
        Stream.runForEach(() => Effect.forEach(actors.values(), (actor) => actor.pickUpGrant, { discard: true })),
        Effect.forkScoped,
        Effect.asVoid
      )
    }
  )
