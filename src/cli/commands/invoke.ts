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
import * as McpError from "../../McpError.js"
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

/** What names a tool or prompt: its server, its own name when given apart, and the JSON arguments. */
interface Target {
  readonly server: string
  /** The name after the server's (`<server> <name>`); absent for a qualified name. */
  readonly plain: string | undefined
  readonly json: string | undefined
}

// `<server> <name> [json]` when the second word is not JSON, else `<qualified> [json]`.
const targetOf = (
  what: "tool" | "prompt",
  target: string,
  rest: ReadonlyArray<string>,
  specs: ReadonlyArray<ServerSpec.ServerSpec>
): Effect.Effect<Target, CliError.CliError> => {
  const [second, third, ...extra] = rest
  const split = second !== undefined && !second.trimStart().startsWith("{")
  if (extra.length > 0 || (!split && third !== undefined)) {
    return Effect.fail(
      CliError.usage(`too many arguments: give the ${what}, then at most one JSON object of arguments`)
    )
  }
  const server = split ? target : Fleet.serverOfQualified(target, specs)
  if (server === undefined) {
    const suggestions = Catalog.suggest(target, specs.map((spec) => Catalog.qualify(spec.name, "")))
    return Effect.fail(CliError.usage(
      `'${target}' names no configured server's ${what}; expected mcp__<server>__<${what}> or <server> <${what}>${
        suggestions.length > 0 ? ` (did you mean '${suggestions[0]}…'?)` : ""
      }`
    ))
  }
  return Effect.succeed({ server, plain: split ? second : undefined, json: split ? third : second })
}

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

const argOption = (description: string) =>
  Options.text("arg").pipe(
    Options.withAlias("a"),
    Options.withPseudoName("key=value"),
    Options.withDescription(description),
    Options.repeated
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
  arg: argOption("One argument as key=value (repeatable); JSON values for non-string fields")
}, (given) =>
  Effect.gen(function*() {
    const settings = yield* Root.settings(given)
    const maxTime = yield* optionalDuration("--max-time", given.maxTime)
    const readyTimeout = yield* optionalDuration("--ready-timeout", given.readyTimeout)
    const loaded = yield* Fleet.loadConfig(settings)
    const { server, plain, json } = yield* targetOf("tool", given.target, given.rest, loaded.servers)
    // Arguments that are not JSON are an error before any server starts.
    const fromJson = json === undefined ? {} : yield* parseObject(json, "the arguments")
    const started = yield* Fleet.start(settings, { only: server, loaded, asCall: { readyTimeout } })
    const policy = yield* TerminalPolicy.make(started, !settings.json)
    const catalog = policy.filter(yield* SubscriptionRef.get(started.registry.catalog))
    const entry = plain !== undefined
      ? catalog.tools.find((candidate) => candidate.server === server && candidate.tool.name === plain)
      : Catalog.findTool(catalog, given.target)
    const name = entry?.name ?? (plain !== undefined ? Catalog.qualify(server, plain) : given.target)
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
  }).pipe(Fleet.oneShot)).pipe(
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
  uri: Fleet.uriArg,
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
  }).pipe(Fleet.oneShot)).pipe(
    Command.withDescription("Read a resource: mcp-fleet read <server> <uri>")
  )

// The prompt `target` names, from the server's list; fails with the closest names when the
// server lists none such (a server that lists no prompts is asked all the same).
const promptOf = (started: Fleet.Started, server: string, target: string, plain: string | undefined) =>
  Effect.gen(function*() {
    const catalog = yield* SubscriptionRef.get(started.registry.catalog)
    const entry = plain !== undefined
      ? catalog.prompts.find((candidate) => candidate.server === server && candidate.prompt.name === plain)
      : catalog.promptsByName.get(target)
    if (entry !== undefined || plain !== undefined) return entry
    return yield* McpError.notFound(undefined, {
      what: "prompt",
      name: target,
      suggestions: Catalog.suggest(target, catalog.promptsByName.keys())
    })
  })

// The required arguments the prompt's list names and `args` lacks, as a usage error.
const requireArguments = (entry: Catalog.PromptEntry | undefined, args: Record<string, unknown>) => {
  const missing = (entry?.prompt.arguments ?? []).filter((arg) => arg.required === true && !(arg.name in args))
  return missing.length === 0 ? Effect.void : Effect.fail(CliError.usage(
    `prompt '${entry!.name}' needs the argument${missing.length === 1 ? "" : "s"} ${
      missing.map((arg) =>
        `'${arg.name}'${arg.description !== undefined ? ` (${Render.clip(arg.description, 50)})` : ""}`
      )
        .join(", ")
    }: give --arg ${missing[0]!.name}=<value>`
  ))
}

/**
 * `mcp-fleet prompt`: gets one prompt of one server with its arguments, checking that the
 * required ones are given.
 *
 * @since 0.1.0
 */
export const prompt = Command.make("prompt", {
  ...Settings.options,
  target: Args.text({ name: "prompt" }).pipe(
    Args.withDescription(
      "The qualified name (mcp__<server>__<prompt>), or the server name followed by the prompt name"
    )
  ),
  rest: Args.text({ name: "prompt | json-args" }).pipe(
    Args.withDescription(
      `After a server name, the prompt's name; then, or after a qualified name, its arguments as one JSON object, like '{"city": "Paris"}'`
    ),
    Args.repeated
  ),
  arg: argOption("One argument as key=value (repeatable)")
}, (given) =>
  Effect.gen(function*() {
    const settings = yield* Root.settings(given)
    const loaded = yield* Fleet.loadConfig(settings)
    const { server, plain, json } = yield* targetOf("prompt", given.target, given.rest, loaded.servers)
    const args = {
      ...(json === undefined ? {} : yield* parseObject(json, "the prompt arguments")),
      ...(yield* argPairs(given.arg, undefined))
    }
    // Prompt arguments are strings on the wire.
    const strings = Object.fromEntries(
      Object.entries(args).map(([key, value]) => [key, typeof value === "string" ? value : JSON.stringify(value)])
    )
    const started = yield* Fleet.start(settings, { only: server, loaded })
    const entry = yield* promptOf(started, server, given.target, plain)
    yield* requireArguments(entry, strings)
    const result = yield* started.registry.getPrompt(server, entry?.prompt.name ?? plain!, strings)
    if (settings.json) return yield* Render.json(result)
    yield* Render.lines([
      ...(result.description !== undefined ? [`# ${result.description}`, ""] : []),
      ...result.messages.map((message) => `${message.role}: ${Render.content(message.content)}`)
    ])
  }).pipe(Fleet.oneShot)).pipe(
    Command.withDescription(
      "Get a prompt, by qualified name or by server and name, with --arg key=value or one JSON object: " +
        "mcp-fleet prompt mcp__everything__args-prompt --arg city=Paris"
    )
  )
