/**
 * The `mcp-fleet` command line.
 *
 * Commands, one module per group in `commands/`: `inspect` (servers, tools, resources,
 * prompts), `invoke` (call, read, prompt), `skills` (skills, skill), `edit` (add, remove, enable, disable), `probe`
 * (test), `serve` (the gateway; its endpoint's guard in `serveAuth.ts`), `watch`, `dashboard` (the fleet in a browser), `trust`
 * (trust, approve), `auth`, `audit` (verify, key). `bin.ts` answers `--version` before loading this module; the CLI
 * ships as one esbuild bundle (`scripts/bundle-cli.mjs`), which the CLI tests run too.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as ValidationError from "@effect/cli/ValidationError"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Runtime from "@effect/platform/Runtime"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as HashSet from "effect/HashSet"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as FleetConfig from "../FleetConfig.js"
import * as Gateway from "../Gateway.js"
import * as Hidden from "../internal/sanitize.js"
import * as McpError from "../McpError.js"
import * as NodeFleet from "../NodeFleet.js"
import * as Stdio from "../Stdio.js"
import * as CliError from "./CliError.js"
import * as Audit from "./commands/audit.js"
import * as Auth from "./commands/auth.js"
import * as DashboardCommand from "./commands/dashboard.js"
import * as Edit from "./commands/edit.js"
import * as Get from "./commands/get.js"
import * as Importing from "./commands/importing.js"
import * as Inspect from "./commands/inspect.js"
import * as Invoke from "./commands/invoke.js"
import * as Probe from "./commands/probe.js"
import * as Runner from "./commands/runner.js"
import * as Serve from "./commands/serve.js"
import * as Session from "./commands/session.js"
import * as Skills from "./commands/skills.js"
import * as Trust from "./commands/trust.js"
import * as Watch from "./commands/watch.js"
import * as Help from "./Help.js"
import * as Otel from "./Otel.js"
import * as Render from "./Render.js"
import * as Root from "./Root.js"
import * as Settings from "./Settings.js"
import { VERSION } from "./version.js"

const subcommands = [
  Inspect.servers,
  Get.get,
  Inspect.tools,
  Invoke.call,
  Inspect.resources,
  Invoke.read,
  Session.subscribe,
  Inspect.prompts,
  Invoke.prompt,
  Skills.skills,
  Skills.skill,
  Edit.add,
  Edit.addJson,
  Importing.importServers,
  Edit.remove,
  Edit.enable,
  Edit.disable,
  Probe.test,
  Session.ping,
  Session.complete,
  Session.logLevel,
  Watch.watch,
  DashboardCommand.dashboard,
  Serve.serve,
  Runner.runner,
  Trust.trust,
  Trust.approve,
  Auth.auth,
  Audit.audit
] as const

const print = (text: string) => Effect.sync(() => void process.stdout.write(text))

// `mcp-fleet` alone prints the overview.
const showHelp = () => print(Help.root(Root.root, subcommands, Help.colored()))

const command = Root.root.pipe(
  Command.withHandler(showHelp),
  Command.withSubcommands(subcommands)
)

const cli = Command.run(command, { name: "mcp-fleet", version: VERSION })

// The help of the first command named before any `--`, else the overview.
const help = (args: ReadonlyArray<string>) => {
  const end = args.indexOf("--")
  const commands: ReadonlyArray<Help.AnyCommand> = subcommands
  const named =
    (end === -1 ? args : args.slice(0, end)).flatMap((arg) =>
      commands.filter((candidate) => [...Command.getNames(candidate)].includes(arg))
    )[0]
  return named === undefined ? showHelp() : print(Help.command(named, Help.colored()))
}

// Without @effect/cli's own printing of parse errors (Console.error): the CLI writes its notes
// to stderr itself (Render.note).
const quietParser = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.consoleWith((console) => Console.withConsole(effect, { ...console, error: () => Effect.void }))

// `--log-level` and `--help` are ours, wherever they are; the rest is @effect/cli's to parse.
const main = (argv: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const [runtime, script, ...given] = argv
    const { args, level } = yield* Settings.takeLogLevel(given)
    if (Help.requested(args)) return yield* help(args)
    // @effect/cli prints its parse errors itself, in its words: ours (Help.explain) say more.
    const run = quietParser(cli([runtime!, script!, ...args])).pipe(
      Effect.catchIf(ValidationError.isValidationError, (error) =>
        Effect.fail(Help.explain(error, args, Root.root, subcommands)))
    )
    return yield* Option.isSome(level) ? Logger.withMinimumLogLevel(run, level.value) : run
  })

// A usage mistake is 2: a bad command line; a config file, server, tool, prompt or resource
// named that does not exist; arguments that do not fit the tool (checked before sending: the
// only Validation without a method). The rest is 1.
const exitCode = (error: unknown): number =>
  error instanceof Render.Reported
    ? exitCode(error.error)
    : error instanceof CliError.CliError
    ? error.exitCode
    : (error instanceof FleetConfig.ConfigError && error.missing === true) ||
        (error instanceof McpError.McpError &&
          (error.reason._tag === "NotFound" ||
            (error.reason._tag === "Validation" && error.reason.method === undefined)))
    ? 2
    : 1

// Logs quote servers (their log messages, their stderr): every logger gets its text with
// control sequences neutralised, so none reaches the terminal.
const neutralise = (message: unknown): unknown =>
  typeof message === "string" ? Hidden.forTerminal(message) : Array.isArray(message) ? message.map(neutralise) : message
const neutralLogs = Layer.scopedDiscard(
  Effect.locallyScopedWith(
    FiberRef.currentLoggers,
    HashSet.map((logger) => Logger.mapInput(logger, neutralise))
  )
)

const program = Effect.suspend(() => main(process.argv)).pipe(
  // A defect is still told: one sentence, never silence.
  Effect.catchAllDefect((defect) => Effect.fail(CliError.failure(`internal error: ${String(defect)}`))),
  Effect.catchAll((error) =>
    Render.error(error, Render.jsonRequested()).pipe(
      Effect.zipRight(Effect.sync(() => {
        process.exitCode = exitCode(error)
      }))
    )
  ),
  // Warnings of servers that fail are shown by the commands themselves; --log-level shows more.
  Logger.withMinimumLogLevel(LogLevel.Error),
  // Logs go to stderr: stdout carries results, JSON, or (for `serve --stdio`) the protocol.
  // On SIGINT or SIGTERM every server is gone within a second.
  Effect.provide(
    Layer.mergeAll(
      NodeFleet.layer,
      neutralLogs.pipe(Layer.provideMerge(Gateway.stdioLogger)),
      Stdio.layerShutdownOnSignal(),
      // Spans and metrics exported when the OpenTelemetry environment names an endpoint.
      Otel.layer()
    )
  )
)

// Against a cluster, the process exits once the command is done and every scope has closed:
// sql-pg's LISTEN connection, when a short command ends while it is still connecting, is
// never ended (its connect is not interruptible), and would keep the process alive.
const clustered = process.argv.some((arg) => arg === "--cluster" || arg.startsWith("--cluster="))
const teardown: Runtime.Teardown = (exit, onExit) =>
  Runtime.defaultTeardown(exit, (code) => {
    // A command that failed set the exit code itself, before this.
    const set = process.exitCode
    onExit(code)
    if (clustered) process.exit(code === 0 ? set : code)
  })

NodeRuntime.runMain(program, { disableErrorReporting: true, disablePrettyLogger: true, teardown })
