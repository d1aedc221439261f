/**
 * `mcp-fleet serve`: the gateway — the whole fleet as one MCP server, over stdio (for a
 * host that spawns it) or Streamable HTTP. Config edits are applied while it runs: servers
 * come and go, the policy changes, and clients get list_changed.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Gateway from "../../Gateway.js"
import * as NodeGateway from "../../NodeGateway.js"
import * as NodeHost from "../../NodeHost.js"
import * as Policy from "../../Policy.js"
import * as ServerRegistry from "../../ServerRegistry.js"
import * as Stdio from "../../Stdio.js"
import * as CliError from "../CliError.js"
import * as Fleet from "../Fleet.js"
import * as Render from "../Render.js"
import * as Root from "../Root.js"
import * as Settings from "../Settings.js"
import * as Runner from "./runner.js"
import * as ServeAuth from "./serveAuth.js"

// How long the servers have to end once the host closed our stdin.
const STDIN_END_BUDGET = "1 second"

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
    if (given.stdio && (auth.token !== undefined || auth.oauth !== undefined)) {
      return yield* CliError.usage("--token-env and --oauth-* go with --http")
    }
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
    const gateway = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      effect.pipe(
        Effect.provideService(ServerRegistry.ServerRegistry, registry),
        Effect.provideService(Policy.Policy, policy),
        Effect.provideService(Gateway.ClientHost, Context.get(host, Gateway.ClientHost))
      )
    if (given.stdio) {
      yield* gateway(
        NodeGateway.serveStdio({
          settle: settle.value,
          naming: given.naming,
          modern,
          stateSecret,
          ...(given.noTasks ? { tasks: false } : {})
        })
      )
      // The host closed our stdin: it will send SIGTERM in a moment (the official SDK after
      // 2 s), so the fleet goes now, well within that.
      return yield* Stdio.beginShutdown(STDIN_END_BUDGET)
    }
    const url = yield* gateway(NodeGateway.serveHttp({
      settle: settle.value,
      naming: given.naming,
      modern,
      stateSecret,
      ...(given.noTasks ? { tasks: false } : {}),
      port: port!,
      host: given.host,
      path: given.path,
      ...auth,
      allowedOrigins: given.allowOrigin
    }))
    // One line, so a program can read the URL as soon as it is there.
    if (settings.json) yield* Render.lines([JSON.stringify({ url })])
    else yield* Render.note(`mcp-fleet gateway listening on ${url} (${loaded.servers.length} servers; Ctrl-C to stop)`)
    return yield* Effect.never
  }).pipe(Effect.scoped)).pipe(
    Command.withDescription("Serve the fleet as one MCP server: serve --stdio, or serve --http <port>")
  )
