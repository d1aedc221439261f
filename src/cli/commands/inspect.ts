/**
 * `servers`, `tools`, `resources` and `prompts`: what the fleet is and offers.
 *
 * @since 0.1.0
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Catalog from "../../Catalog.js"
import * as McpError from "../../McpError.js"
import type * as ServerRegistry from "../../ServerRegistry.js"
import { describe } from "../../ServerState.js"
import * as ToolPins from "../../ToolPins.js"
import * as ToolSearch from "../../ToolSearch.js"
import * as CliError from "../CliError.js"
import * as Fleet from "../Fleet.js"
import * as Render from "../Render.js"
import * as Root from "../Root.js"
import * as Settings from "../Settings.js"
import * as TerminalPolicy from "../TerminalPolicy.js"
import * as Search from "./search.js"

const statusJson = (status: ServerRegistry.ServerStatus, now: number) => ({
  name: status.name,
  state: status.state._tag,
  detail: describe(status.state, now),
  transport: status.transport,
  required: status.required,
  protocolVersion: status.protocolVersion ?? null,
  serverInfo: status.serverInfo ?? null,
  tools: status.counts.tools,
  resources: status.counts.resources,
  templates: status.counts.templates,
  prompts: status.counts.prompts,
  pid: typeof status.connection?.pid === "number" ? status.connection.pid : null,
  // Where a person authorizes a server in NeedsAuth ('mcp-fleet auth <name>' opens it).
  authorizationUrl: status.state._tag === "NeedsAuth" ? status.state.authorizationUrl ?? null : null,
  error: status.lastError === undefined
    ? null
    : { reason: status.lastError.reason._tag, message: status.lastError.message },
  // On a cluster (--cluster): the runner hosting the server.
  ...(status.runner === undefined ? {} : { runner: status.runner }),
  ...(status.instances === undefined ? {} : { instances: status.instances })
})

// Fails when an enabled server is not ready (Failed, NeedsAuth, or still connecting when
// --timeout ended), so that `servers` works as a health check; a disabled one is no fault,
// nor an Idle one (lazy, or stopped when quiet: a call starts it).
const healthy = (statuses: ReadonlyArray<ServerRegistry.ServerStatus>, now: number) => {
  const down = statuses.filter((status) => !["Ready", "Disabled", "Idle"].includes(status.state._tag))
  if (down.length === 0) return Effect.void
  const list = down.map((status) => `'${status.name}' (${Render.clip(describe(status.state, now), 80)})`).join(", ")
  return Effect.fail(
    CliError.failure(`${down.length} server${down.length === 1 ? " is" : "s are"} not ready: ${list}`)
  )
}

/**
 * `mcp-fleet servers`: every server's status; exits with 1 when an enabled server is not
 * ready (a health check).
 *
 * @since 0.1.0
 */
export const servers = Command.make("servers", Settings.options, (given) =>
  Effect.gen(function*() {
    const settings = yield* Root.settings(given)
    const { registry } = yield* Fleet.start(settings)
    const statuses = yield* registry.status
    const now = yield* Clock.currentTimeMillis
    if (settings.json) yield* Render.json(statuses.map((status) => statusJson(status, now)))
    else {
      yield* Render.lines(Render.statusTable(statuses, now))
      // The whole error of each server that is not ready, stderr tail included.
      for (const status of statuses) {
        if (status.state._tag !== "Ready" && status.lastError !== undefined) {
          yield* Render.lines(["", `${status.name}: ${status.lastError.message}`])
        }
      }
    }
    yield* healthy(statuses, now)
  }).pipe(Fleet.oneShot)).pipe(
    Command.withDescription(
      "Show every server's state, transport, revision, counts and last error; exit 1 when an enabled server is " +
        "not ready (Failed, NeedsAuth, or still connecting at --timeout), so it serves as a health check"
    )
  )

const serverOption = Options.text("server").pipe(
  Options.withAlias("s"),
  Options.withPseudoName("name"),
  Options.withDescription("Only this server"),
  Options.optional
)

// With --server only that server is started, so the catalog holds nothing else.
const startedWith = (settings: Settings.Settings, server: Option.Option<string>) =>
  Fleet.start(settings, { only: Option.getOrUndefined(server) })

const catalogOf = (started: Fleet.Started) =>
  Effect.gen(function*() {
    const policy = yield* TerminalPolicy.make(started, false)
    return policy.filter(yield* SubscriptionRef.get(started.registry.catalog))
  })

const toolJson = (entry: Catalog.ToolEntry) => ({
  name: entry.name,
  server: entry.server,
  tool: entry.tool.name,
  title: entry.tool.title ?? entry.tool.annotations?.title ?? null,
  description: entry.tool.description ?? null,
  inputSchema: entry.tool.inputSchema,
  outputSchema: entry.tool.outputSchema ?? null,
  annotations: entry.tool.annotations ?? null,
  hidden: entry.hidden ?? null
})

// What hidden text the tool's server put in its definition, and what the catalog did with it.
const hiddenText = (hidden: Catalog.HiddenText | undefined): string | undefined =>
  hidden === undefined ?
    undefined :
    `${hidden.found.join(", ")} in ${hidden.fields.join(", ")}; ${
      hidden.action === "stripped" ? "stripped before a model sees it" : "made visible to the model"
    }`

// The hints a person wants to see before calling a tool.
const hints = (entry: Catalog.ToolEntry): string => {
  const annotations = entry.tool.annotations
  if (annotations === undefined) return ""
  return [
    annotations.readOnlyHint === true ? "read-only" : undefined,
    annotations.destructiveHint === true ? "destructive" : undefined,
    annotations.idempotentHint === true ? "idempotent" : undefined,
    annotations.openWorldHint === true ? "open-world" : undefined
  ].filter((hint) => hint !== undefined).join(",")
}

const pinJson = (pin: ToolPins.Pin) => ({ digest: pin.digest, at: pin.at, definition: pin.definition })

const driftJson = (drift: ToolPins.Drift) => ({
  name: drift.name,
  server: drift.server,
  tool: drift.tool,
  quarantined: drift.quarantined,
  changed: ToolPins.differences(drift.before?.definition, drift.after.definition),
  before: drift.before === undefined ? null : pinJson(drift.before),
  after: pinJson(drift.after)
})

// The tools whose definition changed since they were pinned, with what changed.
const showDrifted = (settings: Settings.Settings, drifts: ReadonlyArray<ToolPins.Drift>) =>
  Effect.gen(function*() {
    if (settings.json) return yield* Render.json(drifts.map(driftJson))
    yield* Render.lines(Render.table([
      ["name", "server", "state", "changed", "new description"],
      ...drifts.map((drift) => [
        drift.name,
        drift.server,
        drift.quarantined ? "held back" : "in use",
        drift.before === undefined
          ? "new tool"
          : ToolPins.differences(drift.before.definition, drift.after.definition).join(","),
        Render.clip(drift.after.definition.description, 60)
      ])
    ]))
    yield* Render.note(
      drifts.length === 0
        ? "no tool changed its definition since it was pinned"
        : `${drifts.length} tool${drifts.length === 1 ? "" : "s"} changed since pinned; ` +
          "'mcp-fleet approve <name>' makes the new definition the pin (--json shows both in full)"
    )
  })

// Only the server a qualified name (or --server) names is started; any other name is looked
// for in the whole fleet.
const startedFor = (settings: Settings.Settings, server: Option.Option<string>, name: string) =>
  Effect.gen(function*() {
    const loaded = yield* Fleet.loadConfig(settings)
    const only = Option.getOrUndefined(server) ?? Fleet.serverOfQualified(name, loaded.servers)
    return yield* Fleet.start(settings, { only, loaded })
  })

const notFound = (what: "tool" | "prompt" | "resource", name: string, known: Iterable<string>) =>
  McpError.notFound(undefined, { what, name, suggestions: Catalog.suggest(name, known) })

// `tools <name>`: one tool in full.
const showTool = (settings: Settings.Settings, server: Option.Option<string>, name: string) =>
  Effect.gen(function*() {
    const catalog = yield* catalogOf(yield* startedFor(settings, server, name))
    const entry = catalog.toolsByName.get(name) ??
      catalog.tools.find((candidate) => Option.contains(server, candidate.server) && candidate.tool.name === name)
    if (entry === undefined) return yield* notFound("tool", name, catalog.toolsByName.keys())
    if (settings.json) return yield* Render.json(toolJson(entry))
    const annotations = entry.tool.annotations
    yield* Render.lines(Render.detail(
      entry.name,
      [
        ["server", entry.server],
        ["tool", entry.tool.name],
        ["title", entry.tool.title ?? annotations?.title],
        ["hints", hints(entry)],
        ["hidden", hiddenText(entry.hidden)]
      ],
      entry.tool.description,
      [
        ["arguments", Render.argumentsTable(Render.schemaArguments(entry.tool.inputSchema))],
        ...(annotations === undefined ? [] : [["annotations", [`  ${JSON.stringify(annotations)}`]] as const]),
        ...(entry.tool.outputSchema === undefined
          ? []
          : [["output", Render.argumentsTable(Render.schemaArguments(entry.tool.outputSchema))]] as const)
      ]
    ))
  })

/**
 * `mcp-fleet tools`: the tool catalog, with the names to call tools by; `--drifted`, the
 * tools whose definition changed since they were pinned.
 *
 * @since 0.1.0
 */
export const tools = Command.make(
  "tools",
  {
    ...Settings.options,
    server: serverOption,
    drifted: Options.boolean("drifted").pipe(
      Options.withDescription("List the tools whose definition changed since they were pinned, and what changed")
    ),
    search: Options.text("search").pipe(
      Options.withPseudoName("query"),
      Options.withDescription("The tools best matching a query in words, best first, with their scores"),
      Options.optional
    ),
    limit: Options.integer("limit").pipe(
      Options.withDescription("With --search: the most tools shown"),
      Options.withDefault(ToolSearch.DEFAULT_LIMIT)
    ),
    name: Args.text({ name: "name" }).pipe(
      Args.withDescription(
        "One tool to show in full (its description, arguments, annotations and server): its qualified name, " +
          "or its own name with --server"
      ),
      Args.optional
    )
  },
  (given) =>
    Effect.gen(function*() {
      const settings = yield* Root.settings(given)
      if (Option.isSome(given.name)) return yield* showTool(settings, given.server, given.name.value)
      const started = yield* startedWith(settings, given.server)
      const drifts = yield* started.registry.drifted
      if (given.drifted) return yield* showDrifted(settings, drifts)
      if (Option.isSome(given.search)) return yield* Search.show(settings, started, given.search.value, given.limit)
      const entries = (yield* catalogOf(started)).tools
      if (settings.json) return yield* Render.json(entries.map(toolJson))
      // The hidden column only when some server hid text in a tool: it names what was done.
      const hiding = entries.filter((entry) => entry.hidden !== undefined).length
      yield* Render.lines(Render.table([
        ["name", "server", "hints", ...(hiding === 0 ? [] : ["hidden"]), "description"],
        ...entries.map((entry) => [
          entry.name,
          entry.server,
          hints(entry),
          ...(hiding === 0 ? [] : [entry.hidden?.action ?? ""]),
          Render.clip(entry.tool.description, 70)
        ])
      ]))
      const held = drifts.filter((drift) => drift.quarantined).length
      yield* Render.note(
        `${entries.length} tool${entries.length === 1 ? "" : "s"}${
          held === 0 ? "" : `; ${held} held back because their definition changed: see 'mcp-fleet tools --drifted'`
        }${
          hiding === 0
            ? ""
            : `; ${hiding} hid text from people (hidden column): 'mcp-fleet tools <name>' says what and where`
        }`
      )
    }).pipe(Fleet.oneShot)
).pipe(Command.withDescription(
  "List the tools of the fleet by qualified name (mcp__<server>__<tool>); tools <name> shows one in full; " +
    "tools --search <query> the best matches"
))

// `resources <uri>`: one resource, or one template, in full.
const showResource = (settings: Settings.Settings, catalog: Catalog.Catalog, uri: string) =>
  Effect.gen(function*() {
    const resource = catalog.resources.find((entry) => entry.resource.uri === uri)
    const template = catalog.templates.find((entry) => entry.template.uriTemplate === uri)
    const found = resource !== undefined
      ? { server: resource.server, item: resource.resource as Record<string, unknown> }
      : template !== undefined
      ? { server: template.server, item: template.template as Record<string, unknown> }
      : undefined
    if (found === undefined) {
      return yield* notFound("resource", uri, [
        ...catalog.resources.map((entry) => entry.resource.uri),
        ...catalog.templates.map((entry) => entry.template.uriTemplate)
      ])
    }
    if (settings.json) return yield* Render.json({ server: found.server, ...found.item })
    const { description, ...rest } = found.item
    yield* Render.lines(Render.detail(
      uri,
      [
        ["server", found.server],
        ...Object.entries(rest).filter(([key]) => key !== "uri" && key !== "uriTemplate").map(([key, value]) =>
          [key, typeof value === "string" ? value : JSON.stringify(value)] as const
        ),
        ["read it", resource === undefined ? undefined : `mcp-fleet read ${found.server} ${uri}`]
      ],
      typeof description === "string" ? description : undefined
    ))
  })

/**
 * `mcp-fleet resources`: the resources and resource templates of the fleet.
 *
 * @since 0.1.0
 */
export const resources = Command.make(
  "resources",
  {
    ...Settings.options,
    server: serverOption,
    uri: Args.text({ name: "uri" }).pipe(
      Args.withDescription("One resource (or template) to show in full, by its URI (or URI template)"),
      Args.optional
    )
  },
  (given) =>
    Effect.gen(function*() {
      const settings = yield* Root.settings(given)
      const catalog = yield* catalogOf(yield* startedWith(settings, given.server))
      if (Option.isSome(given.uri)) return yield* showResource(settings, catalog, given.uri.value)
      const listed = catalog.resources
      const templates = catalog.templates
      if (settings.json) {
        return yield* Render.json({
          resources: listed.map((entry) => ({ server: entry.server, ...entry.resource })),
          templates: templates.map((entry) => ({ server: entry.server, ...entry.template }))
        })
      }
      yield* Render.lines(Render.table([
        ["server", "uri", "name", "mime type"],
        ...listed.map((
          entry
        ) => [entry.server, entry.resource.uri, Render.clip(entry.resource.name, 40), entry.resource.mimeType ?? ""]),
        ...templates.map((entry) => [
          entry.server,
          entry.template.uriTemplate,
          Render.clip(entry.template.name, 40),
          entry.template.mimeType ?? ""
        ])
      ]))
      yield* Render.note(`${listed.length} resources, ${templates.length} templates`)
    }).pipe(Fleet.oneShot)
).pipe(Command.withDescription(
  "List the resources and resource templates of the fleet; resources <uri> shows one in full"
))

// `prompts <name>`: one prompt in full.
const showPrompt = (settings: Settings.Settings, server: Option.Option<string>, name: string) =>
  Effect.gen(function*() {
    const catalog = yield* catalogOf(yield* startedFor(settings, server, name))
    const entry = catalog.promptsByName.get(name) ??
      catalog.prompts.find((candidate) => Option.contains(server, candidate.server) && candidate.prompt.name === name)
    if (entry === undefined) return yield* notFound("prompt", name, catalog.promptsByName.keys())
    if (settings.json) return yield* Render.json({ name: entry.name, server: entry.server, prompt: entry.prompt })
    yield* Render.lines(Render.detail(
      entry.name,
      [["server", entry.server], ["prompt", entry.prompt.name], ["title", entry.prompt.title]],
      entry.prompt.description,
      [[
        "arguments",
        Render.argumentsTable((entry.prompt.arguments ?? []).map((arg) => ({
          name: arg.name,
          type: "string",
          required: arg.required === true,
          ...(arg.description !== undefined ? { description: arg.description } : {})
        })))
      ]]
    ))
  })

/**
 * `mcp-fleet prompts`: the prompts of the fleet and their arguments.
 *
 * @since 0.1.0
 */
export const prompts = Command.make(
  "prompts",
  {
    ...Settings.options,
    server: serverOption,
    name: Args.text({ name: "name" }).pipe(
      Args.withDescription(
        "One prompt to show in full (its description and arguments): its qualified name, or its own name with --server"
      ),
      Args.optional
    )
  },
  (given) =>
    Effect.gen(function*() {
      const settings = yield* Root.settings(given)
      if (Option.isSome(given.name)) return yield* showPrompt(settings, given.server, given.name.value)
      const catalog = yield* catalogOf(yield* startedWith(settings, given.server))
      const entries = catalog.prompts
      if (settings.json) {
        return yield* Render.json(
          entries.map((entry) => ({ name: entry.name, server: entry.server, prompt: entry.prompt }))
        )
      }
      yield* Render.lines(Render.table([
        ["server", "prompt", "arguments", "description"],
        ...entries.map((entry) => [
          entry.server,
          entry.prompt.name,
          (entry.prompt.arguments ?? []).map((arg) => arg.required === true ? arg.name : `[${arg.name}]`).join(" "),
          Render.clip(entry.prompt.description, 60)
        ])
      ]))
    }).pipe(Fleet.oneShot)
).pipe(Command.withDescription(
  "List the prompts of the fleet with their arguments; prompts <name> shows one in full"
))
