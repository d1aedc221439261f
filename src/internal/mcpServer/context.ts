/**
 * The context of one request: one object per request, its functions on the prototype, so
 * the per-request path allocates nothing more. Requests to the client go through
 * `requestClient`: to the session's Peer, or (a modern request) to its MRTR round.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Schema from "effect/Schema"
import type * as JsonRpc from "../../JsonRpc.js"
import * as McpSchema from "../../McpSchema.js"
import type { Client, InputOptions, RequestClientOptions, RequestContext } from "../../McpServer.js"
import type * as Peer from "../../Peer.js"
import type { Principal } from "../../ResourceServer.js"
import { McpServerError } from "./error.js"
import type { Input } from "./mrtr.js"
import type { TaskLink } from "./tasks.js"

/** What a request's context needs of its session. */
export interface SessionLink {
  readonly client: Client | undefined
  /** Who the client is, by its transport; unknown where a request is followed elsewhere (a task). */
  readonly caller?: Principal | undefined
  /** Whether a log message at `level` goes to the client. */
  readonly admits: (level: McpSchema.LoggingLevel) => boolean
  readonly notify: (
    method: string,
    params: Record<string, unknown> | undefined,
    related: JsonRpc.RequestId | undefined
  ) => Effect.Effect<void>
  /** A request to the client, as part of request `related` when given. */
  readonly request: (
    related: JsonRpc.RequestId | undefined,
    method: string,
    params: Record<string, unknown> | undefined,
    options: Peer.RequestOptions | undefined
  ) => Effect.Effect<Record<string, unknown>, McpServerError>
  /**
   * Waits until the client can be asked, when it cannot now (a task whose session has
   * gone: until another follows it); what it declared is known then.
   */
  readonly reachable?: Effect.Effect<void> | undefined
}

// Before initialize (a ping, a raw method): a client that declared nothing.
const UNKNOWN_CLIENT: Client = { protocolVersion: McpSchema.LATEST_PROTOCOL_VERSION, capabilities: {} }

const notDeclared = (method: string, capability: string) =>
  Effect.fail(
    new McpServerError({
      reason: "NotDeclared",
      method,
      message: `${method}: the client did not declare the ${capability} capability`
    })
  )

const decodeAnswer = <A, I>(schema: Schema.Schema<A, I>, method: string) => {
  const decode = McpSchema.decodeUnknown(schema)
  return (answer: Record<string, unknown>): Effect.Effect<A, McpServerError> =>
    Either.match(decode(answer), {
      onLeft: (issue) =>
        Effect.fail(
          new McpServerError({ reason: "InvalidAnswer", method, message: `${method}: ${issue.message}`, cause: issue })
        ),
      onRight: Effect.succeed
    })
}
const sampled = decodeAnswer(McpSchema.CreateMessageResult, McpSchema.Method.SamplingCreateMessage)
const elicited = decodeAnswer(McpSchema.ElicitResult, McpSchema.Method.ElicitationCreate)
const rooted = decodeAnswer(McpSchema.ListRootsResult, McpSchema.Method.RootsList)

/**
 * The context of `request` in `session`; `task` is the task it runs as, if it does;
 * `input` is a modern request's way to its client (its MRTR round).
 */
export class Context<S extends SessionLink = SessionLink> implements RequestContext {
  constructor(
    readonly session: S,
    readonly request: JsonRpc.Request,
    readonly task?: TaskLink | undefined,
    readonly input?: Input | undefined
  ) {}

  // What goes out about a request running as a task carries what its task says it must.
  private related(params: Record<string, unknown>): Record<string, unknown> {
    const related = this.task?.related
    if (related === undefined) return params
    const meta = params._meta as object | undefined
    return { ...params, _meta: { ...meta, ...related } }
  }

  get client(): Client {
    return this.session.client ?? UNKNOWN_CLIENT
  }

  get caller(): Principal | undefined {
    return this.session.caller
  }

  get asTask(): boolean {
    return this.task !== undefined
  }

  progress(progress: number, total?: number, message?: string): Effect.Effect<void> {
    const token = (this.request.params?._meta as { progressToken?: unknown } | undefined)?.progressToken
    if (token === undefined) return Effect.void
    return this.session.notify(
      McpSchema.Method.Progress,
      this.related({
        progressToken: token,
        progress,
        ...(total === undefined ? {} : { total }),
        ...(message === undefined ? {} : { message })
      }),
      this.request.id
    )
  }

  log(level: McpSchema.LoggingLevel, data: unknown, logger?: string): Effect.Effect<void> {
    if (!this.session.admits(level)) return Effect.void
    return this.session.notify(
      McpSchema.Method.LoggingMessage,
      this.related(logger === undefined ? { level, data } : { level, logger, data }),
      this.request.id
    )
  }

  notify(method: string, params: Record<string, unknown>): Effect.Effect<void> {
    return this.session.notify(method, this.related(params), this.request.id)
  }

  status(message: string): Effect.Effect<void> {
    return this.task === undefined ? Effect.void : this.task.status(message)
  }

  keepInline<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> {
    return this.task?.keepInline === undefined ? effect : this.task.keepInline(effect)
  }

  becomeTask(): Effect.Effect<void> {
    return this.task?.goAsync ?? Effect.void
  }

  requestClient(
    method: string,
    params?: Record<string, unknown>,
    options?: RequestClientOptions
  ): Effect.Effect<Record<string, unknown>, McpServerError> {
    return this.input !== undefined
      ? this.input.ask(method, params, options)
      : this.session.request(this.request.id, method, this.related(params ?? {}), options)
  }

  // What the client declared is checked when the request runs, once the client can be
  // asked: the client of the session that follows a task whose own session has gone.
  private reached<A>(ask: () => Effect.Effect<A, McpServerError>): Effect.Effect<A, McpServerError> {
    return Effect.suspend(() => {
      const wait = this.session.reachable
      return wait === undefined ? ask() : Effect.zipRight(wait, Effect.suspend(ask))
    })
  }

  sample(
    params: McpSchema.CreateMessageRequestParams,
    options?: InputOptions
  ): Effect.Effect<McpSchema.CreateMessageResult, McpServerError> {
    return this.reached(() => {
      const method = McpSchema.Method.SamplingCreateMessage
      if (this.client.capabilities.sampling === undefined) return notDeclared(method, "sampling")
      return Effect.flatMap(this.requestClient(method, params as Record<string, unknown>, options), sampled)
    })
  }

  elicit(
    params: McpSchema.ElicitRequestParams,
    options?: InputOptions
  ): Effect.Effect<McpSchema.ElicitResult, McpServerError> {
    return this.reached(() => {
      const method = McpSchema.Method.ElicitationCreate
      const declared = this.client.capabilities.elicitation
      if (declared === undefined) return notDeclared(method, "elicitation")
      // `elicitation: {}` declares forms only; URLs need `url` (2025-11-25).
      if (params.mode === "url" && declared.url === undefined) return notDeclared(method, "elicitation.url")
      if (params.mode !== "url" && declared.url !== undefined && declared.form === undefined) {
        return notDeclared(method, "elicitation.form")
      }
      return Effect.flatMap(this.requestClient(method, params as Record<string, unknown>, options), elicited)
    })
  }

  listRoots(options?: InputOptions): Effect.Effect<McpSchema.ListRootsResult, McpServerError> {
    return this.reached(() => {
      const method = McpSchema.Method.RootsList
      if (this.client.capabilities.roots === undefined) return notDeclared(method, "roots")
      return Effect.flatMap(this.requestClient(method, undefined, options), rooted)
    })
  }
}
