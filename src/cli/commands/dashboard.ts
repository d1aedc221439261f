/**
 * `mcp-fleet dashboard`: the fleet live in a browser (see Dashboard), served on 127.0.0.1
 * with a random token in its URL, following config edits as `watch` does. The page runs
 * tools through the config's policy and is the approver of their `ask` rules; drifted tools
 * are approved there, and a project config not trusted yet is listed there, with what it would
 * start, instead of stopping the command: trusting it in the page starts its servers. With
 * `--json` it prints one line, `{"url":"http://127.0.0.1:PORT/?token=…"}`; `--open` opens it.
 * It serves until SIGINT or SIGTERM, then stops every server. `serve --dashboard` serves the
 * same page beside the gateway (`serveDashboard`).
 *
 * @since 0.6.0
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as cp from "node:child_process"
import * as Dashboard from "../../Dashboard.js"
import * as FleetConfig from "../../FleetConfig.js"
import * as Secrets from "../../internal/secrets.js"
import * as NodeDashboard from "../../NodeDashboard.js"
import * as Policy from "../../Policy.js"
import * as ServerRegistry from "../../ServerRegistry.js"
import * as ServerSpec from "../../ServerSpec.js"
import * as CliError from "../CliError.js"
import * as Fleet from "../Fleet.js"
import * as Prompt from "../Prompt.js"
import * as Render from "../Render.js"
import * as Root from "../Root.js"
import * as Settings from "../Settings.js"
import * as Trust from "../Trust.js"
import * as Watch from "./watch.js"

/**
 * The dashboard's own options, shared with `serve --dashboard`.
 *
 * @since 0.6.0
 */
export const options = {
  port: Options.integer("port").pipe(
    Options.withPseudoName("port"),
    Options.withDescription("The dashboard's port (default 0: any free port; the URL printed says which)"),
    Options.withDefault(0)
  ),
  open: Options.boolean("open").pipe(Options.withDescription("Open the dashboard in the default browser"))
}

const host = Options.text("host").pipe(
  Options.withPseudoName("address"),
  Options.withDescription("The address to bind (default 127.0.0.1: this machine only)"),
  Options.withDefault("127.0.0.1")
)

// The platform's own opener; its failure is only a note (the URL is printed anyway).
const openBrowser = (url: string) =>
  Effect.sync(() => {
    const [command, args] = process.platform === "darwin"
      ? ["open", [url]]
      : process.platform === "win32"
      ? ["cmd", ["/c", "start", "", url]]
      : ["xdg-open", [url]]
    cp.spawn(command as string, args as Array<string>, { stdio: "ignore", detached: true }).on("error", () => {
      process.stderr.write(`mcp-fleet: could not open a browser; open ${url}\n`)
    }).unref()
  })

/**
 * Serves the page of the registry and policy in context until the Scope closes, and says
 * where (`--open` opens it). The page's calls ask `approver`.
 *
 * @since 0.6.0
 */
export const serveDashboard = (
  given: { readonly port: number; readonly open: boolean; readonly host: string },
  extra: Pick<Dashboard.Options, "approver" | "trust">
) =>
  Effect.gen(function*() {
    if (given.port < 0 || given.port > 65535) {
      return yield* CliError.usage(`--port ${given.port} is not a port: give 1 to 65535, or 0 for any free port`)
    }
    const served = yield* NodeDashboard.serve({
      port: given.port,
      host: given.host,
      describeEvent: Watch.toJson,
      ...extra
    }).pipe(Effect.mapError((error) => CliError.failure(error.message)))
    if (given.open) yield* openBrowser(served.url)
    return served.url
  })

// The project files waiting for trust: their verdict is read again at every look, so a file
// trusted elsewhere (`mcp-fleet trust`) leaves the list too.
const untrusted = (settings: Settings.Settings, fs: FileSystem.FileSystem) =>
  Effect.gen(function*() {
    if (settings.trust) return []
    const records = yield* Trust.records(settings)
    const found: Array<Dashboard.Untrusted> = []
    for (const path of settings.project) {
      const text = yield* Effect.option(fs.readFileString(path))
      if (Option.isNone(text)) continue
      const seen = yield* Trust.content(path, text.value)
      const verdict = yield* records.check(path, seen.subject)
      if (verdict._tag !== "Trusted") found.push({ path, servers: seen.servers, changed: verdict._tag === "Changed" })
    }
    return found
  }).pipe(Effect.provideService(FileSystem.FileSystem, fs))

// A Policy that is always the one of the config in force, which a trust replaces.
const current = (get: () => Policy.Policy): Policy.Policy => ({
  filter: (catalog, options) => get().filter(catalog, options),
  catalog: Stream.suspend(() => get().catalog),
  decide: (tool) => get().decide(tool),
  validate: (name, args) => Effect.suspend(() => get().validate(name, args)),
  callTool: (name, args, options) => Effect.suspend(() => get().callTool(name, args, options)),
  config: Effect.suspend(() => get().config),
  update: (config) => Effect.suspend(() => get().update(config))
})

// The fleet of the files that may run now: each trust in the page follows the files again,
// now with that one. With none, no server runs and the policy is empty.
const follower = (settings: Settings.Settings, registry: ServerRegistry.ServerRegistry, approver: Dashboard.Approver) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const outer = yield* Effect.scope
    let scope = yield* Scope.fork(outer, ExecutionStrategy.sequential)
    let policy: Policy.Policy | undefined
    const follow = Effect.gen(function*() {
      const waiting = new Set((yield* untrusted(settings, fs)).map((file) => file.path))
      const paths = settings.paths.filter((path) => !waiting.has(path))
      const synced = paths.length === 0
        ? yield* Effect.zipRight(registry.reconcile([]), Effect.map(Policy.make({}), (made) => ({ policy: made })))
        : yield* FleetConfig.syncWithPolicy({
          paths,
          admit: yield* Trust.admit(settings),
          askInput: Prompt.askInput(),
          onWarning: Fleet.warn
        }).pipe(
          Effect.tap((synced) =>
            Secrets.maskLogsScoped(Secrets.make(synced.loaded.servers.flatMap(ServerSpec.secrets)))
          )
        )
      policy = synced.policy
    }).pipe(
      Effect.provideService(ServerRegistry.ServerRegistry, registry),
      Effect.provideService(Policy.Approval, approver.approval),
      Effect.provideService(FileSystem.FileSystem, fs)
    )
    yield* Scope.extend(follow, scope)
    const trust = (path: string) =>
      Effect.gen(function*() {
        const text = yield* fs.readFileString(path).pipe(Effect.mapError(() => `cannot read ${path}`))
        if (!settings.project.includes(path)) {
          return yield* Effect.fail(`${path} is not a project config of this folder`)
        }
        const seen = yield* Trust.content(path, text).pipe(Effect.provideService(FileSystem.FileSystem, fs))
        const records = yield* Trust.records(settings).pipe(Effect.provideService(FileSystem.FileSystem, fs))
        yield* records.trust(path, seen.subject).pipe(Effect.mapError((error) => error.message))
        // The files followed again from the start, with this one: servers left unchanged run on.
        const next = yield* Scope.fork(outer, ExecutionStrategy.sequential)
        yield* Scope.extend(follow, next).pipe(Effect.mapError((error) => error.message))
        yield* Scope.close(scope, Exit.void)
        scope = next
      })
    return {
      policy: current(() => policy!),
      trust: { pending: untrusted(settings, fs), trust } satisfies Dashboard.TrustQueue
    }
  })

/**
 * `mcp-fleet dashboard`.
 *
 * @since 0.6.0
 */
export const dashboard = Command.make(
  "dashboard",
  { ...Settings.options, ...options, host },
  (given) =>
    Effect.gen(function*() {
      const settings = yield* Root.settings(given)
      if (settings.paths.length === 0) return yield* Settings.noConfig()
      const fs = yield* FileSystem.FileSystem
      const waiting = new Set((yield* untrusted(settings, fs)).map((file) => file.path))
      const runnable = { ...settings, project: settings.project.filter((path) => !waiting.has(path)) }
      const registry = yield* Fleet.makeRegistry(
        settings,
        yield* Fleet.samplingCommand({ ...runnable, paths: settings.paths.filter((path) => !waiting.has(path)) })
      )
      const approver = Dashboard.makeApprover()
      const { policy, trust } = yield* follower(settings, registry, approver)
      const url = yield* serveDashboard(given, { approver, trust }).pipe(
        Effect.provideService(ServerRegistry.ServerRegistry, registry),
        Effect.provideService(Policy.Policy, policy)
      )
      if (settings.json) yield* Render.lines([JSON.stringify({ url })])
      else {
        yield* Render.note(`mcp-fleet dashboard on ${url} (Ctrl-C to stop)`)
        if (waiting.size > 0) yield* Render.note(`${waiting.size} project config(s) wait for trust: see the page`)
      }
      return yield* Effect.never
    }).pipe(Effect.scoped)
).pipe(
  Command.withDescription(
    "Open the fleet in a browser: servers, tools to try, events, drift, trust and call metrics, live"
  )
)
