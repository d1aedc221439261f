/**
 * What the MCP Inspector does on one server's session: `ping`, `complete` (a prompt's or
 * resource template's argument), `log-level` (and the log messages that follow), and
 * `subscribe` (a resource's updates, until Ctrl-C); and the bytes of a resource for
 * `read --output`.
 *
 * @since 0.5.0
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Console from "effect/Console"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as SubscriptionRef from "effect/SubscriptionRef"
import type * as JsonRpc from "../../JsonRpc.js"
import type * as McpClient from "../../McpClient.js"
import type * as McpError from "../../McpError.js"
import * as McpSchema from "../../McpSchema.js"
import * as CliError from "../CliError.js"
import * as Fleet from "../Fleet.js"
import * as Render from "../Render.js"
import * as Root from "../Root.js"
import * as Settings from "../Settings.js"
import * as Edit from "./edit.js"

// Starts the one server and runs `f` on its session.
const onServer = <A>(
  given: Settings.Given & { readonly server: string },
  f: (client: McpClient.McpClient, settings: Settings.Settings) => Effect.Effect<A, McpError.McpError>
) =>
  Effect.gen(function*() {
    const settings = yield* Root.settings(given)
    const { registry } = yield* Fleet.start(settings, { only: given.server })
    return yield* registry.withClient(given.server, (client) => f(client, settings))
  }).pipe(Fleet.oneShot)

/**
 * `mcp-fleet ping <server>`.
 *
 * @since 0.5.0
 */
export const ping = Command.make(
  "ping",
  { ...Settings.options, server: Fleet.serverArg("server") },
  (given) =>
    onServer(given, (client, settings) =>
      Effect.gen(function*() {
        const [elapsed] = yield* Effect.timed(client.ping())
        const ms = Math.round(Duration.toMillis(elapsed))
        yield* settings.json
          ? Render.json({ server: given.server, ms })
          : Render.lines([`'${given.server}' answered in ${ms} ms`])
      }))
).pipe(Command.withDescription("Check that a server answers (ping), and how fast"))

/**
 * `mcp-fleet complete <server> <argument> [value] --prompt <name> | --resource <template>`.
 *
 * @since 0.5.0
 */
export const complete = Command.make("complete", {
  ...Settings.options,
  server: Fleet.serverArg("server"),
  argument: Args.text({ name: "argument" }).pipe(Args.withDescription("The argument to complete")),
  value: Args.text({ name: "value" }).pipe(
    Args.withDescription("What is typed of it so far (default: nothing)"),
    Args.optional
  ),
  prompt: Options.text("prompt").pipe(
    Options.withPseudoName("name"),
    Options.withDescription("Complete an argument of this prompt"),
    Options.optional
  ),
  resource: Options.text("resource").pipe(
    Options.withPseudoName("uri-template"),
    Options.withDescription("Complete a variable of this resource template"),
    Options.optional
  ),
  context: Options.text("context").pipe(
    Options.withPseudoName("name=value"),
    Options.withDescription("An argument already chosen, which the server may narrow the values by (repeatable)"),
    Options.repeated
  )
}, (given) =>
  Effect.gen(function*() {
    if (Option.isSome(given.prompt) === Option.isSome(given.resource)) {
      return yield* CliError.usage("complete needs one of --prompt <name> or --resource <uri-template>")
    }
    const ref: McpClient.CompletionRef = Option.isSome(given.prompt)
      ? { type: "ref/prompt", name: given.prompt.value }
      : { type: "ref/resource", uri: Option.getOrThrow(given.resource) }
    const context = yield* Edit.pairs(given.context, "context")
    const argument = { name: given.argument, value: Option.getOrElse(given.value, () => "") }
    return yield* onServer(given, (client, settings) =>
      Effect.gen(function*() {
        const { completion } = yield* client.complete(
          ref,
          argument,
          context === undefined ? undefined : { arguments: context }
        )
        if (settings.json) return yield* Render.json(completion)
        const more = completion.hasMore === true || (completion.total ?? 0) > completion.values.length
        yield* Render.lines(completion.values)
        if (more) yield* Render.note(`(${completion.total ?? "more"} in all; type more to narrow them)`)
      }))
  })).pipe(Command.withDescription(
    "Complete a prompt's or resource template's argument: the values the server offers for what is typed so far"
  ))

// One streamed item: a JSON line for programs, a line of text for people.
const emit = (json: boolean, value: unknown, text: string) => Console.log(json ? JSON.stringify(value) : text)

// The server's notifications of `method`, each printed, until interrupted (Ctrl-C).
const follow = (
  queue: Queue.Dequeue<JsonRpc.Notification>,
  method: string,
  print: (params: Record<string, unknown>) => Effect.Effect<void>
) =>
  Queue.take(queue).pipe(
    Effect.flatMap((notification) =>
      notification.method === method ? print((notification.params ?? {}) as Record<string, unknown>) : Effect.void
    ),
    Effect.forever
  )

/**
 * `mcp-fleet log-level <server> <level>`: sets the server's log level; with `--follow`,
 * prints its log messages until Ctrl-C.
 *
 * @since 0.5.0
 */
export const logLevel = Command.make("log-level", {
  ...Settings.options,
  server: Fleet.serverArg("server"),
  level: Args.choice(McpSchema.LoggingLevel.literals.map((level) => [level, level] as const), { name: "level" }).pipe(
    Args.withDescription(`The least severe level the server should send: ${McpSchema.LoggingLevel.literals.join(", ")}`)
  ),
  follow: Options.boolean("follow").pipe(
    Options.withAlias("f"),
    Options.withDescription("Then print the server's log messages as they come, until Ctrl-C (--json: one line each)")
  )
}, (given) =>
  onServer(given, (client, settings) =>
    Effect.scoped(Effect.gen(function*() {
      const queue = yield* client.subscribe
      yield* client.setLoggingLevel(given.level)
      if (!given.follow) {
        return yield* settings.json
          ? Render.json({ server: given.server, level: given.level })
          : Render.lines([`'${given.server}' logs from ${given.level} up`])
      }
      yield* Render.note(`'${given.server}' logs from ${given.level} up; its messages follow (Ctrl-C ends)`)
      yield* follow(queue, "notifications/message", (params) =>
        emit(
          settings.json,
          params,
          `[${String(params.level)}]${params.logger === undefined ? "" : ` ${String(params.logger)}:`} ${
            typeof params.data === "string" ? params.data : JSON.stringify(params.data)
          }`
        ))
    })))).pipe(Command.withDescription("Set a server's log level (logging/setLevel); --follow prints its messages"))

// The server that lists `uri` as a resource, when `--server` does not say.
const ownerOf = (started: Fleet.Started, uri: string) =>
  Effect.gen(function*() {
    const catalog = yield* SubscriptionRef.get(started.registry.catalog)
    const owner = catalog.resources.find((entry) => entry.resource.uri === uri)?.server
    if (owner !== undefined) return owner
    return yield* CliError.usage(`no server lists the resource '${uri}'; name its server with --server <name>`)
  })

/**
 * `mcp-fleet subscribe <uri>`: the resource's updates as they come, until Ctrl-C.
 *
 * @since 0.5.0
 */
export const subscribe = Command.make("subscribe", {
  ...Settings.options,
  uri: Fleet.uriArg,
  server: Options.text("server").pipe(
    Options.withAlias("s"),
    Options.withPseudoName("name"),
    Options.withDescription("The server of the resource (default: the one that lists it)"),
    Options.optional
  )
}, (given) =>
  Effect.gen(function*() {
    const settings = yield* Root.settings(given)
    const started = yield* Fleet.start(settings, { only: Option.getOrUndefined(given.server) })
    const server = Option.isSome(given.server) ? given.server.value : yield* ownerOf(started, given.uri)
    yield* started.registry.withClient(server, (client) =>
      Effect.scoped(Effect.gen(function*() {
        const queue = yield* client.subscribe
        yield* Effect.acquireRelease(
          client.subscribeResource(given.uri),
          () => Effect.ignore(client.unsubscribeResource(given.uri))
        )
        yield* Render.note(`subscribed to ${given.uri} on '${server}'; its updates follow (Ctrl-C ends)`)
        yield* follow(queue, "notifications/resources/updated", (params) =>
          params.uri === given.uri
            ? emit(settings.json, { server, uri: params.uri, at: new Date().toISOString() }, `updated: ${given.uri}`)
            : Effect.void)
      })))
  }).pipe(Fleet.oneShot)).pipe(
    Command.withDescription("Print a resource's updates as the server sends them, until Ctrl-C (resources/subscribe)")
  )

/**
 * `read --output <file>`: the resource's contents as bytes into `file` (a blob decoded from
 * base64, text as UTF-8); without it, a blob is refused on a terminal, where it would print
 * garbage, and written as bytes to stdout that is not one.
 *
 * @since 0.5.0
 */
export const writeContents = (
  result: McpSchema.ReadResourceResult,
  output: Option.Option<string>,
  uri: string
): Effect.Effect<boolean, CliError.CliError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const bytes = Buffer.concat(result.contents.map((contents) => {
      const any = contents as unknown as Record<string, unknown>
      return typeof any.blob === "string"
        ? Buffer.from(any.blob, "base64")
        : Buffer.from(String(any.text ?? ""), "utf8")
    }))
    if (Option.isSome(output)) {
      const fs = yield* FileSystem.FileSystem
      yield* fs.writeFile(output.value, bytes).pipe(
        Effect.mapError((error) => CliError.failure(`cannot write ${output.value}: ${error.message}`))
      )
      yield* Render.note(`wrote ${bytes.length} bytes of ${uri} to ${output.value}`)
      return true
    }
    const binary = result.contents.some((contents) => "blob" in contents)
    if (!binary) return false
    if (process.stdout.isTTY) {
      return yield* CliError.usage(
        `${uri} is binary (${bytes.length} bytes): pass --output <file> to save it, or --json for its base64`
      )
    }
    yield* Effect.async<void>((resume) => void process.stdout.write(bytes, () => resume(Effect.void)))
    return true
  })
