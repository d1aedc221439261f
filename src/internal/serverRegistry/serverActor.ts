/**
 * The supervised fiber of one configured server (internal to the registry). It connects,
 * lists what the server offers, keeps the lists fresh on list_changed, pings it if asked,
 * and when anything fails closes the connection's scope (process tree and pending calls
 * with it) and starts again under the restart policy. Calls go through it, so a call made
 * during a restart waits for the server instead of failing.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Random from "effect/Random"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Catalog from "../../Catalog.js"
import * as McpClient from "../../McpClient.js"
import * as McpError from "../../McpError.js"
import * as McpSchema from "../../McpSchema.js"
import { RegistryEvent } from "../../RegistryEvent.js"
import * as ServerSpec from "../../ServerSpec.js"
import { isTerminal, ServerState } from "../../ServerState.js"
import type { CallOptions, ClientOptions, Requirements, ServerStatus as Status } from "../../ServerRegistry.js"
import { Transport, type TransportService } from "../../Transport.js"

/**
 * What an actor needs besides its spec.
 */
export interface Options {
  readonly spec: ServerSpec.ServerSpec
  /** The fleet-wide restart policy; the spec's own fields override it. */
  readonly restart: ServerSpec.RestartPolicy
  /** How long to wait after list_changed for more before re-listing. */
  readonly refreshDebounce: Duration.DurationInput
  /** How mcp-fleet presents itself to servers. */
  readonly client: ClientOptions
  /** The lists of the actor this one replaces, so only real differences are published. */
  readonly initialLists?: Catalog.ServerLists | undefined
  /** Publishes an event; must never block. */
  readonly publish: (event: RegistryEvent) => Effect.Effect<void>
  /** Called with the server's lists whenever they change. */
  readonly listsChanged: (server: string, lists: Catalog.ServerLists) => Effect.Effect<void>
}

/**
 * One supervised server.
 */
export interface ServerActor {
  readonly name: string
  readonly spec: ServerSpec.ServerSpec
  /** The hash of the spec it runs. */
  readonly hash: string
  /** The state, with every change. */
  readonly state: SubscriptionRef.SubscriptionRef<ServerState>
  readonly status: () => Status
  readonly lists: () => Catalog.ServerLists
  /** Runs `f` with a ready connection, waiting for one if the server is starting. */
  readonly withClient: <A>(
    f: (client: McpClient.McpClient) => Effect.Effect<A, McpError.McpError>,
    options?: CallOptions | undefined
  ) => Effect.Effect<A, McpError.McpError>
  /** Closes the connection and connects again now, forgetting past failures. */
  readonly restart: Effect.Effect<void>
  readonly enable: Effect.Effect<void>
  readonly disable: Effect.Effect<void>
  /** Empties the lists, publishing the removals (for a server leaving the fleet). */
  readonly clear: Effect.Effect<void>
  /** The supervision loop; it runs until interrupted, and then the server is Stopped. */
  readonly run: Effect.Effect<never, never, Requirements>
}

type Control = "restart" | "enable" | "disable" | "wake"

// How a session ended while its scope was still open.
type Outcome =
  | { readonly _tag: "Failed"; readonly error: McpError.McpError; readonly readyFor: number }
  | { readonly _tag: "Idle" }
  | { readonly _tag: "Control"; readonly control: "restart" | "disable" }

type ListKind = "tools" | "resources" | "prompts"

const millis = (input: Duration.DurationInput) => Duration.toMillis(Duration.decode(input))

/**
 * The delay before retry number `attempt` (1 for the first retry): exponential, capped,
 * then varied by ±jitter, never past the cap.
 */
export const backoff = (policy: ServerSpec.RestartPolicy, attempt: number, random: number): number => {
  const max = millis(policy.maxDelay)
  const base = Math.min(max, millis(policy.initialDelay) * Math.pow(policy.factor, attempt - 1))
  return Math.round(Math.min(max, Math.max(0, base * (1 + policy.jitter * (2 * random - 1)))))
}

/**
 * Makes an actor; nothing runs until `run` is forked.
 */
export const make = (options: Options): Effect.Effect<ServerActor> =>
  Effect.gen(function*() {
    const { spec } = options
    const name = spec.name
    const policy: ServerSpec.RestartPolicy = { ...options.restart, ...spec.restart }
    const readyTimeout = millis(spec.readyTimeout ?? "30 seconds")
    const state = yield* SubscriptionRef.make<ServerState>(ServerState.Pending())
    const control = yield* Queue.unbounded<Control>()
    let now: ServerState = ServerState.Pending()
    let lists = options.initialLists ?? Catalog.emptyLists
    let client: McpClient.McpClient | undefined
    let connection: TransportService | undefined
    let lastError: McpError.McpError | undefined
    let disabled = spec.disabled === true
    let inFlight = 0
    let lastActivity = 0

    const setState = (next: ServerState) =>
      Effect.suspend(() => {
        const previous = now
        now = next
        if (next._tag === "Failed" || next._tag === "NeedsAuth") lastError = next.error
        return Effect.zipRight(
          SubscriptionRef.set(state, next),
          options.publish(RegistryEvent.ServerStateChanged({ server: name, state: next, previous }))
        )
      })

    // Replaces the lists and publishes what differs.
    const setLists = (next: Catalog.ServerLists) =>
      Effect.suspend(() => {
        const previous = lists
        lists = next
        const tools = Catalog.diff(previous.tools, next.tools, (tool) => tool.name)
        const resources = Catalog.diff(previous.resources, next.resources, (resource) => resource.uri)
        const templates = Catalog.diff(previous.templates, next.templates, (template) => template.uriTemplate)
        const prompts = Catalog.diff(previous.prompts, next.prompts, (prompt) => prompt.name)
        const events: Array<RegistryEvent> = []
        if (!Catalog.isEmptyDiff(tools)) events.push(RegistryEvent.ToolsChanged({ server: name, ...tools }))
        if (!Catalog.isEmptyDiff(resources)) events.push(RegistryEvent.ResourcesChanged({ server: name, ...resources }))
        if (!Catalog.isEmptyDiff(templates)) events.push(RegistryEvent.ResourceTemplatesChanged({ server: name, ...templates }))
        if (!Catalog.isEmptyDiff(prompts)) events.push(RegistryEvent.PromptsChanged({ server: name, ...prompts }))
        if (events.length === 0) return Effect.void
        return Effect.zipRight(
          options.listsChanged(name, next),
          Effect.forEach(events, options.publish, { discard: true })
        )
      })

    const has = (c: McpClient.McpClient, kind: ListKind) => c.capabilities[kind] !== undefined
    const fetch = (c: McpClient.McpClient, kind: ListKind): Effect.Effect<Partial<Catalog.ServerLists>, McpError.McpError> => {
      if (!has(c, kind)) return Effect.succeed(kind === "resources" ? { resources: [], templates: [] } : { [kind]: [] })
      switch (kind) {
        case "tools":
          return Effect.map(c.listTools(), (tools) => ({ tools }))
        case "prompts":
          return Effect.map(c.listPrompts(), (prompts) => ({ prompts }))
        case "resources":
          return Effect.map(
            Effect.all([c.listResources(), c.listResourceTemplates()], { concurrency: 2 }),
            ([resources, templates]) => ({ resources, templates })
          )
      }
    }
    const fetchAll = (c: McpClient.McpClient) =>
      Effect.map(
        Effect.all([fetch(c, "tools"), fetch(c, "resources"), fetch(c, "prompts")], { concurrency: 3 }),
        (parts): Catalog.ServerLists => Object.assign({}, Catalog.emptyLists, ...parts)
      )

    // Re-lists the kinds that changed; a failure keeps the last good list.
    const refresh = (c: McpClient.McpClient, kinds: ReadonlySet<ListKind>) =>
      Effect.forEach(kinds, (kind) =>
        fetch(c, kind).pipe(
          Effect.flatMap((part) => setLists({ ...lists, ...part })),
          Effect.catchAll((error) =>
            Effect.zipRight(
              Effect.logWarning(`server '${name}': re-listing ${kind} failed; keeping the last list: ${error.message}`),
              options.publish(RegistryEvent.RefreshFailed({ server: name, list: kind, error }))
            )
          )
        ), { discard: true })

    // Routes the server's notifications: list changes to a debounced re-list, the rest to events.
    const watchNotifications = (c: McpClient.McpClient) =>
      Effect.gen(function*() {
        const incoming = yield* c.subscribe
        const dirty = new Set<ListKind>()
        const changed = yield* Queue.sliding<void>(1)
        yield* Stream.fromQueue(changed).pipe(
          Stream.debounce(options.refreshDebounce),
          Stream.runForEach(() =>
            Effect.suspend(() => {
              const kinds = new Set(dirty)
              dirty.clear()
              return refresh(c, kinds)
            })
          ),
          Effect.forkScoped
        )
        const markDirty = (kind: ListKind) => Effect.zipRight(Effect.sync(() => dirty.add(kind)), Queue.offer(changed, undefined))
        yield* Queue.take(incoming).pipe(
          Effect.flatMap((message) => {
            switch (message.method) {
              case McpSchema.Method.ToolsListChanged:
                return markDirty("tools")
              case McpSchema.Method.ResourcesListChanged:
                return markDirty("resources")
              case McpSchema.Method.PromptsListChanged:
                return markDirty("prompts")
              case McpSchema.Method.ResourcesUpdated:
              case McpSchema.Method.LoggingMessage: {
                const decoded = McpSchema.decodeServerNotification(message.method, message.params)
                if (Either.isLeft(decoded)) {
                  return Effect.logWarning(`server '${name}' sent a malformed ${message.method}; skipped`)
                }
                const notification = decoded.right
                if (!McpSchema.isKnownServerNotification(notification)) return Effect.void
                if (notification.method === McpSchema.Method.ResourcesUpdated) {
                  return options.publish(RegistryEvent.ResourceUpdated({ server: name, uri: notification.params.uri }))
                }
                if (notification.method === McpSchema.Method.LoggingMessage) {
                  const { data, level, logger } = notification.params
                  return options.publish(RegistryEvent.LogMessage({ server: name, level, logger, data }))
                }
                return Effect.void
              }
              default:
                return Effect.void
            }
          }),
          Effect.forever,
          Effect.forkScoped
        )
      })

    // Fails after `failures` pings in a row went unanswered.
    const healthCheck = (c: McpClient.McpClient): Effect.Effect<never, McpError.McpError> => {
      const health = spec.health
      if (health === undefined) return Effect.never
      const limit = health.failures ?? 3
      let failed = 0
      return Effect.sleep(health.interval).pipe(
        Effect.zipRight(
          c.request(McpSchema.Method.Ping, undefined, McpSchema.EmptyResult, { timeout: health.timeout ?? "10 seconds" })
        ),
        Effect.matchEffect({
          onSuccess: () => Effect.sync(() => failed = 0),
          onFailure: (error) => ++failed >= limit ? Effect.fail(error) : Effect.void
        }),
        Effect.forever
      )
    }

    // Completes once the server has had no call in flight for its idle timeout.
    const idleWatch: Effect.Effect<void> = spec.idleTimeout === undefined ? Effect.never : Effect.gen(function*() {
      const idle = millis(spec.idleTimeout!)
      while (true) {
        const at = yield* Clock.currentTimeMillis
        const quietFor = at - lastActivity
        if (inFlight === 0 && quietFor >= idle) return
        yield* Effect.sleep(inFlight === 0 ? idle - quietFor : idle)
      }
    })

    const takeControl = <C extends Control>(accepted: ReadonlyArray<C>): Effect.Effect<C> =>
      Queue.take(control).pipe(
        Effect.repeat({ until: (c): c is C => (accepted as ReadonlyArray<Control>).includes(c) }),
        Effect.map((c) => c as C)
      )

    // One connection, from spawn to its first failure, idle timeout or control request.
    // The scope stays open until the caller has moved the state off Ready.
    const session = (scope: Scope.CloseableScope): Effect.Effect<Outcome, never, Requirements> => {
      let readySince: number | undefined
      const serve = Effect.gen(function*() {
        const transport = yield* ServerSpec.connect(spec)
        connection = transport
        const c = yield* McpClient.make({
          ...options.client,
          initializeTimeout: spec.initializeTimeout,
          requestTimeout: spec.requestTimeout
        }).pipe(Effect.provideService(Transport, transport))
        yield* watchNotifications(c)
        yield* setLists(yield* fetchAll(c))
        readySince = yield* Clock.currentTimeMillis
        lastActivity = readySince
        client = c
        yield* setState(ServerState.Ready({ protocolVersion: c.protocolVersion, serverInfo: c.serverInfo, since: readySince }))
        const ended = yield* Effect.raceAll([
          c.closed,
          Effect.flip(healthCheck(c)),
          Effect.as(idleWatch, "idle" as const)
        ])
        return ended === "idle" ? { _tag: "Idle" } as const : yield* Effect.fail(ended)
      })
      return Effect.raceFirst(
        Scope.extend(serve, scope),
        Effect.map(takeControl(["restart", "disable"]), (c): Outcome => ({ _tag: "Control", control: c }))
      ).pipe(
        Effect.catchAll((error) =>
          Effect.map(Clock.currentTimeMillis, (at): Outcome => ({
            _tag: "Failed",
            error,
            readyFor: readySince === undefined ? 0 : at - readySince
          }))
        ),
        // Calls stop going to this connection before anything else happens.
        Effect.ensuring(Effect.sync(() => client = undefined))
      )
    }

    // Sets the state that follows a session, closes the session's scope (process tree and
    // pending calls with it), then waits as that state requires.
    const afterSession = (outcome: Outcome, scope: Scope.CloseableScope, failures: number) =>
      Effect.gen(function*() {
        switch (outcome._tag) {
          case "Control": {
            if (outcome.control === "disable") disabled = true
            else yield* setState(ServerState.Pending())
            yield* Scope.close(scope, Exit.void)
            return 0
          }
          case "Idle": {
            yield* setState(ServerState.Idle({ since: yield* Clock.currentTimeMillis }))
            yield* Scope.close(scope, Exit.void)
            if ((yield* takeControl(["wake", "restart", "disable"])) === "disable") disabled = true
            return 0
          }
          case "Failed": {
            const attempt = (outcome.readyFor >= millis(policy.stableAfter) ? 0 : failures) + 1
            const error = outcome.error
            // A server that refuses us without credentials waits for new ones (a config change
            // or a restart) instead of being asked again and again.
            const auth = error.needsAuth
            const permanent = !error.retryable ||
              (policy.maxAttempts !== undefined && attempt >= policy.maxAttempts)
            const at = yield* Clock.currentTimeMillis
            const delay = permanent ? 0 : backoff(policy, attempt, yield* Random.next)
            yield* setState(
              auth
                ? ServerState.NeedsAuth({ error })
                : ServerState.Failed({ error, attempt, retryAt: permanent ? undefined : at + delay })
            )
            yield* Effect.logWarning(error.message).pipe(Effect.annotateLogs({ server: name, attempt }))
            yield* Scope.close(scope, Exit.fail(error))
            if (permanent) {
              yield* setLists(Catalog.emptyLists)
              if ((yield* takeControl(["restart", "enable", "disable"])) === "disable") disabled = true
              return 0
            }
            const left = at + delay - (yield* Clock.currentTimeMillis)
            const early = yield* Effect.raceFirst(
              Effect.as(Effect.sleep(Math.max(0, left)), undefined),
              takeControl(["restart", "disable"])
            )
            if (early === "disable") disabled = true
            return early === undefined ? attempt : 0
          }
        }
      })

    const run: ServerActor["run"] = Effect.gen(function*() {
      // Failed attempts in a row; reset by a stable session, a restart or an enable.
      let failures = 0
      while (true) {
        if (disabled) {
          yield* setLists(Catalog.emptyLists)
          yield* setState(ServerState.Disabled())
          yield* takeControl(["enable", "restart"])
          disabled = false
          failures = 0
        } else if (spec.problem !== undefined) {
          const error = McpError.make(name, new McpError.ConfigReason({ message: spec.problem }))
          yield* setState(ServerState.Failed({ error, attempt: 1, retryAt: undefined }))
          if ((yield* takeControl(["disable", "restart"])) === "disable") disabled = true
        } else {
          yield* setState(ServerState.Connecting({ attempt: failures + 1 }))
          failures = yield* Effect.acquireUseRelease(
            Scope.make(),
            (scope) => Effect.flatMap(session(scope), (outcome) => afterSession(outcome, scope, failures)),
            (scope, exit) => Scope.close(scope, exit)
          )
        }
      }
    }).pipe(
      Effect.onInterrupt(() => setState(ServerState.Stopped()))
    )

    const readyClient = Effect.suspend((): Effect.Effect<Option.Option<McpClient.McpClient>, McpError.McpError> => {
      if (client !== undefined) return Effect.succeed(Option.some(client))
      if (isTerminal(now)) {
        return Effect.fail(McpError.make(
          name,
          new McpError.UnavailableReason({ state: now._tag, message: unavailable(now) })
        ))
      }
      return now._tag === "Idle" ? Effect.as(Queue.offer(control, "wake"), Option.none()) : Effect.succeed(Option.none())
    })

    const awaitClient = (timeout: number) =>
      state.changes.pipe(
        Stream.mapEffect(() => readyClient),
        Stream.filterMap((found) => found),
        Stream.runHead,
        Effect.flatMap(Option.match({
          onNone: () => Effect.die("the state stream ended"),
          onSome: Effect.succeed
        })),
        Effect.timeoutFail({
          duration: timeout,
          onTimeout: () =>
            McpError.make(
              name,
              new McpError.UnavailableReason({
                state: now._tag,
                message: `was not ready within ${timeout} ms (${lastError ? `last error: ${lastError.message}` : now._tag})`
              })
            )
        })
      )

    const withClient: ServerActor["withClient"] = (f, callOptions) =>
      Effect.suspend(() => {
        const use = (c: McpClient.McpClient) =>
          Effect.suspend(() => {
            inFlight++
            return f(c).pipe(
              Effect.ensuring(Effect.flatMap(Clock.currentTimeMillis, (at) =>
                Effect.sync(() => {
                  inFlight--
                  lastActivity = at
                })
              ))
            )
          })
        if (client !== undefined) return use(client)
        const timeout = callOptions?.readyTimeout === undefined ? readyTimeout : millis(callOptions.readyTimeout)
        return Effect.flatMap(awaitClient(timeout), use)
      })

    const send = (c: Control) => Queue.offer(control, c).pipe(Effect.asVoid)

    return {
      name,
      spec,
      hash: ServerSpec.hash(spec),
      state,
      status: () => ({
        name,
        state: now,
        // What the connection turned out to be: an http server may have fallen back to sse.
        transport: client !== undefined && connection?.kind === "sse" ? "sse" : spec.transport.type,
        required: spec.required === true,
        protocolVersion: client?.protocolVersion,
        serverInfo: client?.serverInfo,
        counts: {
          tools: lists.tools.length,
          resources: lists.resources.length,
          templates: lists.templates.length,
          prompts: lists.prompts.length
        },
        lastError,
        connection: client === undefined ? undefined : connection?.info()
      }),
      lists: () => lists,
      withClient,
      restart: send("restart"),
      enable: Effect.zipRight(Effect.sync(() => disabled = false), send("enable")),
      disable: Effect.zipRight(Effect.sync(() => disabled = true), send("disable")),
      clear: setLists(Catalog.emptyLists),
      run
    } satisfies ServerActor
  })

const unavailable = (state: ServerState): string => {
  switch (state._tag) {
    case "Disabled":
      return "is disabled"
    case "Stopped":
      return "is stopped"
    case "NeedsAuth":
      return `needs authorization: ${state.error.message}`
    case "Failed":
      return `failed after ${state.attempt} attempt${state.attempt === 1 ? "" : "s"} and is not retried: ${state.error.message}`
    default:
      return `is ${state._tag}`
  }
}
