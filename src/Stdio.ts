/**
 * The stdio transport: the server is a child process speaking newline-delimited JSON-RPC on
 * its stdin and stdout. The child runs in its own process group, and closing the scope ends
 * the whole group within a bounded time, even when the server ignores SIGTERM or has
 * spawned children of its own.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/platform/Command"
import * as CommandExecutor from "@effect/platform/CommandExecutor"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { identity } from "effect/Function"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import { ByteTail } from "./internal/transport/byteTail.js"
import { revealAll } from "./internal/reveal.js"
import * as JsonRpc from "./JsonRpc.js"
import * as McpError from "./McpError.js"
import { Transport, type TransportService } from "./Transport.js"

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

type Signal = "SIGTERM" | "SIGKILL"

// A process group is alive while any process in it is; signal 0 only checks. Zombies
// count as members until someone reaps them, and an orphan's reaper (PID 1) may be slow
// or never come, so on Linux a group of nothing but zombies counts as gone.
const groupAlive = (pid: number): boolean => {
  try {
    process.kill(-pid, 0)
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
  return process.platform !== "linux" || hasLiveMember(pid)
}

const hasLiveMember = (pgid: number): boolean => {
  let entries: Array<string>
  try {
    entries = fs.readdirSync("/proc")
  } catch {
    return true
  }
  for (const entry of entries) {
    if (entry.charCodeAt(0) < 48 || entry.charCodeAt(0) > 57) continue
    let stat: string
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8")
    } catch {
      continue
    }
    // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    if (Number(fields[2]) === pgid && fields[0] !== "Z") return true
  }
  return false
}

const signalGroup = (pid: number, signal: Signal): void => {
  try {
    process.kill(-pid, signal)
  } catch {
    // Already gone.
  }
}

// Polls with Clock-based sleeps, starting fast because most servers exit at once.
const waitGone = (pid: number, within: Duration.DurationInput): Effect.Effect<boolean> =>
  Effect.gen(function*() {
    let left = Duration.toMillis(within)
    let step = 2
    while (groupAlive(pid)) {
      if (left <= 0) return false
      const wait = Math.min(step, left)
      yield* Effect.sleep(wait)
      left -= wait
      step = Math.min(step * 2, 50)
    }
    return true
  })

const signalOf = (error: { readonly message: string }): string | null =>
  /signal: (\w+)/.exec(error.message)?.[1] ?? null

/**
 * Starts the server and returns a transport to it, owned by the current Scope.
 *
 * @since 0.1.0
 */
export const make = (
  options: Options
): Effect.Effect<TransportService, McpError.McpError, Scope.Scope | CommandExecutor.CommandExecutor> =>
  Effect.gen(function*() {
    const server = options.name
    const executor = yield* CommandExecutor.CommandExecutor
    const outbox = yield* Queue.unbounded<string>()
    const command = Command.make(options.command, ...(options.args ?? [])).pipe(
      Command.env(revealAll(options.env), { extendEnv: options.inheritEnv ?? true }),
      // Lines queued while the last write was under way go out in one write.
      Command.stdin(Stream.fromQueue(outbox).pipe(
        Stream.mapChunks((lines) => Chunk.of(Buffer.from(Chunk.join(lines, ""), "utf8")))
      )),
      options.cwd === undefined ? identity : Command.workingDirectory(options.cwd)
    )
    const proc = yield* executor.start(command).pipe(
      Effect.mapError((error) =>
        McpError.make(
          server,
          new McpError.TransportReason({ message: `could not start '${options.command}': ${error.message}` }),
          error
        )
      )
    )
    const pid = proc.pid

    const stderr = new ByteTail(options.stderrTailBytes ?? 64 * 1024)
    const stderrDone = yield* proc.stderr.pipe(
      Stream.runForEach((chunk) => {
        stderr.push(chunk)
        return Effect.logDebug(Buffer.from(chunk).toString("utf8").trimEnd()).pipe(
          Effect.annotateLogs({ server, stream: "stderr" })
        )
      }),
      Effect.ignore,
      Effect.forkScoped
    )

    const exited = yield* Deferred.make<McpError.ProcessExit>()
    yield* proc.exitCode.pipe(
      Effect.match({
        onSuccess: (exitCode): McpError.ProcessExit => ({ exitCode, signal: null }),
        onFailure: (error): McpError.ProcessExit => ({ exitCode: null, signal: signalOf(error) })
      }),
      Effect.flatMap((exit) => Deferred.succeed(exited, exit)),
      Effect.forkScoped
    )

    // After stdout ends: how the process ended, with the tail of its stderr.
    const exitInfo = Effect.gen(function*() {
      const exit = yield* Deferred.await(exited).pipe(Effect.timeout("1 second"), Effect.option)
      yield* Fiber.await(stderrDone).pipe(Effect.timeout("250 millis"), Effect.ignore)
      return { exit, stderrTail: stderr.text() }
    })

    let closing = false
    const closedError = Effect.flatMap(exitInfo, ({ exit, stderrTail }) =>
      Effect.fail(McpError.make(
        server,
        new McpError.ClosedReason({
          message: closing ? "the connection was closed" : "the server closed its stdout",
          ...Option.getOrElse(exit, () => ({})),
          stderrTail
        })
      ))
    )

    const decoder = new JsonRpc.LineDecoder(options.maxMessageBytes ?? JsonRpc.DEFAULT_MAX_MESSAGE_BYTES)
    const parse = (lines: ReadonlyArray<string>): Effect.Effect<Array<JsonRpc.Message>> => {
      const messages: Array<JsonRpc.Message> = []
      if (lines.length === 0) return Effect.succeed(messages)
      const bad: Array<JsonRpc.BadLine> = []
      for (const line of lines) JsonRpc.parseLine(line, messages, bad)
      return bad.length === 0 ? Effect.succeed(messages) : Effect.as(JsonRpc.logSkipped(server, "wrote a line", bad), messages)
    }
    // Whole chunks of reads at a time: one step per batch, not per read or per message.
    const decode = (chunks: Chunk.Chunk<Uint8Array>): Effect.Effect<Chunk.Chunk<JsonRpc.Message>, McpError.McpError> => {
      const lines: Array<string> = []
      for (const chunk of chunks) {
        const oversize = decoder.push(chunk, lines)
        if (oversize) {
          return Effect.fail(McpError.make(
            server,
            new McpError.LimitReason({ what: "a message", size: oversize.oversize, limit: decoder.maxBytes })
          ))
        }
      }
      return Effect.map(parse(lines), Chunk.unsafeFromArray)
    }
    // A last message without its newline still counts.
    const rest = Effect.suspend(() => {
      const lines: Array<string> = []
      decoder.flush(lines)
      return parse(lines)
    })

    const incoming: Stream.Stream<JsonRpc.Message, McpError.McpError> = proc.stdout.pipe(
      Stream.mapError((error) =>
        McpError.make(server, new McpError.TransportReason({ message: `reading stdout failed: ${error.message}` }), error)
      ),
      Stream.mapChunksEffect(decode),
      Stream.concat(Stream.fromIterableEffect(rest)),
      Stream.concat(Stream.fromEffect(closedError))
    )

    const send = (message: JsonRpc.Message): Effect.Effect<void, McpError.McpError> =>
      Effect.suspend(() =>
        !closing && outbox.unsafeOffer(JsonRpc.encodeLine(message))
          ? Effect.void
          : Effect.fail(McpError.make(server, new McpError.ClosedReason({ message: "the connection is closed" })))
      )

    const closeGrace = options.closeGracePeriod ?? "2 seconds"
    const termGrace = options.termGracePeriod ?? "2 seconds"
    // Runs before the executor's own finalizer, which would wait forever on a child that
    // ignores SIGTERM: by then the whole group is gone.
    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        closing = true
        yield* Queue.shutdown(outbox)
        if (yield* waitGone(pid, closeGrace)) return
        yield* Effect.logDebug(`server '${server}' still running after stdin closed; sending SIGTERM`)
        signalGroup(pid, "SIGTERM")
        if (yield* waitGone(pid, termGrace)) return
        yield* Effect.logWarning(`server '${server}' ignored SIGTERM; sending SIGKILL`).pipe(
          Effect.annotateLogs({ server })
        )
        signalGroup(pid, "SIGKILL")
        yield* waitGone(pid, "1 second")
      })
    )

    return {
      server,
      kind: "stdio",
      send,
      incoming,
      info: () => ({ pid })
    } satisfies TransportService
  })

/**
 * A layer providing a stdio Transport.
 *
 * @since 0.1.0
 */
export const layer = (options: Options): Layer.Layer<Transport, McpError.McpError, CommandExecutor.CommandExecutor> =>
  Layer.scoped(Transport, make(options))
