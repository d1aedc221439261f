/**
 * The fleet on a page: a live dashboard served over HTTP on Web `Request`/`Response`, for a
 * person to look at instead of read. It shows every server (state, revision, pid, uptime,
 * restarts, last error with its stderr tail), the catalog with each tool's arguments and a
 * form made from its inputSchema to run it through the Policy, the event stream, the drifted
 * tools with a before/after diff to approve, the project configs waiting for trust, and
 * per-server call rate, error rate and p50/p99 latency over time, from the client operation
 * metric (`mcp.client.operation.duration`).
 *
 * Live means Server-Sent Events: each open page holds one stream, sent the whole state on
 * every change (debounced) and each event as it happens. A call run from the page that meets
 * an `ask` rule waits for a person in the page: the dashboard is that call's approver
 * (`approval`, which an edge may also give the Policy, so that `serve --dashboard` asks there).
 *
 * Protected like a local notebook server: a random token in the URL printed at start, then an
 * HttpOnly SameSite cookie; Host must be a loopback name (or the bound address) and Origin the
 * page's own, so neither a DNS-rebinding page nor another local site can use it; the page's
 * Content-Security-Policy loads nothing from elsewhere. It shows only what the fleet already
 * masked: no spec, env or header is read. `NodeDashboard` (Node) serves it on node:http.
 *
 * @since 0.6.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Runtime from "effect/Runtime"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { randomHex } from "./internal/crypto.js"
import * as Asks from "./internal/dashboard/asks.js"
import * as Guard from "./internal/dashboard/guard.js"
import * as Hub from "./internal/dashboard/hub.js"
import * as Metrics from "./internal/dashboard/metrics.js"
import type * as Page from "./internal/dashboard/page.js"
import * as Routes from "./internal/dashboard/routes.js"
import * as State from "./internal/dashboard/state.js"
import { traced } from "./internal/traced.js"
import * as Policy from "./Policy.js"
import type { RegistryEvent } from "./RegistryEvent.js"
import * as ServerRegistry from "./ServerRegistry.js"

/**
 * The built front end the page loads: its script and its style sheet (`NodeDashboard.assets`
 * reads the package's).
 *
 * @since 0.6.0
 * @category models
 */
export interface Assets extends Page.Assets {}

/**
 * A project config file waiting for trust, as the page lists it.
 *
 * @since 0.6.0
 * @category models
 */
export interface Untrusted extends State.Untrusted {}

/**
 * The project configs waiting for trust, and how the page trusts one (the CLI's are
 * ConfigTrust's records).
 *
 * @since 0.6.0
 * @category models
 */
export interface TrustQueue extends State.TrustQueue {}

/**
 * The page as an approver of `ask` rules: asks wait in every open page until a person
 * answers there.
 *
 * @since 0.6.0
 * @category models
 */
export interface Approver extends Asks.Asks {}

/**
 * Makes an approver before the dashboard itself, for a Policy made first (give it to
 * `Options.approver` too).
 *
 * @since 0.6.0
 * @category constructors
 */
export const makeApprover = (): Approver => Asks.make(Policy.ruleText)

/**
 * Options of a dashboard.
 *
 * @since 0.6.0
 * @category models
 */
export interface Options {
  readonly assets: Assets
  /** The token of the URL; default: 32 random bytes, in hex. */
  readonly token?: string | undefined
  /** The address it is bound to: Host may name it besides the loopback names. */
  readonly host?: string | undefined
  /** Where `ask` rules of the page's calls wait; default: one of its own. */
  readonly approver?: Approver | undefined
  /** The project configs waiting for trust, if the caller has any. */
  readonly trust?: TrustQueue | undefined
  /** An event as the page lists it; default: its time, type and server. */
  readonly describeEvent?: ((event: RegistryEvent, now: number) => Record<string, unknown>) | undefined
  /** How often the metrics are sampled and the state sent again. Default: 2 seconds. */
  readonly sampleEvery?: Duration.DurationInput | undefined
  /** How many recent events a page opened later is shown. Default: 500. */
  readonly keepEvents?: number | undefined
}

/**
 * A dashboard: its Web handler, its token and its approver.
 *
 * @since 0.6.0
 * @category models
 */
export interface Dashboard {
  /**
   * Answers one request (the page, its assets, the API, the live stream); aborting the
   * request's signal interrupts it.
   */
  readonly handler: (request: Request) => Promise<Response>
  /** The token the page's URL carries (`?token=`). Not a secret of the fleet: of this run only. */
  readonly token: string
  readonly approver: Approver
  /** How many pages hold a live stream now. */
  readonly pages: () => number
}

// The fiber that keeps pages current: events as they come, the state after any change
// (at most every 50 ms), the metrics sampled on a timer.
const publish = (
  sources: State.Sources,
  hub: Hub.Hub,
  remember: (event: RegistryEvent) => Effect.Effect<void>,
  sampleEvery: Duration.Duration
) =>
  Effect.gen(function*() {
    const dirty = yield* Queue.sliding<void>(1)
    const mark = () => void Queue.unsafeOffer(dirty, undefined)
    const unlisten = sources.asks.onChange(mark)
    yield* Effect.addFinalizer(() => Effect.sync(unlisten))
    const events = yield* sources.registry.subscribe
    yield* Queue.take(events).pipe(
      Effect.flatMap(remember),
      Effect.zipRight(Effect.sync(mark)),
      Effect.forever,
      Effect.forkScoped
    )
    yield* sources.registry.catalog.changes.pipe(Stream.runForEach(() => Effect.sync(mark)), Effect.forkScoped)
    yield* sources.metrics.sample.pipe(
      Effect.zipRight(Effect.sync(mark)),
      Effect.zipRight(Effect.sleep(sampleEvery)),
      Effect.forever,
      Effect.forkScoped
    )
    yield* Queue.take(dirty).pipe(
      Effect.zipRight(Effect.sleep("50 millis")),
      Effect.zipRight(Effect.suspend(() =>
        hub.size() === 0 ? Effect.void : Effect.map(State.snapshot(sources), (state) => hub.send("state", state))
      )),
      Effect.forever,
      Effect.forkScoped
    )
  })

/**
 * Makes a dashboard of the registry and policy in context, live until the Scope closes
 * (then every page's stream ends).
 *
 * @since 0.6.0
 * @category constructors
 */
export const make: (
  options: Options
) => Effect.Effect<Dashboard, never, ServerRegistry.ServerRegistry | Policy.Policy | Scope.Scope> = traced(
  "Dashboard.make"
)((options: Options) =>
  Effect.gen(function*() {
    const registry = yield* ServerRegistry.ServerRegistry
    const policy = yield* Policy.Policy
    const token = options.token ?? randomHex(32)
    const asks = options.approver ?? makeApprover()
    const hub = Hub.make()
    yield* Effect.addFinalizer(() => Effect.sync(hub.close))
    const sources: State.Sources = {
      registry,
      policy,
      asks,
      metrics: yield* Metrics.make(),
      trust: options.trust,
      restarts: yield* Metrics.restarts
    }
    const describe = options.describeEvent ?? State.eventJson
    const keep = options.keepEvents ?? 500
    const recent: Array<Record<string, unknown>> = []
    const remember = (event: RegistryEvent) =>
      Effect.map(Effect.clockWith((clock) => clock.currentTimeMillis), (now) => {
        const shown = describe(event, now)
        recent.push(shown)
        if (recent.length > keep) recent.shift()
        hub.send("event", shown)
      })
    yield* publish(sources, hub, remember, Duration.decode(options.sampleEvery ?? "2 seconds"))
    const handle = Routes.handle({
      token,
      guard: Guard.make({ token, host: options.host ?? "127.0.0.1" }),
      assets: options.assets,
      registry,
      policy,
      asks,
      hub,
      trust: options.trust,
      snapshot: State.snapshot(sources),
      recent: () => recent
    })
    const runtime = yield* Effect.runtime<never>()
    return {
      // A request abandoned by its page (its signal aborted) interrupts what it runs: a call
      // waiting on an ask stops waiting, and the ask leaves the other pages.
      handler: (request) => Runtime.runPromise(runtime)(handle(request), { signal: request.signal }),
      token,
      approver: asks,
      pages: hub.size
    }
  })
)
