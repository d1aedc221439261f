/**
 * The client's side of a connection, made from host services: the capabilities to declare,
 * a handler per server request (params decoded, the service's answer checked before it is
 * sent), URL elicitations reported complete, and roots changes told to the server.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import type * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type * as Host from "../../Host.js"
import * as JsonRpc from "../../JsonRpc.js"
import type * as McpError from "../../McpError.js"
import * as McpSchema from "../../McpSchema.js"
import * as Peer from "../../Peer.js"
import { applyDefaults, checkForm } from "./form.js"

type Notify = (method: string, params?: Record<string, unknown>) => Effect.Effect<void, McpError.McpError>

const invalid = (code: number, message: string) => Effect.fail(new Peer.HandlerError({ code, message }))

const decodeWith = <A, I>(schema: Schema.Schema<A, I>) => {
  const decoder = McpSchema.decodeUnknown(schema)
  return (value: unknown, what: string): Effect.Effect<A, Peer.HandlerError> =>
    Either.match(decoder(value), {
      onRight: Effect.succeed,
      onLeft: (error) =>
        invalid(JsonRpc.ErrorCode.InternalError, `${what}: ${ParseResult.TreeFormatter.formatErrorSync(error)}`)
    })
}
const decodeSamplingParams = decodeWith(McpSchema.CreateMessageRequestParams)
const decodeSamplingResult = decodeWith(McpSchema.CreateMessageResult)
const decodeElicitParams = decodeWith(McpSchema.ElicitRequestParams)
const decodeElicitResult = decodeWith(McpSchema.ElicitResult)

// Bad params are the server's fault: -32602, not the -32603 of our own bad answers.
const params = <A>(effect: Effect.Effect<A, Peer.HandlerError>) =>
  Effect.mapError(
    effect,
    (error) => new Peer.HandlerError({ code: JsonRpc.ErrorCode.InvalidParams, message: error.message })
  )

// The input requests made by `inputRequest`: their id is the key they were asked under.
const inputs = new WeakSet<JsonRpc.Request>()

/** A server's input request under `key` as a request the handlers answer. */
export const inputRequest = (
  key: string,
  method: string,
  params: Record<string, unknown> | undefined
): JsonRpc.Request => {
  const request: JsonRpc.Request = { jsonrpc: "2.0", id: key, method, params: params ?? {} }
  inputs.add(request)
  return request
}

const contextOf = (server: string, notify: Notify, request: JsonRpc.Request): Host.RequestContext => {
  const token = (request.params?._meta as { progressToken?: unknown } | undefined)?.progressToken
  return {
    server,
    progress: typeof token === "string" || typeof token === "number"
      ? (progress) => Effect.ignore(notify(McpSchema.Method.Progress, { progressToken: token, ...progress }))
      : () => Effect.void,
    ...(inputs.has(request) ? { key: String(request.id) } : {})
  }
}

const usesTools = (content: McpSchema.CreateMessageResult["content"]) =>
  (Array.isArray(content) ? content : [content]).some((block) => block.type === "tool_use")

const samplingHandler = (service: Host.Sampling, server: string, notify: Notify): Peer.Handler => {
  const tools = service.capabilities?.tools === true
  return (request) =>
    Effect.gen(function*() {
      const asked = yield* params(decodeSamplingParams(request.params, "invalid sampling/createMessage params"))
      if ((asked.tools !== undefined || asked.toolChoice !== undefined) && !tools) {
        return yield* invalid(
          JsonRpc.ErrorCode.InvalidParams,
          "the request has tools, but this client did not declare sampling.tools"
        )
      }
      const answer = yield* service.createMessage(asked, contextOf(server, notify, request))
      const result = yield* decodeSamplingResult(answer, "the sampling answer is invalid")
      if (asked.tools === undefined && usesTools(result.content)) {
        return yield* invalid(JsonRpc.ErrorCode.InternalError, "the sampling answer uses a tool, but none was offered")
      }
      return result as Record<string, unknown>
    })
}

const elicitationHandler = (service: Host.Elicitation, server: string, notify: Notify): Peer.Handler => (request) =>
  Effect.gen(function*() {
    const asked = yield* params(decodeElicitParams(request.params, "invalid elicitation/create params"))
    if (asked.mode === "url" && service.url !== true) {
      return yield* invalid(JsonRpc.ErrorCode.InvalidParams, "this client does not support URL elicitation")
    }
    const answer = yield* service.elicit(asked, contextOf(server, notify, request))
    const result = yield* decodeElicitResult(answer, "the elicitation answer is invalid")
    // Content belongs to an accepted form only.
    if (result.action !== "accept" || asked.mode === "url") {
      const { content: _, ...rest } = result
      return rest as Record<string, unknown>
    }
    const content = applyDefaults(asked.requestedSchema, result.content ?? {})
    const problem = yield* checkForm(asked.requestedSchema, content)
    if (problem !== undefined) {
      return yield* invalid(
        JsonRpc.ErrorCode.InternalError,
        `the form does not match the requested schema: ${problem}`
      )
    }
    return { ...result, content }
  })

/** The client's side of a connection to `server`, from `services`; `notify` reaches the server. */
export const makeClientSide = (
  services: Host.Services,
  options: { readonly server: string; readonly notify: Notify }
): Host.ClientSide => {
  const { notify, server } = options
  const capabilities: { -readonly [K in keyof McpSchema.ClientCapabilities]: McpSchema.ClientCapabilities[K] } = {}
  const handlers: Record<string, Peer.Handler> = {}
  if (Option.isSome(services.sampling)) {
    const service = services.sampling.value
    capabilities.sampling = {
      ...(service.capabilities?.context === true ? { context: {} } : {}),
      ...(service.capabilities?.tools === true ? { tools: {} } : {})
    }
    handlers[McpSchema.Method.SamplingCreateMessage] = samplingHandler(service, server, notify)
  }
  if (Option.isSome(services.elicitation)) {
    const service = services.elicitation.value
    capabilities.elicitation = { form: {}, ...(service.url === true ? { url: {} } : {}) }
    handlers[McpSchema.Method.ElicitationCreate] = elicitationHandler(service, server, notify)
  }
  const roots = Option.map(services.roots, (service) => service.roots)
  // The list the server was last given: a change made before the watch began is told too.
  let served: ReadonlyArray<McpSchema.Root> | undefined
  if (Option.isSome(services.roots)) {
    const { list, roots: ref } = services.roots.value
    capabilities.roots = { listChanged: true }
    handlers[McpSchema.Method.RootsList] = list === undefined
      ? () =>
        Effect.map(ref.get, (current) => {
          served = current
          return { roots: current }
        })
      : (request) => Effect.map(list(contextOf(server, notify, request)), (current) => ({ roots: current }))
  }
  const completed = Option.flatMapNullable(services.elicitation, (service) => service.completed)
  return {
    capabilities,
    handlers,
    onNotification: (notification) => {
      const id = notification.params?.elicitationId
      return notification.method === McpSchema.Method.ElicitationComplete && typeof id === "string" &&
          Option.isSome(completed)
        ? completed.value(id, { server })
        : Effect.void
    },
    watchRoots: Option.isNone(roots) ? Effect.never : roots.value.changes.pipe(
      Stream.zipWithIndex,
      Stream.filter(([list, i]) => i > 0 || (served !== undefined && list !== served)),
      Stream.runForEach(() => Effect.ignore(notify(McpSchema.Method.RootsListChanged))),
      Effect.zipRight(Effect.never)
    )
  }
}
