/**
 * One server's tasks in flight (internal to the registry): the tool calls routed through
 * the fleet that the server runs as tasks (2025-11-25), each with its latest status, for
 * the server's status. A change of a task's status or message is published as a
 * `TaskStatusChanged` event; a task leaves the table once settled or when its call ends.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as McpSchema from "../../McpSchema.js"
import { RegistryEvent } from "../../RegistryEvent.js"
import type { TaskInFlight } from "../../ServerRegistry.js"
import type * as Secrets from "../secrets.js"

/**
 * The tasks of one server.
 */
export interface TaskTable {
  /** The tasks in flight, oldest first. */
  readonly inFlight: () => ReadonlyArray<TaskInFlight>
  /** Runs a call of `tool`, tracking the tasks it is told of through `onTask`. */
  readonly track: <A, E>(
    tool: string,
    call: (onTask: (task: McpSchema.Task) => Effect.Effect<void>) => Effect.Effect<A, E>
  ) => Effect.Effect<A, E>
}

const finished = (status: McpSchema.Task["status"]) =>
  status === "completed" || status === "failed" || status === "cancelled"

/**
 * Makes the table of `server`; its events go to `publish`, with the server's text masked.
 */
export const make = (
  server: string,
  masker: Secrets.Masker,
  publish: (event: RegistryEvent) => Effect.Effect<void>
): TaskTable => {
  const tasks = new Map<string, TaskInFlight>()
  // `last`: what was last published of each of one call's tasks, so a status seen twice
  // (polled, then notified) is published once, a settled one included.
  const seen = (tool: string, last: Map<string, string>, task: McpSchema.Task) =>
    Effect.suspend(() => {
      const statusMessage = task.statusMessage === undefined ? undefined : masker.text(task.statusMessage)
      const key = `${task.status}\n${statusMessage ?? ""}`
      if (last.get(task.taskId) === key) return Effect.void
      last.set(task.taskId, key)
      const inFlight: TaskInFlight = {
        id: task.taskId,
        tool,
        status: task.status,
        statusMessage,
        createdAt: task.createdAt
      }
      if (finished(task.status)) tasks.delete(task.taskId)
      else tasks.set(task.taskId, inFlight)
      return publish(
        RegistryEvent.TaskStatusChanged({ server, taskId: task.taskId, tool, status: task.status, statusMessage })
      )
    })
  return {
    inFlight: () => [...tasks.values()],
    track: (tool, call) =>
      Effect.suspend(() => {
        const last = new Map<string, string>()
        return Effect.ensuring(
          call((task) => seen(tool, last, task)),
          Effect.sync(() => {
            for (const id of last.keys()) tasks.delete(id)
          })
        )
      })
  }
}
