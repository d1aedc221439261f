/**
 * `mcp-fleet test <name>`: connects one server outside the fleet (no restarts, nothing
 * hidden) and reports each step of its lifecycle with its timing and what failed, the whole
 * stderr tail of a server that died, and what a host would trip over: a server that ignores
 * its stdin closing or SIGTERM (with how long its shutdown took), or writes to stdout what is
 * not JSON-RPC.
 *
 * @since 0.1.0
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as NodePath from "node:path"
import * as FleetConfig from "../../FleetConfig.js"
import * as Secrets from "../../internal/secrets.js"
import * as McpClient from "../../McpClient.js"
import * as McpError from "../../McpError.js"
import * as NodeOAuth from "../../NodeOAuth.js"
import * as OAuth from "../../OAuth.js"
import type * as ServerRegistry from "../../ServerRegistry.js"
import * as ServerSpec from "../../ServerSpec.js"
import type * as Stdio from "../../Stdio.js"
import { Transport } from "../../Transport.js"
import * as CliError from "../CliError.js"
import * as Fleet from "../Fleet.js"
import * as HostFeatures from "../HostFeatures.js"
import * as Render from "../Render.js"
import * as Root from "../Root.js"
import * as Settings from "../Settings.js"
import * as Edit from "./edit.js"

interface Step {
  readonly step: string
  readonly ok: boolean
  readonly ms: number
  readonly detail: string
  /** The whole stderr tail of a process whose failure ended the step. */
  readonly stderr?: string | undefined
}

/**
 * What the test found: its steps, and what works but would trouble a host.
 *
 * @since 0.1.0
 */
export interface Report {
  readonly steps: ReadonlyArray<Step>
  readonly warnings: ReadonlyArray<string>
}

// The step's failure: its message, and the whole stderr tail when a process died.
const failure = <E extends { readonly message: string }>(cause: Cause.Cause<E>): Pick<Step, "detail" | "stderr"> =>
  Option.match(Cause.failureOption(cause), {
    onNone: () => ({ detail: Cause.pretty(cause) }),
    onSome: (error) => {
      const reason = error instanceof McpError.McpError ? error.reason : undefined
      const stderr = reason?._tag === "Closed" || reason?._tag === "Transport" ? reason.stderrTail?.trim() : undefined
      return { detail: error.message, ...(stderr ? { stderr } : {}) }
    }
  })

// What a stdio server's stop and output say about it (its transport's info after the close).
const troubles = (info: Record<string, unknown>): Array<string> => {
  const found: Array<string> = []
  if (typeof info.skippedLines === "number") {
    found.push(
      `it writes to stdout what is not JSON-RPC (${plural(info.skippedLines, "line")} skipped; the first was ${
        String(info.firstSkipped)
      }); clients may fail on it: logs belong on stderr`
    )
  }
  const shutdown = info.shutdown as Stdio.ShutdownReport | undefined
  if (shutdown === undefined || shutdown.endedBy === "stdin") return found
  const after = `${shutdown.ms} ms after its stdin closed`
  found.push(
    shutdown.outsideGroup
      ? `processes it started outside its process group outlived it; they ended only on ${shutdown.endedBy}, ${after}`
      : shutdown.endedBy === "SIGTERM"
      ? `it ignores its stdin closing: it ended only on SIGTERM, ${after}`
      : `it ignores its stdin closing and SIGTERM: it ended only on SIGKILL, ${after}`
  )
  return found
}

const ended = (info: Record<string, unknown>): string => {
  const shutdown = info.shutdown as Stdio.ShutdownReport | undefined
  return shutdown === undefined
    ? ""
    : shutdown.endedBy === "stdin"
    ? "no signal needed"
    : `${shutdown.endedBy} needed`
}

const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? "" : "s"}`

/**
 * The steps of connecting one server, each timed; the first failure ends the run. The
 * server is outside the fleet, so its secrets are masked here: in the report and the logs.
 *
 * @since 0.1.0
 */
export const probe = (
  spec: ServerSpec.ServerSpec,
  timeout: Duration.Duration
): Effect.Effect<Report, never, ServerRegistry.Requirements> => {
  const masker = Secrets.make(ServerSpec.secrets(spec))
  return steps(spec, timeout).pipe(
    Effect.map((report) => Secrets.maskValue(masker, report) as Report),
    Secrets.maskLogs(masker)
  )
}

// The server's OAuth on the token store in context, for a Streamable HTTP server.
const oauthOf = (spec: ServerSpec.ServerSpec): Effect.Effect<OAuth.ServerAuth | undefined> => {
  const transport = spec.transport
  if (transport.type !== "http" && transport.type !== "sse") return Effect.succeed(undefined)
  return Effect.flatMap(
    Effect.serviceOption(OAuth.TokenStore),
    (store) =>
      Option.isNone(store) ? Effect.succeed(undefined) : OAuth.make({
        server: spec.name,
        url: transport.url,
        config: transport.oauth
      }).pipe(
        Effect.provideService(OAuth.TokenStore, store.value),
        Effect.provideService(OAuth.Authorizer, OAuth.deferredAuthorizer)
      )
  )
}

// The stored credentials, as a connection sends them; none when there are none yet.
const tokenOf = (auth: OAuth.ServerAuth | undefined) =>
  auth === undefined ? Effect.succeed(undefined) : auth.credentials.pipe(
    Effect.map((held) => Option.getOrUndefined(Option.map(held, (given) => given.perRequest ?? given.token))),
    Effect.orElseSucceed(() => undefined)
  )

// A refusal OAuth may recover from: 401, or 403 insufficient_scope.
const refusalOf = (error: unknown): OAuth.Refusal | undefined =>
  error instanceof McpError.McpError && error.needsAuth && error.reason._tag === "Http"
    ? { status: error.reason.status, wwwAuthenticate: error.reason.wwwAuthenticate }
    : undefined

const steps = (
  spec: ServerSpec.ServerSpec,
  timeout: Duration.Duration
): Effect.Effect<Report, never, ServerRegistry.Requirements> =>
  Effect.gen(function*() {
    const steps: Array<Step> = []
    let opened: Transport | undefined
    const step = <A, E extends { readonly message: string }, R>(
      name: string,
      effect: Effect.Effect<A, E, R>,
      detail: (a: A) => string
    ) =>
      Effect.flatMap(Effect.timed(Effect.exit(effect)), ([elapsed, exit]) => {
        const ms = Math.round(Duration.toMillis(elapsed))
        steps.push(
          Exit.isSuccess(exit)
            ? { step: name, ok: true, ms, detail: detail(exit.value) }
            : { step: name, ok: false, ms, ...failure(exit.cause) }
        )
        return exit
      })
    if (spec.problem !== undefined) {
      steps.push({ step: "config", ok: false, ms: 0, detail: spec.problem })
      return { steps, warnings: [] }
    }
    const connection = (token: Parameters<typeof ServerSpec.connect>[1]) =>
      Effect.gen(function*() {
        const transport = yield* step("connect", ServerSpec.connect(spec, token), (transport) => {
          const pid = transport.info().pid
          return typeof pid === "number" ? `pid ${pid}` : transport.kind
        })
        opened = transport
        const client = yield* step(
          "initialize",
          McpClient.make({ initializeTimeout: timeout, requestTimeout: timeout }).pipe(
            Effect.provideService(Transport, transport)
          ),
          (client) =>
            `${client.protocolVersion}, ${client.serverInfo.name} ${client.serverInfo.version} (${
              Object.keys(client.capabilities).join(", ") || "no capabilities"
            })`
        )
        const offered = client.capabilities
        if (offered.tools !== undefined) {
          yield* step("tools/list", client.listTools(), (tools) => plural(tools.length, "tool"))
        }
        if (offered.resources !== undefined) {
          yield* step("resources/list", client.listResources(), (listed) => plural(listed.length, "resource"))
          yield* step(
            "resources/templates/list",
            client.listResourceTemplates(),
            (listed) => plural(listed.length, "template")
          )
        }
        if (offered.prompts !== undefined) {
          yield* step("prompts/list", client.listPrompts(), (listed) => plural(listed.length, "prompt"))
        }
        yield* step("ping", client.ping(), () => "")
      })
    // OAuth as a call takes it: the stored token; after a refusal, one recovery (a refresh,
    // a client credentials grant) and the steps again, the refused attempt replaced by it.
    const auth = yield* oauthOf(spec)
    let scope = yield* Scope.make()
    const first = yield* Effect.either(Scope.extend(connection(yield* tokenOf(auth)), scope))
    const refusal = first._tag === "Left" ? refusalOf(first.left) : undefined
    if (auth !== undefined && refusal !== undefined) {
      yield* Scope.close(scope, Exit.void)
      steps.length = 0
      const recovered = yield* Effect.either(step("authorize", auth.recover(refusal), () => "a new token"))
      scope = yield* Scope.make()
      if (recovered._tag === "Right") yield* Effect.ignore(Scope.extend(connection(yield* tokenOf(auth)), scope))
    }
    yield* step("close", Scope.close(scope, Exit.void), () => opened === undefined ? "" : ended(opened.info()))
    return { steps, warnings: opened === undefined ? [] : troubles(opened.info()) }
  })

// The report for a person: the steps as a table, what failed with the whole stderr of a
// process that died (when the message did not already show all of it), and the warnings.
const show = (report: Report) =>
  Effect.gen(function*() {
    yield* Render.lines(Render.table([
      ["", "step", "ms", "detail"],
      ...report.steps.map((entry) => [entry.ok ? "✓" : "✗", entry.step, String(entry.ms), entry.ok ? entry.detail : ""])
    ]))
    const failed = report.steps.find((entry) => !entry.ok)
    if (failed !== undefined) {
      yield* Render.lines(["", `${failed.step} failed: ${failed.detail}`])
      if (failed.stderr !== undefined && !failed.detail.endsWith(failed.stderr)) {
        yield* Render.lines(["", "its stderr:", ...failed.stderr.split("\n").map((line) => `  ${line}`)])
      }
    }
    for (const warning of report.warnings) yield* Render.note(`warning: ${warning}`)
  })

// What `test` is given: a server of the config, or one with no config: after `--` its
// command (`test -- <command> [args...]`), or `--url`.
const testOptions = {
  ...Settings.options,
  ...Edit.entryOptions,
  target: Args.text({ name: "name" }).pipe(
    Args.withDescription("A server's name, as in the config file; or, after --, a command to try with no config"),
    Args.repeated
  )
}

/**
 * The server `test` tries with no config: the command after `--` (the words @effect/cli
 * parsed into `target` are the same), or `--url`, with `--env`, `--header`, `--type` and
 * `--cwd`; undefined when a configured server is named instead. It is named after its
 * program or host.
 *
 * @since 0.5.0
 */
export const adHocSpec = (
  given: Command.Command.ParseConfig<typeof testOptions>,
  argv: ReadonlyArray<string> = process.argv
): Effect.Effect<ServerSpec.ServerSpec | undefined, CliError.CliError> =>
  Effect.gen(function*() {
    const forced = argv.includes("--")
    if (!forced && Option.isNone(given.url)) return undefined
    // Named after its program or host, as a person would call it.
    const url = Option.getOrElse(given.url, () => "")
    const from = forced ? NodePath.basename(given.target[0] ?? "") : URL.canParse(url) ? new URL(url).hostname : ""
    const name = from.replace(/[^A-Za-z0-9_-]/g, "-") || "server"
    const entry = yield* Edit.entryOf("test", forced ? given.target : [], given)
    if (!forced && given.target.length > 0) {
      return yield* CliError.usage("test gets a server's name, a command after --, or --url: one of them")
    }
    const [spec] = yield* FleetConfig.parse(
      JSON.stringify({ mcpServers: { [name]: entry } }),
      NodePath.join(process.cwd(), "(command line)"),
      process.env,
      NodePath
    ).pipe(Effect.mapError((error) => CliError.usage(`test: ${error.reason}`)))
    return spec!
  })

// A server of the config, trusted as the command that starts it would.
const configured = (settings: Settings.Settings, target: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    if (target.length !== 1) {
      return yield* CliError.usage(
        "test needs a server's name (mcp-fleet test <name>), a command (mcp-fleet test -- <command> [args...]), " +
          "or --url <url>"
      )
    }
    const loaded = yield* Fleet.loadConfig(settings)
    yield* Fleet.requireServer(loaded, target[0]!)
    return { spec: loaded.servers.find((candidate) => candidate.name === target[0])!, sampling: loaded.sampling }
  })

/**
 * `mcp-fleet test <name>`, `test -- <command> [args...]`, `test --url <url>`.
 *
 * @since 0.1.0
 */
export const test = Command.make(
  "test",
  testOptions,
  (given) =>
    Effect.gen(function*() {
      const settings = yield* Root.settings(given)
      const adHoc = yield* adHocSpec(given)
      const { sampling, spec } = adHoc === undefined
        ? yield* configured(settings, given.target)
        : { spec: adHoc, sampling: undefined }
      if (!settings.json) yield* Render.note(`testing '${spec.name}' (${Render.where(spec)})`)
      // The token store `call` uses, so a server authorized there is tested with its token, and
      // the host features a real `call` declares (roots, elicitation, sampling): a server may
      // behave, and stop, differently without them.
      const report = yield* probe(spec, settings.timeout).pipe(
        Effect.provideService(OAuth.TokenStore, NodeOAuth.makeFileStore(NodeOAuth.storeDir(settings.configDir))),
        Effect.provideService(OAuth.NetworkGuard, NodeOAuth.makeNetworkGuard()),
        Effect.provide(HostFeatures.layer(settings, sampling))
      )
      const { steps, warnings } = report
      const ok = steps.every((entry) => entry.ok)
      const total = steps.reduce((sum, entry) => sum + entry.ms, 0)
      if (settings.json) yield* Render.json({ server: spec.name, ok, totalMs: total, steps, warnings })
      else yield* show(report)
      if (!ok) {
        return yield* CliError.failure(
          `server '${spec.name}' failed its test at ${steps.find((entry) => !entry.ok)!.step}`
        )
      }
      if (!settings.json) {
        yield* Render.note(
          `'${spec.name}' works (${total} ms)${warnings.length > 0 ? ", with the warnings above" : ""}`
        )
      }
    })
).pipe(Command.withDescription(
  "Connect one server (of the config; or with no config, a command after -- or --url) and report each " +
    "lifecycle step with timings, what failed, and how it shuts down"
))
