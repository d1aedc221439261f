/**
 * The runner's side of the calls it serves for callers elsewhere: each call's events (what
 * the server tells and asks during it) as the stream its `Call` message answers with, and
 * its input requests waiting for the caller's `Answer`.
 *
 * A server asks in a call (`onInput`: the request names the call) or outside any (a legacy
 * server over stdio asks on its own): then the runner's host services (`hostServices`, the
 * local registry's) pass it to the one call in flight at that server, as the gateway's relay
 * does; with none or several in flight, to the runner's own services, else it is refused.
 * An input request ends with its call: when the caller is gone (its process died) nothing
 * answers, so the call's own limits end it and the server is told that the caller is gone.
 *
 * @since 0.3.0
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Host from "../../Host.js"
import * as JsonRpc from "../../JsonRpc.js"
import type * as McpClient from "../../McpClient.js"
import type * as McpError from "../../McpError.js"
import type * as McpSchema from "../../McpSchema.js"
import * as Peer from "../../Peer.js"
import type * as ServerRegistry from "../../ServerRegistry.js"
import type { CallEvent } from "./entity.js"

type Answered = Deferred.Deferred<Record<string, unknown>, Peer.HandlerError>

/** One call in flight: where its events go, and its input requests awaiting an answer. */
interface Channel {
  readonly id: string
  readonly server: string
  readonly emit: (event: CallEvent) => void
  readonly pending: Map<string, Answered>
  next: number
  closed: boolean
}

/** The calls in flight on this runner, by call id and by server. */
export interface Calls {
  readonly byId: Map<string, Channel>
  readonly byServer: Map<string, Set<Channel>>
}

/** No call in flight yet. */
export const make = (): Calls => ({ byId: new Map(), byServer: new Map() })

/** What the caller takes, as `Call` and `Follow` carry it. */
export interface Tells {
  readonly progress: boolean
  readonly log: boolean
}

/** The callbacks a local call or follow is given: they feed its channel. */
export type Callbacks = Pick<
  ServerRegistry.CallToolOptions,
  "onProgress" | "onLog" | "onTask" | "onInput"
>

const gone = new Peer.HandlerError({
  code: JsonRpc.ErrorCode.InternalError,
  message: "the call ended before its caller answered (the caller may be gone)"
})

// Sends one input request to the caller and waits for its answer (or the call's end).
const ask = (
  channel: Channel,
  input: { readonly method: string; readonly params: Record<string, unknown>; readonly key?: string | undefined },
  tied: boolean
): Effect.Effect<Record<string, unknown>, Peer.HandlerError> =>
  Effect.flatMap(Deferred.make<Record<string, unknown>, Peer.HandlerError>(), (answered) => {
    if (channel.closed) return Effect.fail(gone)
    const requestId = String(channel.next++)
    channel.pending.set(requestId, answered)
    channel.emit({ _tag: "Input", requestId, method: input.method, params: input.params, key: input.key, tied })
    return Deferred.await(answered).pipe(Effect.ensuring(Effect.sync(() => channel.pending.delete(requestId))))
  })

const callbacksOf = (channel: Channel, tells: Tells): Callbacks => ({
  ...(tells.progress
    ? {
      onProgress: (progress: Peer.Progress) =>
        Effect.sync(() =>
          channel.emit({
            _tag: "Progress",
            progress: progress.progress,
            total: progress.total,
            message: progress.message
          })
        )
    }
    : {}),
  ...(tells.log
    ? {
      onLog: (message: McpSchema.LoggingMessageNotificationParams) =>
        Effect.sync(() => channel.emit({ _tag: "Log", message }))
    }
    : {}),
  onTask: (task) => Effect.sync(() => channel.emit({ _tag: "Task", task })),
  onInput: (input: McpClient.CallInput) => ask(channel, input, true)
})

const open = (calls: Calls, server: string, id: string, emit: Channel["emit"]): Channel => {
  const channel: Channel = { id, server, emit, pending: new Map(), next: 0, closed: false }
  calls.byId.set(id, channel)
  const set = calls.byServer.get(server) ?? new Set()
  set.add(channel)
  calls.byServer.set(server, set)
  return channel
}

// The call ended: what it still asks fails (its server is told the caller is gone).
const close = (calls: Calls, channel: Channel) =>
  Effect.suspend(() => {
    channel.closed = true
    calls.byId.delete(channel.id)
    const set = calls.byServer.get(channel.server)
    set?.delete(channel)
    if (set?.size === 0) calls.byServer.delete(channel.server)
    const waiting = [...channel.pending.values()]
    channel.pending.clear()
    return Effect.forEach(waiting, (answered) => Deferred.fail(answered, gone), { discard: true })
  })

/**
 * Runs a call of `server` (`run`, given the callbacks that feed its events) and gives its
 * events, the last one its result. Ending the stream (the caller interrupted) interrupts it.
 */
export const stream = <R>(
  calls: Calls,
  server: string,
  id: string,
  tells: Tells,
  run: (callbacks: Callbacks) => Effect.Effect<unknown, McpError.McpError, R>
): Stream.Stream<CallEvent, McpError.McpError, R> =>
  Stream.unwrapScoped(Effect.gen(function*() {
    const mailbox = yield* Mailbox.make<CallEvent, McpError.McpError>()
    const channel = open(calls, server, id, (event) => mailbox.unsafeOffer(event))
    yield* Effect.addFinalizer(() => close(calls, channel))
    yield* run(callbacksOf(channel, tells)).pipe(
      Effect.matchCauseEffect({
        onFailure: (cause) => mailbox.failCause(cause),
        onSuccess: (result) => Effect.zipRight(mailbox.offer({ _tag: "Result", result }), mailbox.end)
      }),
      Effect.forkScoped
    )
    return Mailbox.toStream(mailbox)
  }))

/** Completes an input request of call `callId` with the caller's answer; nothing when the call ended. */
export const answer = (
  calls: Calls,
  callId: string,
  requestId: string,
  outcome: {
    readonly result?: Record<string, unknown> | undefined
    readonly error?: { readonly code: number; readonly message: string; readonly data?: unknown } | undefined
  }
): Effect.Effect<void> =>
  Effect.suspend(() => {
    const answered = calls.byId.get(callId)?.pending.get(requestId)
    if (answered === undefined) return Effect.void
    return outcome.error === undefined
      ? Deferred.succeed(answered, outcome.result ?? {})
      : Deferred.fail(answered, new Peer.HandlerError(outcome.error))
  })

// The one call in flight at `server`, if only one is.
const onlyCall = (calls: Calls, server: string): Channel | undefined => {
  const set = calls.byServer.get(server)
  return set?.size === 1 ? set.values().next().value : undefined
}

// A request that names no call: to the one call in flight, else the runner's own service.
const untied = <A>(
  calls: Calls,
  context: Host.RequestContext,
  method: string,
  params: object,
  own: ((context: Host.RequestContext) => Effect.Effect<A, Peer.HandlerError>) | undefined
): Effect.Effect<A, Peer.HandlerError> =>
  Effect.suspend(() => {
    const channel = onlyCall(calls, context.server)
    if (channel !== undefined) {
      return ask(
        channel,
        { method, params: params as Record<string, unknown>, key: context.key },
        false
      ) as Effect.Effect<
        A,
        Peer.HandlerError
      >
    }
    if (own !== undefined) return own(context)
    const count = calls.byServer.get(context.server)?.size ?? 0
    return Effect.fail(Host.rejected(`no caller to ask: ${count} calls of this server are in flight on its runner`))
  })

/**
 * The runner's host services for its local registry: every capability declared (a caller may
 * answer it: its own services check each request), each request passed to its call's caller
 * as above; the runner's own services (`own`) answer what no call takes.
 */
export const hostServices = (calls: Calls, own: Host.Services): Effect.Effect<{
  readonly sampling: Host.Sampling
  readonly elicitation: Host.Elicitation
  readonly roots: Host.Roots
}> =>
  Effect.map(
    Option.match(own.roots, {
      onNone: () => SubscriptionRef.make<ReadonlyArray<McpSchema.Root>>([]),
      onSome: (roots) => Effect.succeed(roots.roots)
    }),
    (ref) => {
      const sampling = Option.getOrUndefined(own.sampling)
      const elicitation = Option.getOrUndefined(own.elicitation)
      const roots = Option.getOrUndefined(own.roots)
      return {
        sampling: {
          capabilities: { context: true, tools: true },
          createMessage: (request, context) =>
            untied(
              calls,
              context,
              "sampling/createMessage",
              request,
              sampling && ((context) => sampling.createMessage(request, context))
            )
        },
        elicitation: {
          url: true,
          elicit: (request, context) =>
            untied(
              calls,
              context,
              "elicitation/create",
              request,
              elicitation && ((context) => elicitation.elicit(request, context))
            ),
          ...(elicitation?.completed === undefined ? {} : { completed: elicitation.completed })
        },
        roots: {
          roots: ref,
          list: (context) =>
            Effect.suspend(() =>
              onlyCall(calls, context.server) === undefined
                ? roots?.list?.(context) ?? ref.get
                : Effect.map(
                  untied(calls, context, "roots/list", {}, undefined),
                  (result) => (result as { roots?: ReadonlyArray<McpSchema.Root> }).roots ?? []
                )
            )
        }
      }
    }
  )
