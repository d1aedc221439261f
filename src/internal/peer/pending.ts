/**
 * The requests a Peer has in flight: each entry holds its answer in place of a Deferred
 * (only one fiber ever waits for it), the ids recently given up on, and one timer for every
 * deadline.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import type * as JsonRpc from "../../JsonRpc.js"
import * as McpError from "../../McpError.js"
import type { Progress } from "../../Peer.js"

/** How a request ends. */
export type Answer = Exit.Exit<Record<string, unknown>, McpError.McpError>

/** What resumes the request's caller: its answer, or what its `onAnswer` made of a result. */
export type Delivered = Effect.Effect<Record<string, unknown>, McpError.McpError>

/**
 * A request in flight. A class, not an object literal: V8 pretenures the objects of a literal
 * whose instances mostly survive a scavenge (at c=64 an entry lives through several), so each
 * one would be allocated in old space and die there, growing the heap; a constructor's
 * instances stay young.
 */
export class Entry {
  /** The answer, when it came before anyone waited for it. */
  answer: Delivered | undefined = undefined
  /** Resumes the fiber waiting for the answer. */
  resume: ((answer: Delivered) => void) | undefined = undefined
  lastActivity: number

  constructor(
    readonly id: JsonRpc.RequestId,
    readonly method: string,
    /** Its tool's or prompt's name, for its telemetry. */
    readonly target: string | undefined,
    readonly start: number,
    readonly idleMs: number,
    readonly totalMs: number,
    /** Whether progress restarts the idle timeout. */
    readonly reset: boolean,
    /** Whether giving up on it (interruption, timeout) sends notifications/cancelled. */
    readonly cancellable: boolean,
    readonly onProgress: ((progress: Progress) => Effect.Effect<void>) | undefined,
    /** What a result becomes before the caller resumes (`RequestOptions.onAnswer`). */
    readonly onAnswer: ((result: Record<string, unknown>) => Delivered) | undefined
  ) {
    this.lastActivity = start
  }
}

/** When an entry times out: `idle` since its start (or last progress), or its `total`. */
export const deadlineOf = (entry: Entry): number =>
  Math.min(entry.start + entry.totalMs, (entry.reset ? entry.lastActivity : entry.start) + entry.idleMs)

/** Waits for the entry's answer, or takes the one already there. */
export const resumeWith = (entry: Entry, resume: (answer: Delivered) => void): void => {
  if (entry.answer === undefined) entry.resume = resume
  else resume(entry.answer)
}

/** A closed-connection error that names the request it failed. */
export const withMethod = (error: McpError.McpError, method: string): McpError.McpError =>
  error.reason._tag === "Closed" && error.reason.method === undefined
    ? McpError.closed(error.server, { ...error.reason, method }, error.cause)
    : error

/**
 * The error of a request refused before it was sent, because its connection had ended with
 * `error`: a Closed error marked `unsent` that keeps how the connection ended, so the
 * request can go to a new connection.
 */
export const notSent = (error: McpError.McpError, method: string): McpError.McpError =>
  error.reason._tag === "Closed"
    ? McpError.closed(error.server, { ...error.reason, method, unsent: true }, error.cause)
    : McpError.closed(error.server, {
      message: `the connection had ended: ${McpError.make(undefined, error.reason).message}`,
      method,
      unsent: true
    }, error)

// Late answers to requests we gave up on are expected; remember a few ids to ignore quietly.
const RECENTLY_ABANDONED = 1024

/** The entries by id. Every path that answers an entry takes it out first, so it is answered once. */
export class Pending {
  /** `settled` is told each entry's answer as it is delivered (for its duration point). */
  constructor(private readonly settled: (entry: Entry, answer: Answer) => void) {}

  readonly entries = new Map<JsonRpc.RequestId, Entry>()
  private readonly abandoned = new Set<JsonRpc.RequestId>()
  // Requests with progress callbacks still running, which their answer waits for (held
  // here meanwhile): the callbacks run in fibers, the answer is delivered synchronously,
  // and a caller forwarding progress must have it out before the answer.
  private readonly busy = new Map<JsonRpc.RequestId, Busy>()

  /**
   * Answers the entry with this id, if it is still waiting, with `exit(entry, data)`; whether
   * it was. `data` saves a caller on the per-call path a closure per answer.
   */
  settle<D>(id: JsonRpc.RequestId, exit: (entry: Entry, data: D) => Answer, data: D): boolean {
    const entry = this.entries.get(id)
    if (entry === undefined) return false
    this.entries.delete(id)
    const busy = this.busy.size === 0 ? undefined : this.busy.get(id)
    if (busy === undefined) this.answer(entry, exit(entry, data))
    else busy.held = exit(entry, data)
    return true
  }

  /**
   * The entry's progress callback, counted from now (the notification's arrival) until it
   * ends: an answer that comes meanwhile is delivered only then.
   */
  callback(entry: Entry, effect: Effect.Effect<void>): Effect.Effect<void> {
    let busy = this.busy.get(entry.id)
    if (busy === undefined) {
      busy = { entry, running: 0, held: undefined }
      this.busy.set(entry.id, busy)
    }
    busy.running++
    const done = busy
    return Effect.ensuring(
      effect,
      Effect.sync(() => {
        if (--done.running === 0) this.release(done)
      })
    )
  }

  /** Fails every entry (the connection closed), and delivers the answers held. */
  failAll(error: McpError.McpError): void {
    for (const [id, entry] of this.entries) {
      this.entries.delete(id)
      this.answer(entry, Exit.fail(withMethod(error, entry.method)))
    }
    for (const busy of this.busy.values()) this.release(busy)
  }

  private release(busy: Busy): void {
    this.busy.delete(busy.entry.id)
    const held = busy.held
    busy.held = undefined
    if (held !== undefined) this.answer(busy.entry, held)
  }

  private answer(entry: Entry, exit: Answer): void {
    this.settled(entry, exit)
    const delivered = entry.onAnswer === undefined || exit._tag === "Failure"
      ? exit
      : mapped(entry.onAnswer, exit.value)
    if (entry.resume === undefined) entry.answer = delivered
    else entry.resume(delivered)
  }

  /** Remembers an id given up on, so that its late answer is ignored quietly. */
  abandon(id: JsonRpc.RequestId): void {
    this.abandoned.add(id)
    if (this.abandoned.size > RECENTLY_ABANDONED) this.abandoned.delete(this.abandoned.values().next().value!)
  }

  /** Whether an answer for this id is a late one for a request given up on (forgetting it). */
  wasAbandoned(id: JsonRpc.RequestId): boolean {
    return this.abandoned.delete(id)
  }
}

// A mapping that throws is its caller's defect, not the connection's (this runs in the read callback).
const mapped = (
  onAnswer: (result: Record<string, unknown>) => Delivered,
  result: Record<string, unknown>
): Delivered => {
  try {
    return onAnswer(result)
  } catch (defect) {
    return Effect.die(defect)
  }
}

// The progress callbacks of one request still running, and its answer if it came.
interface Busy {
  readonly entry: Entry
  running: number
  held: Answer | undefined
}

/** The timer of a Peer: `start` starts its fiber, `schedule` tells it of a new entry. */
export interface Timer {
  readonly start: () => void
  readonly schedule: (entry: Entry) => void
}

/**
 * One timer for all requests: one fiber (of `run`) sleeping on the Clock until the earliest
 * deadline. An entry with an earlier deadline than the one it sleeps for interrupts it and
 * starts another, which sleeps until that one: no fiber or timer per request, and none
 * forked per sleep to race a wake-up against it. An entry that times out fails with a
 * Timeout error, and `cancel` tells the other side.
 */
export const makeTimer = (options: {
  readonly server: string
  readonly pending: Pending
  readonly now: () => number
  readonly idleSleep: number
  readonly cancel: (id: JsonRpc.RequestId, reason: string) => void
  readonly run: (effect: Effect.Effect<never>) => Fiber.RuntimeFiber<unknown, unknown>
}): Timer => {
  const { pending, server } = options
  let wakeAt = Infinity
  let fiber: Fiber.RuntimeFiber<unknown, unknown> | undefined

  const expire = (id: JsonRpc.RequestId, now: number): void => {
    pending.settle(id, (entry) => {
      const kind = now >= entry.start + entry.totalMs ? "total" : "idle"
      const afterMs = kind === "total" ? entry.totalMs : entry.idleMs
      const error = McpError.timeout(server, { method: entry.method, afterMs, kind })
      if (entry.cancellable) options.cancel(id, `Timed out: ${error.message}`)
      return Exit.fail(error)
    }, undefined)
  }

  // Synchronous up to its sleep, so that an interruption never cuts it short.
  const step = Effect.suspend(() => {
    const now = options.now()
    let earliest = Infinity
    for (const [id, entry] of pending.entries) {
      const deadline = deadlineOf(entry)
      if (deadline > now) earliest = Math.min(earliest, deadline)
      else expire(id, now)
    }
    // With nothing pending it still sleeps for a while, not forever: a request made
    // meanwhile whose deadline is after that need not wake it (at one call in flight, every
    // call would).
    wakeAt = earliest === Infinity ? now + options.idleSleep : earliest
    return Effect.sleep(wakeAt - now)
  })
  const loop = Effect.forever(step)
  const start = () => {
    fiber = options.run(loop)
  }

  return {
    start,
    schedule: (entry) => {
      const deadline = deadlineOf(entry)
      if (deadline < wakeAt) {
        wakeAt = deadline
        fiber?.unsafeInterruptAsFork(FiberId.none)
        start()
      }
    }
  }
}
