/**
 * `call`, `read` and `prompt`: one tool call, resource read or prompt, on the one server
 * that owns it (only that server is started).
 *
 * @since 0.1.0
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Catalog from "../../Catalog.js"
import type * as Peer from "../../Peer.js"
import type * as ServerSpec from "../../ServerSpec.js"
import * as CliError from "../CliError.js"
import * as Fleet from "../Fleet.js"
import * as Render from "../Render.js"
import * as Root from "../Root.js"
import * as Settings from "../Settings.js"
import * as TerminalPolicy from "../TerminalPolicy.js"
import * as Session from "./session.js"

/**
 * Reads a JSON object given on the command line.
 */
const parseObject = (text: string, what: string): Effect.Effect<Record<string, unknown>, CliError.CliError> =>
  Effect.suspend(() => {
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch (error) {
      return Effect.fail(
        CliError.usage(`${what} are not valid JSON: ${error instanceof Error ? error.message : String(error)}`)
      )
    }
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? Effect.succeed(value as Record<string, unknown>)
      : Effect.fail(CliError.usage(`${what} must be a JSON object, like '{"key": "value"}'`))
  })

/**
 * `--arg k=v` pairs as arguments: a value is kept as text where the tool's inputSchema
 * wants a string (or says nothing), and read as JSON (numbers, booleans, objects) elsewhere.
 */
const argPairs = (
  pairs: ReadonlyArray<string>,
  inputSchema: Record<string, unknown> | undefined
): Effect.Effect<Record<string, unknown>, CliError.CliError> =>
  Effect.suspend(() => {
    const properties = (inputSchema?.properties ?? {}) as Record<string, { readonly type?: unknown } | undefined>
    const args: Record<string, unknown> = {}
    for (const pair of pairs) {
      const at = pair.indexOf("=")
      if (at <= 0) return Effect.fail(CliError.usage(`--arg '${pair}' is not key=value`))
      const key = pair.slice(0, at)
      const text = pair.slice(at + 1)
      const type = properties[key]?.type
      const wantsText = type === undefined || type === "string" || (Array.isArray(type) && type.includes("string"))
      if (wantsText) {
        args[key] = text
        continue
      }
      try {
        args[key] = JSON.parse(text)
      } catch {
        args[key] = text
      }
    }
    return Effect.succeed(args)
  })

// `mcp__<server>__<tool>`: the configured server whose qualified prefix the name starts with
// (the longest, should one server's name be a prefix of another's).
const serverOfQualified = (name: string, specs: ReadonlyArray<ServerSpec.ServerSpec>): string | undefined =>
  specs
    .map((spec) => spec.name)
    .filter((server) => name.startsWith(Catalog.qualify(server, "")))
    .sort((a, b) => b.length - a.length)[0]

// A duration option that was given, read (see Settings.duration).
const optionalDuration = (flag: string, given: Option.Option<string>) =>
  Option.isSome(given) ? Settings.duration(flag, given.value) : Effect.succeed(undefined)

const progressOn = (settings: Settings.Settings) =>
  settings.json ? undefined : (progress: Peer.Progress) =>
    Render.note(
      `progress: ${
        progress.total !== undefined ? `${progress.progress}/${progress.total}` : String(progress.progress)
      }${progress.message !== undefined ? ` ${progress.message}` : ""}`
    )

/**
 * `mcp-fleet call`: calls one tool, checking its arguments against its inputSchema first.
 *
 * @since 0.1.0
 */
export const call = Command.make("call", {
  ...Settings.options,
  timeout: Settings.timeoutOption(
    "The call's own time limit: how long it may go without an answer from the server, each progress " +
      "notification starting it again: 30s, 500ms, 2m, or a number of seconds (default 30s). --max-time bounds " +
      "the whole call, --ready-timeout the wait for the server to start"
  ),
  maxTime: Options.text("max-time").pipe(
    Options.withPseudoName("duration"),
    Options.withDescription("The most the call may take in all, progress or not (default: no limit)"),
    Options.optional
  ),
  readyTimeout: Options.text("ready-timeout").pipe(
    Options.withPseudoName("duration"),
    Options.withDescription(
      "How long to wait for the server to start before the call (default: the server's readyTimeout in the " +
        "config, else 30s)"
    ),
    Options.optional
  ),
  target: Args.text({ name: "tool" }).pipe(
    Args.withDescription("The qualified name (mcp__<server>__<tool>), or the server name followed by the tool name")
  ),
  rest: Args.text({ name: "tool | json-args" }).pipe(
    Args.withDescription(
      "After a server name, the tool's name; then, or after a qualified name, its arguments as one JSON object"
    ),
    Args.repeated
  ),
  arg: Options.text("arg").pipe(
    Options.withAlias("a"),
    Options.withPseudoName("key=value"),
    Options.withDescription("One argument as key=value (repeatable); JSON values for non-string fields"),
    Options.repeated
  )
}, (given) =>
  Effect.gen(function*() {
    const settings = yield* Root.settings(given)
    const maxTime = yield* optionalDuration("--max-time", given.maxTime)
    const readyTimeout = yield* optionalDuration("--ready-timeout", given.readyTimeout)
    const loaded = yield* Fleet.loadConfig(settings)
    // `<server> <tool> [json]` when the second word is not JSON, else `<qualified> [json]`.
    const [second, third, ...extra] = given.rest
    const split = second !== undefined && !second.trimStart().startsWith("{")
    const json = split ? third : second
    if (extra.length > 0 || (!split && third !== undefined)) {
      return yield* CliError.usage(`too many arguments: give the tool, then at most one JSON object of arguments`)
    }
    const server = split ? given.target : serverOfQualified(given.target, loaded.servers)
    if (server === undefined) {
      const suggestions = Catalog.suggest(given.target, loaded.servers.map((spec) => Catalog.qualify(spec.name, "")))
      return yield* CliError.usage(
        `'${given.target}' names no configured server's tool; expected mcp__<server>__<tool> or <server> <tool>${
          suggestions.length > 0 ? ` (did you mean '${suggestions[0]}…'?)` : ""
        }`
      )
    }
    const started = yield* Fleet.start(settings, { only: server, loaded, asCall: { readyTimeout } })
    const policy = yield* TerminalPolicy.make(started, !settings.json)
    const catalog = policy.filter(yield* SubscriptionRef.get(started.registry.catalog))
    const entry = split
      ? catalog.tools.find((candidate) => candidate.server === server && candidate.tool.name === second)
      : catalog.toolsByName.get(given.target)
    const name = entry?.name ?? (split ? Catalog.qualify(server, second) : given.target)
    const fromJson = json === undefined ? {} : yield* parseObject(json, "the arguments")
    const fromPairs = yield* argPairs(given.arg, entry?.tool.inputSchema)
    // The registry decides the call's limits from these (see ServerRegistry.CallToolOptions).
    const result = yield* policy.callTool(name, { ...fromJson, ...fromPairs }, {
      readyTimeout,
      timeout: settings.timeout,
      maxTotalTimeout: maxTime,
      resetTimeoutOnProgress: true,
      onProgress: progressOn(settings)
    })
    if (settings.json) yield* Render.json(result)
    else yield* Render.lines([Render.callResult(result)])
    if (result.isError === true) return yield* CliError.failure(`tool '${name}' reported an error`)
  }).pipe(Render.reportNow, Effect.scoped)).pipe(
    Command.withDescription(
      "Call a tool: mcp-fleet call mcp__memory__read_graph, or mcp-fleet call memory search_nodes '{\"query\":\"x\"}' / --arg query=x"
    )
  )

/**
 * `mcp-fleet read`: reads one resource of one server.
 *
 * @since 0.1.0
 */
export const read = Command.make("read", {
  ...Settings.options,
  server: Fleet.serverArg("server"),
  uri: Args.text({ name: "uri" }).pipe(Args.withDescription("The resource's URI, as `mcp-fleet resources` lists it")),
  output: Options.text("output").pipe(
    Options.withAlias("o"),
    Options.withPseudoName("file"),
    Options.withDescription("Write the contents to this file (a binary resource decoded from base64)"),
    Options.optional
  )
}, (given) =>
  Effect.gen(function*() {
    const settings = yield* Root.settings(given)
    const started = yield* Fleet.start(settings, { only: given.server })
    const result = yield* started.registry.readResource(given.server, given.uri)
    if (settings.json) return yield* Render.json(result)
    if (yield* Session.writeContents(result, given.output, given.uri)) return
    yield* Render.lines(result.contents.map(Render.resourceContents))
  }).pipe(Render.reportNow, Effect.scoped)).pipe(
    Command.withDescription("Read a resource: mcp-fleet read <server> <uri>")
  )

/**
 * `mcp-fleet prompt`: gets one prompt of one server with its arguments.
 *
 * @since 0.1.0
 */
export const prompt = Command.make("prompt", {
  ...Settings.options,
  server: Fleet.serverArg("server"),
  name: Args.text({ name: "name" }).pipe(Args.withDescription("The prompt's name, as `mcp-fleet prompts` lists it")),
  args: Args.text({ name: "json-args" }).pipe(
    Args.withDescription(`The prompt's arguments as one JSON object, like '{"city": "Paris"}'`),
    Args.optional
  )
}, (given) =>
  Effect.gen(function*() {
    const settings = yield* Root.settings(given)
    const args = Option.isSome(given.args) ? yield* parseObject(given.args.value, "the prompt arguments") : {}
    // Prompt arguments are strings on the wire.
    const strings = Object.fromEntries(
      Object.entries(args).map(([key, value]) => [key, typeof value === "string" ? value : JSON.stringify(value)])
    )
    const started = yield* Fleet.start(settings, { only: given.server })
    const result = yield* started.registry.getPrompt(given.server, given.name, strings)
    if (settings.json) return yield* Render.json(result)
    yield* Render.lines([
      ...(result.description !== undefined ? [`# ${result.description}`, ""] : []),
      ...result.messages.map((message) => `${message.role}: ${Render.content(message.content)}`)
    ])
  }).pipe(Render.reportNow, Effect.scoped)).pipe(
    Command.withDescription("Get a prompt: mcp-fleet prompt <server> <name> ['{\"arg\":\"value\"}']")
  )
