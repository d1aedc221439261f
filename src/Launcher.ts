/**
 * The Launcher service: how the fleet opens the transports that need the platform, a child
 * process speaking on stdio and a WebSocket with custom headers. The main entry stays
 * neutral (it runs on Workers, Deno, Bun and in the browser), so it only declares them here;
 * `mcp-fleet/node` provides the Node launcher (`NodeFleet.layerLauncher`, part of
 * `NodeFleet.layer`) on `node:child_process` (Stdio) and `ws` (WebSocket).
 *
 * `ServerSpec.connect` asks for it only when a spec needs it: a fleet of HTTP servers runs
 * without one, and a stdio or ws server on a runtime without one fails (for good) with an
 * McpError whose reason is `Config`, naming the server and the layer to provide.
 *
 * @since 0.4.0
 */
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as McpError from "./McpError.js"
import type { Transport } from "./Transport.js"

/**
 * How to start a stdio server.
 *
 * @since 0.4.0
 * @category models
 */
export interface StdioOptions {
  /** The server's name, used in errors and logs. */
  readonly name: string
  /** The program to run. It is run directly, never through a shell. */
  readonly command: string
  readonly args?: ReadonlyArray<string> | undefined
  /** Variables for the child, over the ones it starts with; secrets may be Redacted. */
  readonly env?: Readonly<Record<string, string | Redacted.Redacted<string>>> | undefined
  /**
   * Whether the child inherits this process's whole environment. Default: false: it gets
   * only PATH, HOME, USER, LOGNAME, SHELL, TERM, LANG, LC_* and TMPDIR (on Windows: PATH,
   * SYSTEMROOT, TEMP, USERPROFILE, APPDATA and the other system variables), plus `env`.
   */
  readonly inheritEnv?: boolean | undefined
  readonly cwd?: string | undefined
  /** The largest message accepted from the server. Default: 16 MiB. */
  readonly maxMessageBytes?: number | undefined
  /** How much of the server's stderr is kept for error messages. Default: 64 KiB. */
  readonly stderrTailBytes?: number | undefined
  /** How long to wait for the server to exit after its stdin is closed. Default: 2 seconds. */
  readonly closeGracePeriod?: Duration.DurationInput | undefined
  /** How long to wait after SIGTERM before SIGKILL. Default: 2 seconds. */
  readonly termGracePeriod?: Duration.DurationInput | undefined
}

/**
 * How to reach a WebSocket server.
 *
 * @since 0.4.0
 * @category models
 */
export interface WebSocketOptions {
  /** The server's name, used in errors and logs. */
  readonly name: string
  /** A `ws:` or `wss:` URL. */
  readonly url: string
  /** Headers of the upgrade request (authorization, API keys); secrets may be Redacted. */
  readonly headers?: Readonly<Record<string, string | Redacted.Redacted<string>>> | undefined
  /** The largest message accepted. Default: 16 MiB. */
  readonly maxMessageBytes?: number | undefined
  /** How long the connection may take to open. Default: 10 seconds. */
  readonly openTimeout?: Duration.DurationInput | undefined
}

/**
 * Opens the platform's transports, each owned by the current Scope.
 *
 * @since 0.4.0
 * @category models
 */
export interface Launcher {
  /** Starts a server as a child process speaking on stdio (and its whole process tree ends with the Scope). */
  readonly stdio: (options: StdioOptions) => Effect.Effect<Transport, McpError.McpError, Scope.Scope>
  /** Opens a WebSocket to a server; fails if it does not open. */
  readonly webSocket: (options: WebSocketOptions) => Effect.Effect<Transport, McpError.McpError, Scope.Scope>
}

/**
 * The Launcher service.
 *
 * @since 0.4.0
 * @category tags
 */
export const Launcher = Context.GenericTag<Launcher>("mcp-fleet/Launcher")

const missing = (server: string, what: string) =>
  McpError.config(server, {
    message: `${what} needs a launcher, which this runtime lacks: ` +
      `on Node, provide NodeFleet.layer (or NodeFleet.layerLauncher) from "mcp-fleet/node"`
  })

/**
 * Starts a stdio server with the Launcher in context; without one, fails with a `Config`
 * McpError naming the server.
 *
 * @since 0.4.0
 * @category constructors
 */
export const stdio = (options: StdioOptions): Effect.Effect<Transport, McpError.McpError, Scope.Scope> =>
  Effect.flatMap(Effect.serviceOption(Launcher), (launcher) =>
    Option.isSome(launcher)
      ? launcher.value.stdio(options)
      : Effect.fail(missing(options.name, `starting the stdio server "${options.command}"`)))

/**
 * Opens a WebSocket with the Launcher in context; without one, fails with a `Config`
 * McpError naming the server.
 *
 * @since 0.4.0
 * @category constructors
 */
export const webSocket = (
  options: WebSocketOptions
): Effect.Effect<Transport, McpError.McpError, Scope.Scope> =>
  Effect.flatMap(Effect.serviceOption(Launcher), (launcher) =>
    Option.isSome(launcher)
      ? launcher.value.webSocket(options)
      : Effect.fail(missing(options.name, "a WebSocket connection with custom headers")))
