/**
 * The stdio transport: the server is a child process speaking newline-delimited JSON-RPC on
 * its stdin and stdout. The child runs in its own process group, and closing the scope ends
 * the whole group within a bounded time, even when the server ignores SIGTERM or has
 * spawned children of its own.
 *
 * It sits on `node:child_process` directly: the server's stdout is split, parsed and
 * delivered to the Peer inside the pipe's `data` callback, and the lines sent in one tick
 * go to its stdin in one write. Node only.
 *
 * @since 0.1.0
 */
import * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as Layer from "effect/Layer"
import type * as Redacted from "effect/Redacted"
import * as Runtime from "effect/Runtime"
import type * as Scope from "effect/Scope"
import * as ChildProcess from "node:child_process"
import type { Readable, Writable } from "node:stream"
import { revealAll } from "./internal/reveal.js"
import { ByteTail } from "./internal/transport/byteTail.js"
import * as Ndjson from "./internal/transport/ndjson.js"
import { signalGroup, waitGone } from "./internal/transport/processGroup.js"
import * as StdioServer from "./internal/transport/stdioServer.js"
import * as JsonRpc from "./JsonRpc.js"
import * as McpError from "./McpError.js"
import { Inbox, sendWith, Transport, type TransportService } from "./Transport.js"

/**
 * How to start a stdio server.
 *
 * @since 0.1.0
 */
export interface Options {
  /** The server's name, used in errors and logs. */
  readonly name: string
  /** The program to run. It is run directly, never through a shell. */
  readonly command: string
  readonly args?: ReadonlyArray<string> | undefined
  /** Variables for the child. They override inherited ones; secrets may be Redacted. */
  readonly env?: Readonly<Record<string, string | Redacted.Redacted<string>>> | undefined
  /** Whether the child inherits this process's environment. Default: true. */
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

// Spawns the child in a group of its own; fails with a Transport error naming the command
// when it cannot start (no such program, no such directory).
const spawn = (options: Options): Effect.Effect<ChildProcess.ChildProcessWithoutNullStreams, McpError.McpError> =>
  Effect.async((resume) => {
    const child = ChildProcess.spawn(options.command, options.args ?? [], {
      cwd: options.cwd,
      env: (options.inheritEnv ?? true) ? { ...process.env, ...revealAll(options.env) } : revealAll(options.env),
      stdio: ["pipe", "pipe", "pipe"],
      detached: true
    })
    const failed = (error: Error) =>
      resume(Effect.fail(McpError.make(
        options.name,
        new McpError.TransportReason({ message: `could not start '${options.command}': ${error.message}` }),
        error
      )))
    if (child.pid === undefined) child.once("error", failed)
    else resume(Effect.succeed(child))
  })

// Everything the process reports when it ends, for the Closed error after its stdout ended.
interface Ending {
  readonly exit: Deferred.Deferred<McpError.ProcessExit>
  readonly stderrDone: Deferred.Deferred<void>
  readonly stderr: ByteTail
}

const watchEnding = (
  child: ChildProcess.ChildProcessWithoutNullStreams,
  options: Options,
  fork: (effect: Effect.Effect<void>) => void
): Ending => {
  const server = options.name
  const exit = Deferred.unsafeMake<McpError.ProcessExit>(FiberId.none)
  const stderrDone = Deferred.unsafeMake<void>(FiberId.none)
  const stderr = new ByteTail(options.stderrTailBytes ?? 64 * 1024)
  child.once("exit", (exitCode, signal) => Deferred.unsafeDone(exit, Exit.succeed({ exitCode, signal })))
  child.stderr.on("data", (chunk: Buffer) => {
    stderr.push(chunk)
    fork(Effect.logDebug(chunk.toString("utf8").trimEnd()).pipe(Effect.annotateLogs({ server, stream: "stderr" })))
  })
  const done = () => Deferred.unsafeDone(stderrDone, Exit.void)
  child.stderr.once("end", done)
  child.stderr.once("error", done)
  // A server that closes its stdin early makes our writes fail with EPIPE: its stdout
  // ending says the rest.
  const failed = (what: string) => (error: Error) =>
    fork(Effect.logDebug(`${what} server '${server}' failed: ${error.message}`).pipe(Effect.annotateLogs({ server })))
  child.stdin.on("error", failed("writing to"))
  child.on("error", failed("signalling"))
  return { exit, stderrDone, stderr }
}

/**
 * Starts the server and returns a transport to it, owned by the current Scope.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options): Effect.Effect<TransportService, McpError.McpError, Scope.Scope> =>
  Effect.gen(function*() {
    const server = options.name
    const runtime = yield* Effect.runtime<never>()
    // Runs what the pipes' callbacks start (logs, the Closed error) as fibers of our runtime.
    const fork = (effect: Effect.Effect<void>) => void Runtime.runFork(runtime)(effect)
    const child = yield* spawn(options)
    const pid = child.pid!
    const ending = watchEnding(child, options, fork)
    const inbox = new Inbox(server)
    const writer = new Ndjson.LineWriter((text) => child.stdin.write(text))
    let closing = false

    // After stdout ends: how the process ended, with the tail of its stderr.
    const closedError = Effect.gen(function*() {
      const exit = yield* Deferred.await(ending.exit).pipe(Effect.timeout("1 second"), Effect.option)
      yield* Deferred.await(ending.stderrDone).pipe(Effect.timeout("250 millis"), Effect.ignore)
      return McpError.make(
        server,
        new McpError.ClosedReason({
          message: closing ? "the connection was closed" : "the server closed its stdout",
          ...(exit._tag === "Some" ? exit.value : {}),
          stderrTail: ending.stderr.text()
        })
      )
    })

    const stopReading = Ndjson.read(child.stdout, inbox, {
      maxMessageBytes: options.maxMessageBytes ?? JsonRpc.DEFAULT_MAX_MESSAGE_BYTES,
      onBad: (bad) => fork(JsonRpc.logSkipped(server, "wrote a line", bad)),
      onEnd: (error) =>
        error === undefined
          ? fork(Effect.flatMap(closedError, (closed) => Effect.sync(() => inbox.end(closed))))
          : inbox.end(error)
    })

    const sendNow = (message: JsonRpc.Message): McpError.McpError | undefined => {
      if (closing || !inbox.open) {
        return McpError.make(server, new McpError.ClosedReason({ message: "the connection is closed" }))
      }
      writer.push(message)
    }

    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        closing = true
        writer.flush()
        child.stdin.end()
        yield* shutdown(pid, options)
        stopReading()
        inbox.end(McpError.make(server, new McpError.ClosedReason({ message: "the connection was closed" })))
        child.stdout.destroy()
        child.stderr.destroy()
      })
    )

    return {
      server,
      kind: "stdio",
      send: sendWith(sendNow),
      sendNow,
      listen: inbox.listen,
      info: () => ({ pid })
    } satisfies TransportService
  })

// Stdin is closed already: wait, then SIGTERM the group, then SIGKILL it.
const shutdown = (pid: number, options: Options) =>
  Effect.gen(function*() {
    const server = options.name
    if (yield* waitGone(pid, options.closeGracePeriod ?? "2 seconds")) return
    yield* Effect.logDebug(`server '${server}' still running after stdin closed; sending SIGTERM`)
    signalGroup(pid, "SIGTERM")
    if (yield* waitGone(pid, options.termGracePeriod ?? "2 seconds")) return
    yield* Effect.logWarning(`server '${server}' ignored SIGTERM; sending SIGKILL`).pipe(
      Effect.annotateLogs({ server })
    )
    signalGroup(pid, "SIGKILL")
    yield* waitGone(pid, "1 second")
  })

/**
 * The other side of stdio, for serving: this process's own stdin and stdout (or any pair
 * of Node streams) as a Transport to the client that started it, owned by the current Scope.
 * Lines that are not JSON-RPC are answered with a JSON-RPC error (id null) and logged; the
 * connection ends when `input` ends.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeServer: (
  input: Readable,
  output: Writable,
  maxMessageBytes?: number
) => Effect.Effect<TransportService, never, Scope.Scope> = StdioServer.make

/**
 * A layer providing a stdio Transport.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<Transport, McpError.McpError> =>
  Layer.scoped(Transport, make(options))
