/**
 * `mcp-fleet test <name>`: connects one server outside the fleet (no restarts, nothing
 * hidden) and reports each step of its lifecycle with its timing and what failed.
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
import * as McpClient from "../../McpClient.js"
import type * as ServerRegistry from "../../ServerRegistry.js"
import * as ServerSpec from "../../ServerSpec.js"
import { Transport } from "../../Transport.js"
import * as CliError from "../CliError.js"
import * as Fleet from "../Fleet.js"
import * as Render from "../Render.js"
import * as Root from "../Root.js"
import * as Settings from "../Settings.js"

interface Step {
  readonly step: string
  readonly ok: boolean
  readonly ms: number
  readonly detail: string
}

const where = (spec: ServerSpec.ServerSpec): string => {
  const transport = spec.transport
  switch (transport.type) {
    case "stdio":
      return `stdio: ${[transport.command, ...(transport.args ?? [])].join(" ")}`
    case "custom":
      return "custom transport"
    default:
      // The query may hold a token.
      return `${transport.type}: ${transport.url.split("?")[0]}`
  }
}

const failure = <E extends { readonly message: string }>(cause: Cause.Cause<E>): string =>
  Option.match(Cause.failureOption(cause), { onNone: () => Cause.pretty(cause), onSome: (error) => error.message })

const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? "" : "s"}`

/**
 * The steps of connecting one server, each timed; the first failure ends the run.
 *
 * @since 0.1.0
 */
export const probe = (
  spec: ServerSpec.ServerSpec,
  timeout: Duration.Duration
): Effect.Effect<ReadonlyArray<Step>, never, ServerRegistry.Requirements> =>
  Effect.gen(function*() {
    const steps: Array<Step> = []
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
            : { step: name, ok: false, ms, detail: failure(exit.cause) }
        )
        return exit
      })
    if (spec.problem !== undefined) {
      steps.push({ step: "config", ok: false, ms: 0, detail: spec.problem })
      return steps
    }
    const scope = yield* Scope.make()
    const connection = Effect.gen(function*() {
      const transport = yield* step("connect", ServerSpec.connect(spec), (opened) => {
        const pid = opened.info().pid
        return typeof pid === "number" ? `pid ${pid}` : opened.kind
      })
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
        yield* step("resources/templates/list", client.listResourceTemplates(), (listed) =>
          plural(listed.length, "template"))
      }
      if (offered.prompts !== undefined) {
        yield* step("prompts/list", client.listPrompts(), (listed) =>
          plural(listed.length, "prompt"))
      }
      yield* step("ping", client.ping(), () =>
        "")
    }).pipe(Scope.extend(scope), Effect.ignore)
    yield* connection
    yield* step("close", Scope.close(scope, Exit.void), () => "")
    return steps
  })

/**
 * `mcp-fleet test <name>`.
 *
 * @since 0.1.0
 */
export const test = Command.make(
  "test",
  { ...Settings.options, server: Args.text({ name: "name" }) },
  (given) =>
    Effect.gen(function*() {
      const settings = yield* Root.settings(given)
      const loaded = yield* Fleet.loadConfig(settings)
      yield* Fleet.requireServer(loaded, given.server)
      const spec = loaded.servers.find((candidate) => candidate.name === given.server)!
      if (!settings.json) yield* Render.note(`testing '${spec.name}' (${where(spec)})`)
      const steps = yield* probe(spec, settings.timeout)
      const ok = steps.every((entry) => entry.ok)
      const total = steps.reduce((sum, entry) => sum + entry.ms, 0)
      if (settings.json) {
        yield* Render.json({ server: spec.name, ok, totalMs: total, steps })
      } else {
        yield* Render.lines(Render.table([
          ["", "step", "ms", "detail"],
          ...steps.map((entry) => [entry.ok ? "✓" : "✗", entry.step, String(entry.ms), entry.ok ? entry.detail : ""])
        ]))
        const failed = steps.find((entry) => !entry.ok)
        if (failed !== undefined) yield* Render.lines(["", `${failed.step} failed: ${failed.detail}`])
      }
      if (!ok) {
        return yield* CliError.failure(
          `server '${spec.name}' failed its test at ${steps.find((entry) => !entry.ok)!.step}`
        )
      }
      if (!settings.json) yield* Render.note(`'${spec.name}' works (${total} ms)`)
    })
).pipe(Command.withDescription("Connect one server and report each lifecycle step with timings and what failed"))
