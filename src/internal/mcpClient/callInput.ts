/**
 * The input requests that belong to one call, and the call's `onInput` that answers them
 * (`McpClient.CallToolOptions.onInput`). A client knows which call a server's request is
 * for when the server says so: the input requests of an `InputRequiredResult` (2026-07-28)
 * or of a task of the tasks extension are part of the answer to that call, a request of
 * 2025-11-25 names the task it serves in its `_meta` (`io.modelcontextprotocol/related-task`),
 * and a legacy server over Streamable HTTP sends a request on the event stream of the POST
 * that carried the call (the transport tells the Peer's handler which request that was).
 * Those go to the call's `onInput`; any other request (stdio, HTTP+SSE or WebSocket outside
 * a task, or a Streamable HTTP server's standing GET stream) goes to the connection's
 * handlers, as does every request of a call without `onInput`. Only the kinds the
 * connection declared are asked of `onInput`: the server may ask for no other.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as JsonRpc from "../../JsonRpc.js"
import type { CallInput, CallToolOptions } from "../../McpClient.js"
import * as McpSchema from "../../McpSchema.js"
import type * as Peer from "../../Peer.js"

type OnInput = NonNullable<CallToolOptions["onInput"]>
type OnTask = NonNullable<CallToolOptions["onTask"]>
type Handlers = Readonly<Record<string, Peer.Handler>>

/** The requests a server may ask of a call: those of `inputRequests`. */
export const inputMethods: ReadonlySet<string> = new Set([
  McpSchema.Method.ElicitationCreate,
  McpSchema.Method.SamplingCreateMessage,
  McpSchema.Method.RootsList
])

// `handlers` with each input method the connection answers going to `answer` instead.
const overridden = (handlers: Handlers, answer: Peer.Handler): Handlers => {
  const own: Record<string, Peer.Handler> = { ...handlers }
  for (const method of inputMethods) if (handlers[method] !== undefined) own[method] = answer
  return own
}

/**
 * The handlers of one call's input requests (made by `Host.inputRequest`: their id is the
 * key they were asked under): its `onInput`'s, or the connection's when it has none.
 */
export const forCall = (handlers: Handlers, onInput: OnInput | undefined): Handlers =>
  onInput === undefined ?
    handlers :
    overridden(handlers, (request) =>
      onInput({ method: request.method, params: request.params ?? {}, key: String(request.id) }))

// The task a 2025-11-25 request serves, and its params without that link.
const relatedTask = (request: JsonRpc.Request): { readonly taskId: string; readonly input: CallInput } | undefined => {
  const meta = request.params?._meta as Record<string, unknown> | undefined
  const related = meta?.[McpSchema.MetaKey.RelatedTask] as { taskId?: unknown } | undefined
  if (typeof related?.taskId !== "string") return undefined
  const { _meta: _m, ...params } = request.params!
  const { [McpSchema.MetaKey.RelatedTask]: _r, ...rest } = meta!
  return {
    taskId: related.taskId,
    input: { method: request.method, params: Object.keys(rest).length === 0 ? params : { ...params, _meta: rest } }
  }
}

/**
 * The connection's calls that have an `onInput`, and how a server's request finds its call:
 * by the request of ours whose stream carried it (`Peer.Handler`'s `related`), or by the
 * task (2025-11-25) it names. The server may ask before the call has read the task it became
 * (its request can overtake the `CreateTaskResult` on the way up): a request naming a task
 * no call has yet waits while calls with an `onInput` are still to learn theirs.
 */
export class RelatedCalls {
  private readonly tasks = new Map<string, OnInput>()
  private readonly requests = new Map<JsonRpc.RequestId, OnInput>()
  // Calls with an onInput that do not know their task yet, and who waits for that to change.
  private unknown = 0
  private readonly waiting = new Set<() => void>()

  private changed(): void {
    for (const resume of this.waiting) resume()
    this.waiting.clear()
  }

  private lookup(taskId: string): Effect.Effect<OnInput | undefined> {
    return Effect.suspend(() => {
      const found = this.tasks.get(taskId)
      if (found !== undefined || this.unknown === 0) return Effect.succeed(found)
      const change = Effect.async<void>((resume) => {
        const wake = () => resume(Effect.void)
        this.waiting.add(wake)
        return Effect.sync(() => this.waiting.delete(wake))
      })
      return Effect.zipRight(change, this.lookup(taskId))
    })
  }

  /**
   * The connection's handlers, sending a request that belongs to a call with an `onInput`
   * to it: one naming the call's task, else one sent for the call's request.
   */
  wrap(handlers: Handlers): Handlers {
    const byRequest: Peer.Handler = (request, related) => {
      const onInput = related === undefined ? undefined : this.requests.get(related)
      return onInput === undefined
        ? handlers[request.method]!(request, related)
        : onInput({ method: request.method, params: request.params ?? {} })
    }
    return overridden(handlers, (request, related) => {
      const task = relatedTask(request)
      if (task === undefined) return byRequest(request, related)
      return Effect.flatMap(
        this.lookup(task.taskId),
        (onInput) => onInput === undefined ? byRequest(request, related) : onInput(task.input)
      )
    })
  }

  /**
   * Runs `f` (a call's requests, sent with the options it is given) so that the server's
   * requests sent for any of them go to `onInput` while it runs.
   */
  sending<A, E>(
    onInput: OnInput | undefined,
    options: Peer.RequestOptions | undefined,
    f: (options: Peer.RequestOptions | undefined) => Effect.Effect<A, E>
  ): Effect.Effect<A, E> {
    if (onInput === undefined) return f(options)
    return Effect.suspend(() => {
      const ids: Array<JsonRpc.RequestId> = []
      const told = options?.onId
      const onId = (id: JsonRpc.RequestId) => {
        ids.push(id)
        this.requests.set(id, onInput)
        told?.(id)
      }
      return Effect.ensuring(
        f({ ...options, onId }),
        Effect.sync(() => {
          for (const id of ids) this.requests.delete(id)
        })
      )
    })
  }

  /**
   * Runs `f` (a call that may become a task, told to the `onTask` it is given) so that the
   * requests of its task go to `onInput` while it runs.
   */
  follow<A, E>(
    onInput: OnInput | undefined,
    onTask: OnTask | undefined,
    f: (onTask: OnTask | undefined) => Effect.Effect<A, E>
  ): Effect.Effect<A, E> {
    if (onInput === undefined) return f(onTask)
    return Effect.suspend(() => {
      let taskId: string | undefined
      this.unknown++
      // The caller is told of its task before the task's requests reach it.
      const noted: OnTask = (task) =>
        Effect.zipRight(
          onTask === undefined ? Effect.void : onTask(task),
          Effect.sync(() => {
            if (taskId !== undefined) return
            this.tasks.set(taskId = task.taskId, onInput)
            this.unknown--
            this.changed()
          })
        )
      return Effect.ensuring(
        f(noted),
        Effect.sync(() => {
          if (taskId === undefined) this.unknown--
          else this.tasks.delete(taskId)
          this.changed()
        })
      )
    })
  }
}
