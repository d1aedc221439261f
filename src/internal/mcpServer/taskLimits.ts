/**
 * The limits of a server's tasks, the same for 2025-11-25 tasks (`tasks.ts`) and the tasks
 * extension (`tasksExtension.ts`), as the spec's "Resource Management" asks: at most
 * `TaskOptions.maxWorkingPerRequestor` working tasks per requestor, and at most
 * `TaskOptions.maxKept` tasks kept in all. A new task past either is refused before its work
 * starts; a full table first forgets its oldest finished task (created first: the nearest
 * its ttl's end when ttls are alike), and refuses only when all it keeps still work.
 *
 * The refusal is a JSON-RPC error, -32603 with `data` naming the limit: the spec lists no
 * code of its own for it, -32602 would blame the request's params, and a tool result
 * (`isError`) is no answer to a 2025-11-25 task-augmented call (it wants a CreateTaskResult)
 * and would read, to a model, as the tool's own failure. The message says when to retry.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as JsonRpc from "../../JsonRpc.js"
import type { TaskOptions } from "../../McpServer.js"
import * as Peer from "../../Peer.js"

/** Working tasks per requestor unless `TaskOptions.maxWorkingPerRequestor` says otherwise. */
export const DEFAULT_MAX_WORKING_PER_REQUESTOR = 100

/** Tasks kept in all unless `TaskOptions.maxKept` says otherwise. */
export const DEFAULT_MAX_KEPT = 10_000

/** A kept task, as the limits see it: the timer that forgets it at its ttl's end, once it has one. */
export interface Kept {
  readonly expiry: Fiber.RuntimeFiber<unknown> | undefined
}

/** What the limits need to know of the tasks of one table. */
export interface Census<T> {
  /** Whether a task still runs (not completed, failed nor cancelled). */
  readonly working: (task: T) => boolean
  /** Whether a task is the new one's requestor's. */
  readonly mine: (task: T) => boolean
}

const refused = (limit: "maxWorkingPerRequestor" | "maxKept", max: number, message: string): Peer.HandlerError =>
  new Peer.HandlerError({ code: JsonRpc.ErrorCode.InternalError, message, data: { limit, max } })

/**
 * Makes room for one more task in `kept` (plus `starting`: tasks in no table yet, counted
 * too) or refuses it: -32603 naming the limit reached.
 */
export const admit = <T extends Kept>(
  options: TaskOptions,
  kept: Map<string, T>,
  starting: ReadonlySet<T>,
  census: Census<T>
): Effect.Effect<void, Peer.HandlerError> =>
  Effect.suspend(() => {
    const most = options.maxWorkingPerRequestor ?? DEFAULT_MAX_WORKING_PER_REQUESTOR
    let working = 0
    for (const task of starting) if (census.mine(task)) working++
    for (const task of kept.values()) if (census.working(task) && census.mine(task)) working++
    if (working >= most) {
      return Effect.fail(refused(
        "maxWorkingPerRequestor",
        most,
        `Too many working tasks: at most ${most} per requestor; retry once one of them ends`
      ))
    }
    const room = options.maxKept ?? DEFAULT_MAX_KEPT
    if (kept.size + starting.size < room) return Effect.void
    for (const [id, task] of kept) {
      if (census.working(task)) continue
      // Forgotten now: its ttl's timer ends with it.
      kept.delete(id)
      return stopTimer(task.expiry)
    }
    return Effect.fail(refused(
      "maxKept",
      room,
      `Too many tasks: the server keeps at most ${room}, all still working; retry once one ends`
    ))
  })

// The timer that forgets a task at its ttl's end, ended with it when the task is forgotten first.
const stopTimer = (timer: Fiber.RuntimeFiber<unknown> | undefined): Effect.Effect<void> =>
  timer === undefined ? Effect.void : Fiber.interruptFork(timer)
