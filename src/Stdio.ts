/**
 * The stdio transport: the server is a child process speaking newline-delimited JSON-RPC on
 * its stdin and stdout. The child runs in its own process group, and closing the scope ends
 * the whole group within a bounded time, even when the server ignores SIGTERM or has
 * spawned children of its own. Its processes carry a token (`TOKEN_VARIABLE`), which on
 * Linux finds and ends those that left the group too. A guardian process ends them all if
 * this process dies without closing the scope; `beginShutdown` hurries every stop along when
 * this process is ending.
 *
 * It sits on `node:child_process` directly: the server's stdout is split, parsed and
 * delivered to the Peer inside the pipe's `data` callback, and the lines sent until the
 * pending microtasks run out go to its stdin in one write. Node only.
 *
 * A request still queued when the server's stdout ended, or in a write no larger than PIPE_BUF
 * that the pipe refused, fails with a Closed error marked `unsent`: it never reached the
 * server, so the fleet may send it on the next connection.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as Layer from "effect/Layer"
import * as Runtime from "effect/Runtime"
import type * as Scope from "effect/Scope"
import * as ChildProcess from "node:child_process"
import type { Readable, Writable } from "node:stream"
import { randomHex } from "./internal/crypto.js"
import { revealAll } from "./internal/reveal.js"
import { ByteTail } from "./internal/transport/byteTail.js"
import * as Environment from "./internal/transport/environment.js"
import { watch } from "./internal/transport/guardian.js"
import * as Ndjson from "./internal/transport/ndjson.js"
import { alive, groupLive, makeTree, signalTree, type Tree, waitGone } from "./internal/transport/processGroup.js"
import { TOKEN_VARIABLE as TOKEN } from "./internal/transport/processScan.js"
import { processShutdown } from "./internal/transport/shutdownBudget.js"
import * as StdioServer from "./internal/transport/stdioServer.js"
import * as JsonRpc from "./JsonRpc.js"
import type * as Launcher from "./Launcher.js"
import * as McpError from "./McpError.js"
import { Inbox, RequestFailed, sendWith, Transport } from "./Transport.js"

/**
 * How to start a stdio server (declared by the neutral Launcher, which this module implements on Node).
 *
 * @since 0.1.0
 */
export type Options = Launcher.StdioOptions

/**
 * The variable every process of a stdio server inherits, holding a random token of that
 * server: on Linux, the processes that left the server's process group are found by it
 * (in `/proc/<pid>/environ`) and ended with the server. Its value is not a secret.
 *
 * @since 0.1.0
 * @category constants
 */
export const TOKEN_VARIABLE: string = TOKEN

/**
 * How the stop of a stdio server went: what it took to end its process tree (its stdin
 * closed, SIGTERM, or SIGKILL), how long that took, and whether the signals were for
 * processes it started outside its group only (the server itself had exited). A transport's
 * `info().shutdown`, once its scope has closed.
 *
 * @since 0.1.0
 * @category models
 */
export interface ShutdownReport {
  readonly endedBy: "stdin" | "SIGTERM" | "SIGKILL"
  readonly ms: number
  readonly outsideGroup: boolean
}

// The largest write a pipe takes whole or not at all (PIPE_BUF; none on Windows): when such a
// write fails, the server read none of it. A UTF-16 code unit is at most 3 bytes of UTF-8.
const ATOMIC_WRITE_BYTES = process.platform === "linux" ? 4096 : process.platform === "win32" ? 0 : 512

// Spawns the child in a group of its own, its processes marked with `token`; fails with a
// Transport error naming the command when it cannot start (no such program, no such directory).
const spawn = (
  options: Options,
  token: string
): Effect.Effect<ChildProcess.ChildProcessWithoutNullStreams, McpError.McpError> =>
  Effect.async((resume) => {
    const env = { ...(options.inheritEnv === true ? process.env : Environment.safe()), ...revealAll(options.env) }
    const child = ChildProcess.spawn(options.command, options.args ?? [], {
      cwd: options.cwd,
      env: { ...env, [TOKEN]: token },
      stdio: ["pipe", "pipe", "pipe"],
      detached: true
    })
    const failed = (error: NodeJS.ErrnoException) =>
      resume(Effect.fail(McpError.transport(
        options.name,
        {
          message: `could not start '${options.command}': ${error.message}`,
          ...(error.code === undefined ? {} : { code: error.code })
        },
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
export const make = (options: Options): Effect.Effect<Transport, McpError.McpError, Scope.Scope> =>
  Effect.gen(function*() {
    const server = options.name
    const runtime = yield* Effect.runtime<never>()
    // Runs what the pipes' callbacks start (logs, the Closed error) as fibers of our runtime.
    const fork = (effect: Effect.Effect<void>) => void Runtime.runFork(runtime)(effect)
    const token = randomHex(12)
    const child = yield* spawn(options, token)
    const pid = child.pid!
    const tree = makeTree(pid, token)
    // Should this process die without closing the scope, the guardian ends the tree.
    const unwatch = watch(pid, token)
    const ending = watchEnding(child, options, fork)
    const inbox = new Inbox(server)
    // Requests that certainly never reached the server fail as unsent once its stdout ends:
    // those still queued then, and those in a write its stdin refused whole (an EPIPE comes
    // before the exit and the stderr that explain it, so they wait for them).
    let refused = ""
    const failUnsent = (text: string, error: McpError.McpError) => {
      if (text.length === 0) return
      const unsent = error.reason._tag === "Closed"
        ? McpError.closed(server, { ...error.reason, unsent: true })
        : error
      for (const id of Ndjson.requestIds(text)) inbox.deliver(new RequestFailed(id, unsent))
    }
    // The atomic writes not yet done, oldest first: a stream calls back its writes in order,
    // so one callback serves them all (no closure per write).
    const atomic: Array<string> = []
    const written = (error?: Error | null) => {
      const text = atomic.shift()!
      if (error) refused += text
    }
    const writer = new Ndjson.LineWriter((text) => {
      if (text.length * 3 > ATOMIC_WRITE_BYTES || child.stdin.writableLength > 0) return void child.stdin.write(text)
      atomic.push(text)
      child.stdin.write(text, written)
    })
    let closing = false
    // For diagnostics (`info()`): lines skipped as not JSON-RPC, and how the stop went.
    let skipped: { lines: number; first: string } | undefined
    let stopped: ShutdownReport | undefined
    // Until the server's stdout ends: after that nothing sent could be answered.
    let answering = true

    // After stdout ends: how the process ended, with the tail of its stderr.
    const closedError = Effect.gen(function*() {
      const exit = yield* Deferred.await(ending.exit).pipe(Effect.timeout("1 second"), Effect.option)
      yield* Deferred.await(ending.stderrDone).pipe(Effect.timeout("250 millis"), Effect.ignore)
      return McpError.closed(
        server,
        {
          message: closing ? "the connection was closed" : "the server closed its stdout",
          ...(exit._tag === "Some" ? exit.value : {}),
          stderrTail: ending.stderr.text()
        }
      )
    })

    const stopReading = Ndjson.read(child.stdout, inbox, {
      maxMessageBytes: options.maxMessageBytes ?? JsonRpc.DEFAULT_MAX_MESSAGE_BYTES,
      onBad: (bad) => {
        skipped ??= { lines: 0, first: `${bad[0]!.reason}: ${bad[0]!.excerpt}` }
        skipped.lines += bad.length
        fork(JsonRpc.logSkipped(server, "wrote a line", bad))
      },
      onEnd: (error) => {
        answering = false
        const unsent = refused + writer.discard()
        refused = ""
        const end = (closed: McpError.McpError) => {
          failUnsent(unsent, closed)
          inbox.end(closed)
        }
        if (error === undefined) fork(Effect.flatMap(closedError, (closed) => Effect.sync(() => end(closed))))
        else end(error)
      }
    })

    const sendNow = (message: JsonRpc.Message): McpError.McpError | undefined => {
      if (closing || !answering || !inbox.open) {
        return McpError.closed(server, { message: "the connection is closed" })
      }
      writer.push(message)
    }

    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        closing = true
        writer.flush()
        child.stdin.end()
        stopped = yield* shutdown(tree, options)
        // What even SIGKILL did not end in time stays with the guardian.
        if (stopped.endedBy !== "SIGKILL" || !alive(tree)) unwatch()
        stopReading()
        inbox.end(McpError.closed(server, { message: "the connection was closed" }))
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
      info: () => ({
        pid,
        ...(skipped && { skippedLines: skipped.lines, firstSkipped: skipped.first }),
        ...(stopped && { shutdown: stopped })
      })
    } satisfies Transport
  })

// SIGKILL cannot be refused: what outlives it is a process the kernel has not yet let run its
// exit (a busy machine) or one stuck in the kernel (a dead NFS mount). Wait long enough for the
// first, which is common under load, and hand the second to the guardian rather than hang.
const KILL_WAIT_MS = 5000

// Stdin is closed already: wait, then SIGTERM the tree, then SIGKILL it. Each wait ends
// early when the process is ending (`beginShutdown`).
const shutdown = (tree: Tree, options: Options): Effect.Effect<ShutdownReport> =>
  Effect.gen(function*() {
    const server = options.name
    const began = yield* Clock.currentTimeMillis
    let outsideGroup = false
    const report = (endedBy: ShutdownReport["endedBy"]) =>
      Effect.map(Clock.currentTimeMillis, (now): ShutdownReport => ({ endedBy, ms: now - began, outsideGroup }))
    const closeGrace = Duration.toMillis(options.closeGracePeriod ?? "2 seconds")
    if (yield* waitGone(tree, () => processShutdown.phaseEnd("close", began, closeGrace))) return yield* report("stdin")
    // Who is still running, for the logs: the server's group, or only what left it.
    outsideGroup = !groupLive(tree)
    const who = outsideGroup
      ? `processes that server '${server}' started outside its process group`
      : `server '${server}'`
    yield* Effect.logDebug(`${who} still running after stdin closed; sending SIGTERM`)
    signalTree(tree, "SIGTERM")
    const termStart = yield* Clock.currentTimeMillis
    const termGrace = Duration.toMillis(options.termGracePeriod ?? "2 seconds")
    if (yield* waitGone(tree, () => processShutdown.phaseEnd("term", termStart, termGrace))) {
      return yield* report("SIGTERM")
    }
    yield* Effect.logWarning(`${who} ignored SIGTERM; sending SIGKILL`).pipe(
      Effect.annotateLogs({ server })
    )
    const killStart = yield* Clock.currentTimeMillis
    if (!(yield* waitGone(tree, () => killStart + KILL_WAIT_MS, "SIGKILL"))) {
      yield* Effect.logWarning(`${who} still running ${KILL_WAIT_MS} ms after SIGKILL; left to the guardian`).pipe(
        Effect.annotateLogs({ server })
      )
    }
    return yield* report("SIGKILL")
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
) => Effect.Effect<Transport, never, Scope.Scope> = StdioServer.make

/**
 * A layer providing a stdio Transport.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<Transport, McpError.McpError> =>
  Layer.scoped(Transport, make(options))

/**
 * Declares that this process is ending: every stdio server must be gone within `budget`.
 * Each stop from now on, and each one under way, shortens its grace periods to fit: stdin
 * closed until 40% of the budget, SIGTERM until 80%, then SIGKILL. Servers stop in
 * parallel (each is its own fiber), so the budget holds for a whole fleet. Call it before
 * closing the scope that owns the servers; it cannot be undone (a later call can only
 * shorten the budget). `mcp-fleet serve --stdio` calls it with 1 second when its stdin ends.
 *
 * @since 0.1.0
 * @category shutdown
 */
export const beginShutdown = (budget: Duration.DurationInput): Effect.Effect<void> =>
  Effect.clockWith((clock) =>
    Effect.sync(() => processShutdown.begin(clock.unsafeCurrentTimeMillis(), Duration.toMillis(budget)))
  )

/**
 * While the layer lives, SIGINT and SIGTERM begin a shutdown with `budget` (default 800 ms,
 * so a host's SIGTERM finds the fleet gone within a second). It only shortens the stop:
 * ending the program on the signal is left to whoever does it (`NodeRuntime.runMain`
 * interrupts the main fiber, which closes the scopes). When nobody else listens for the
 * signal, it takes the signal's default action, so the process still ends (and the
 * guardian ends the servers). The `mcp-fleet` command runs with it.
 *
 * @since 0.1.0
 * @category shutdown
 */
export const layerShutdownOnSignal = (budget: Duration.DurationInput = "800 millis"): Layer.Layer<never> =>
  Layer.scopedDiscard(Effect.gen(function*() {
    const clock = yield* Effect.clock
    const budgetMs = Duration.toMillis(budget)
    const signals = ["SIGINT", "SIGTERM"] as const
    const onSignal = (signal: NodeJS.Signals) => {
      processShutdown.begin(clock.unsafeCurrentTimeMillis(), budgetMs)
      if (process.listenerCount(signal) === 1) {
        process.removeListener(signal, onSignal)
        process.kill(process.pid, signal)
      }
    }
    yield* Effect.acquireRelease(
      // First in line, so the budget is set before anyone starts stopping the fleet.
      Effect.sync(() => signals.forEach((signal) => process.prependListener(signal, onSignal))),
      () => Effect.sync(() => signals.forEach((signal) => process.removeListener(signal, onSignal)))
    )
  }))
