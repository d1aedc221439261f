/**
 * `mcp-fleet serve`: the gateway — the whole fleet as one MCP server, over stdio (for a
 * host that spawns it) or Streamable HTTP. Config edits are applied while it runs: servers
 * come and go, the policy changes, and clients get list_changed. With `--dashboard`, the
 * fleet's page (see `dashboard`) is served beside the gateway; its `ask`s wait in the page,
 * while a gateway client's are asked of that client.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Gateway from "../../Gateway.js"
import * as NodeEmbedder from "../../NodeEmbedder.js"
import * as NodeGateway from "../../NodeGateway.js"
import * as NodeHost from "../../NodeHost.js"
import * as Policy from "../../Policy.js"
import * as ServerRegistry from "../../ServerRegistry.js"
import * as Stdio from "../../Stdio.js"
import * as ToolSearch from "../../ToolSearch.js"
import * as CliError from "../CliError.js"
import * as Fleet from "../Fleet.js"
import * as Render from "../Render.js"
import * as Root from "../Root.js"
import * as Settings from "../Settings.js"
import * as Dashboard from "./dashboard.js"
import * as Runner from "./runner.js"
import { embeddingsDir } from "./search.js"
import * as ServeAuth from "./serveAuth.js"

// How long the servers have to end once the host closed our stdin.
const STDIN_END_BUDGET = "1 second"

// The gateway's options both ways in take from the flags alike.
const gatewayOptions = (given: {
  readonly naming: "qualified" | "plain"
  readonly noTasks: boolean
  readonly toolSearch: boolean
  readonly noToolSearch: boolean
  readonly alwaysLoad: ReadonlyArray<string>
}): Gateway.Options => ({
  naming: given.naming,
  ...(given.noTasks ? { tasks: false } : {}),
  ...(given.toolSearch ? { toolSearch: true } : given.noToolSearch ? { toolSearch: false } : {}),
  alwaysLoad: given.alwaysLoad
})

// The gateway's tool index, as `tools --search` ranks: hybrid when the embedding package is
// installed, its vectors cached beside the config. Never made before initialize is answered:
// with --tool-search in the background from the start, else (deferred only on a big fleet)
// at the first search, which waits for it, so a small fleet never loads the model.
const searchIndex = (
  settings: Settings.Settings,
  registry: ServerRegistry.ServerRegistry,
  policy: Policy.Policy,
  now: boolean
) =>
  Effect.gen(function*() {
    const build = Layer.build(
      NodeEmbedder.layerSearch(embeddingsDir(settings)).pipe(
        Layer.provide(Layer.succeed(ServerRegistry.ServerRegistry, registry)),
        Layer.provide(Layer.succeed(Policy.Policy, policy))
      )
    ).pipe(
      Effect.map(Context.get(ToolSearch.ToolSearch)),
      Scope.extend(yield* Effect.scope),
      Effect.provideService(FileSystem.FileSystem, yield* FileSystem.FileSystem)
    )
    const making = now ? Fiber.join(yield* Effect.forkScoped(build)) : yield* Effect.cached(build)
    let made: ToolSearch.ToolSearch | undefined
    const service: ToolSearch.ToolSearch = {
      search: (query, options) =>
        Effect.flatMap(making, (index) => {
          made = index
          return index.search(query, options)
        }),
      // Known once made; by words alone until then.
      get semantic() {
        return made?.semantic ?? false
      }
    }
    return service
  })

/**
 * `mcp-fleet serve --stdio` or `mcp-fleet serve --http <port>`.
 *
 * @since 0.1.0
 */
export const serve = Command.make("serve", {
  ...Settings.options,
  stdio: Options.boolean("stdio").pipe(Options.withDescription("Serve MCP on stdin/stdout")),
  http: Options.integer("http").pipe(
    Options.withPseudoName("port"),
    Options.withDescription("Serve MCP over Streamable HTTP on this port (0: any free port)"),
    Options.optional
  ),
  host: Options.text("host").pipe(
    Options.withPseudoName("address"),
    Options.withDescription("The address to bind with --http (default 127.0.0.1: this machine only)"),
    Options.withDefault("127.0.0.1")
  ),
  path: Options.text("path").pipe(
    Options.withPseudoName("path"),
    Options.withDescription("The MCP endpoint's path with --http (default /mcp)"),
    Options.withDefault("/mcp")
  ),
  ...ServeAuth.options,
  allowOrigin: Options.text("allow-origin").pipe(
    Options.withPseudoName("origin"),
    Options.withDescription("An Origin allowed besides localhost (repeatable); others get 403"),
    Options.repeated
  ),
  settle: Options.text("settle").pipe(
    Options.withPseudoName("duration"),
    Options.withDescription(
      "How long after start the first tool, prompt and resource lists wait for servers still connecting " +
        "(default 3s; 0: not at all); later joiners are announced with list_changed"
    ),
    Options.withDefault("3s")
  ),
  // 2026-07-28 is served by default; `--modern`, the flag of when it was not, still parses.
  noModern: Options.boolean("no-modern", { negationNames: ["modern"] }).pipe(
    Options.withDescription(
      "Serve the stateful revisions only. By default 2026-07-28 clients are answered too, statelessly " +
        "(no session: replicas behind a load balancer need no affinity; give them one --state-secret-env)"
    )
  ),
  noTasks: Options.boolean("no-tasks").pipe(
    Options.withDescription(
      "Answer calls of fronted task tools inline instead of as tasks of the gateway's own (the default passes " +
        "tasks through)"
    )
  ),
  dashboard: Options.boolean("dashboard").pipe(
    Options.withDescription("With --http, serve the dashboard too (see 'mcp-fleet dashboard'), on --dashboard-port")
  ),
  dashboardPort: Options.integer("dashboard-port").pipe(
    Options.withPseudoName("port"),
    Options.withDescription("The dashboard's port with --dashboard (default 0: any free port)"),
    Options.withDefault(0)
  ),
  runner: Options.boolean("runner").pipe(
    Options.withDescription("With --cluster: host servers too, as 'mcp-fleet runner' does (default: a gateway only)")
  ),
  listen: Runner.listenOption,
  naming: Options.choice("naming", ["qualified", "plain"]).pipe(
    Options.withDescription(
      "Tool and prompt names: qualified (mcp__<server>__<name>, the default) or plain (a server's own name " +
        "unless another server has it too; those are qualified)"
    ),
    Options.withDefault("qualified" as const)
  ),
  toolSearch: Options.boolean("tool-search").pipe(
    Options.withDescription(
      "List search_tools and call_tool instead of the fleet's tools, which stay callable by name (by default: " +
        "when a client would list more than 40 of them)"
    )
  ),
  noToolSearch: Options.boolean("no-tool-search").pipe(
    Options.withDescription("List every tool of the fleet, however many")
  ),
  alwaysLoad: Options.text("always-load").pipe(
    Options.withPseudoName("glob"),
    Options.withDescription("Tools listed even when the others are found by search (repeatable; e.g. mcp__github__*)"),
    Options.repeated
  )
}, (given) =>
  Effect.gen(function*() {
    const settings = given.runner
      ? yield* Runner.asRunner(yield* Root.settings(given), given.listen)
      : yield* Root.settings(given)
    if (given.stdio === Option.isSome(given.http)) return yield* CliError.usage("give either --stdio or --http <port>")
    const port = Option.getOrUndefined(given.http)
    if (port !== undefined && (port < 0 || port > 65535)) {
      return yield* CliError.usage(`--http ${port} is not a port: give 1 to 65535, or 0 for any free port`)
    }
    const auth = yield* ServeAuth.resolve(given)
    const stateSecret = yield* ServeAuth.stateSecret(given)
    if (given.stdio && given.dashboard) return yield* CliError.usage("--dashboard goes with --http")
    if (given.stdio && (auth.token !== undefined || auth.oauth !== undefined)) {
      return yield* CliError.usage("--token-env and --oauth-* go with --http")
    }
    if (given.toolSearch && given.noToolSearch) return yield* CliError.usage("give --tool-search or --no-tool-search")
    const modern = !given.noModern
    const settle = Settings.parseDuration(given.settle)
    if (Option.isNone(settle)) {
      return yield* CliError.usage(`--settle '${given.settle}' is not a duration such as 3s, 500ms or 0`)
    }
    // Hot reload: the fleet and the policy follow the files. The gateway answers at once;
    // its first lists wait for servers still connecting, within the settle window.
    // The gateway is the fleet's host: servers' requests go to the client whose call they
    // serve, and their roots are the clients' (the configured ones while none declares any).
    const host = yield* Layer.build(Gateway.layerHost({ roots: settings.roots.map(NodeHost.rootOf) }))
    const { loaded, policy, registry } = yield* Fleet.follow(settings, host)
    const toolSearch = given.noToolSearch ? undefined : yield* searchIndex(settings, registry, policy, given.toolSearch)
    const gateway = <A, E, R>(effect: Effect.Effect<A, E, R>) => {
      const served = effect.pipe(
        Effect.provideService(ServerRegistry.ServerRegistry, registry),
        Effect.provideService(Policy.Policy, policy),
        Effect.provideService(Gateway.ClientHost, Context.get(host, Gateway.ClientHost))
      )
      return toolSearch === undefined ? served : Effect.provideService(served, ToolSearch.ToolSearch, toolSearch)
    }
    if (given.stdio) {
      yield* gateway(
        NodeGateway.serveStdio({
          settle: settle.value,
          ...gatewayOptions(given),
          modern,
          stateSecret
        })
      )
      // The host closed our stdin: it will send SIGTERM in a moment (the official SDK after
      // 2 s), so the fleet goes now, well within that.
      return yield* Stdio.beginShutdown(STDIN_END_BUDGET)
    }
    const url = yield* gateway(NodeGateway.serveHttp({
      settle: settle.value,
      ...gatewayOptions(given),
      modern,
      stateSecret,
      port: port!,
      host: given.host,
      path: given.path,
      ...auth,
      allowedOrigins: given.allowOrigin
    }))
    const dashboard = given.dashboard
      ? yield* gateway(Dashboard.serveDashboard({ port: given.dashboardPort, open: false, host: given.host }, {}))
      : undefined
    // One line, so a program can read the URLs as soon as they are there.
    if (settings.json) yield* Render.lines([JSON.stringify(dashboard === undefined ? { url } : { url, dashboard })])
    else {
      yield* Render.note(`mcp-fleet gateway listening on ${url} (${loaded.servers.length} servers; Ctrl-C to stop)`)
      if (dashboard !== undefined) yield* Render.note(`mcp-fleet dashboard on ${dashboard}`)
    }
    return yield* Effect.never
  }).pipe(Effect.scoped)).pipe(
    Command.withDescription("Serve the fleet as one MCP server: serve --stdio, or serve --http <port>")
  )
