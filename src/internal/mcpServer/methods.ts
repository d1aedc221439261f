/**
 * The built-in methods of a session: initialize, the paginated lists, calls, reads,
 * subscriptions, prompts, completion, logging and tasks, each routed to the session's
 * `Handlers`. Params are checked by hand, only as far as a handler needs them.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import { isRecord } from "effect/Predicate"
import type * as JsonRpc from "../../JsonRpc.js"
import * as McpSchema from "../../McpSchema.js"
import type { Handlers } from "../../McpServer.js"
import type * as Peer from "../../Peer.js"
import type { Context } from "./context.js"
import { invalidParams, methodNotFound, taskMismatch, unknownTool } from "./errors.js"
import { isLevel } from "./logging.js"
import { page } from "./paging.js"
import type { Session } from "./session.js"
import { runsAsTask } from "./tasks.js"
import { TASKS_EXTENSION } from "./tasksExtension.js"

/** A built-in method: the request, in its session's context. */
export type Method = (
  request: JsonRpc.Request,
  ctx: Context<Session>
) => Effect.Effect<Record<string, unknown>, Peer.HandlerError>

const notServed = (request: JsonRpc.Request) => Effect.fail(methodNotFound(request.method))

/** The capabilities a session declares: what its handlers serve, as far as its revision knows. */
export const capabilities = (session: Session, handlers: Handlers, revision: string): McpSchema.ServerCapabilities => {
  const declared = session.options.capabilities
  if (declared !== undefined) return declared
  return {
    ...(handlers.tools === undefined ? {} : { tools: { listChanged: true } }),
    ...(handlers.resources === undefined ? {} : { resources: { subscribe: true, listChanged: true } }),
    ...(handlers.prompts === undefined ? {} : { prompts: { listChanged: true } }),
    ...(handlers.complete === undefined || revision < "2025-03-26" ? {} : { completions: {} }),
    logging: {},
    // Tasks as 2025-11-25 has them; 2026-07-28 moved them to an extension.
    ...(session.options.tasks === undefined || revision < "2025-11-25" || revision >= McpSchema.MODERN_PROTOCOL_VERSION
      ? {}
      : { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } }),
    ...(session.options.tasks === undefined || revision < McpSchema.MODERN_PROTOCOL_VERSION
      ? {}
      : { extensions: { [TASKS_EXTENSION]: {} } })
  }
}

const initialize: Method = (_request, ctx) =>
  Effect.sync(() => {
    const { options } = ctx.session
    const revision = ctx.client.protocolVersion
    return {
      protocolVersion: revision,
      capabilities: capabilities(ctx.session, ctx.session.handlers ?? {}, revision),
      serverInfo: options.serverInfo,
      ...(options.instructions === undefined ? {} : { instructions: options.instructions })
    }
  })

// A list method: the items the handler gives, a page at a time.
const list = <A>(
  kind: string,
  key: string,
  items: (handlers: Handlers, ctx: Context<Session>) => Effect.Effect<ReadonlyArray<A>> | undefined
): Method =>
(request, ctx) => {
  const listed = items(ctx.session.handlers ?? {}, ctx)
  return listed === undefined
    ? notServed(request)
    : Effect.flatMap(listed, (all) => page(kind, key, all, request, ctx.session.pageSize))
}

// The one string param a method needs (a name, a URI), or -32602.
const stringParam = (request: JsonRpc.Request, key: string): string | Peer.HandlerError => {
  const value = request.params?.[key]
  return typeof value === "string" ? value : invalidParams(`${request.method} needs a string '${key}'`)
}

const callTool: Method = (request, ctx) => {
  const tools = ctx.session.handlers?.tools
  if (tools === undefined) return notServed(request)
  const name = stringParam(request, "name")
  if (typeof name !== "string") return Effect.fail(name)
  const args = request.params?.arguments ?? {}
  if (!isRecord(args)) return Effect.fail(invalidParams("tools/call: 'arguments' must be an object"))
  const tasks = ctx.session.tasks
  if (request.params?.task === undefined || tasks === undefined) return tools.call(name, args, ctx)
  // A task-augmented call: a task when the tool allows it, -32601 when it does not.
  return Effect.flatMap(tools.list(ctx), (all) => {
    const tool = all.find((candidate) => candidate.name === name)
    if (tool === undefined) return Effect.fail(unknownTool(name))
    if (!runsAsTask(tool)) {
      return Effect.fail(taskMismatch(`Tool ${name} does not support tasks`))
    }
    return tasks.start(ctx.session, request, (task) => tools.call(name, args, task))
  })
}

const readResource: Method = (request, ctx) => {
  const resources = ctx.session.handlers?.resources
  if (resources === undefined) return notServed(request)
  const uri = stringParam(request, "uri")
  return typeof uri === "string" ? resources.read(uri, ctx) : Effect.fail(uri)
}

// resources/subscribe and unsubscribe: the session keeps the URIs; the handler may refuse.
const subscription = (subscribe: boolean): Method => (request, ctx) => {
  const resources = ctx.session.handlers?.resources
  if (resources === undefined) return notServed(request)
  const uri = stringParam(request, "uri")
  if (typeof uri !== "string") return Effect.fail(uri)
  const told = subscribe ? resources.subscribe?.(uri, ctx) : resources.unsubscribe?.(uri, ctx)
  const keep = Effect.sync(() => {
    if (subscribe) ctx.session.subscriptions.add(uri)
    else ctx.session.subscriptions.delete(uri)
    return {}
  })
  return told === undefined ? keep : Effect.zipRight(told, keep)
}

const getPrompt: Method = (request, ctx) => {
  const prompts = ctx.session.handlers?.prompts
  if (prompts === undefined) return notServed(request)
  const name = stringParam(request, "name")
  if (typeof name !== "string") return Effect.fail(name)
  const args = request.params?.arguments ?? {}
  if (!isRecord(args)) return Effect.fail(invalidParams("prompts/get: 'arguments' must be an object"))
  return prompts.get(name, args as Record<string, string>, ctx)
}

const complete: Method = (request, ctx) => {
  const handler = ctx.session.handlers?.complete
  if (handler === undefined) return notServed(request)
  const params = request.params
  if (!isRecord(params?.ref) || !isRecord(params.argument) || typeof params.argument.name !== "string") {
    return Effect.fail(invalidParams("completion/complete needs a 'ref' and an 'argument' with a 'name'"))
  }
  return handler(params as unknown as McpSchema.CompleteRequestParams, ctx)
}

const setLevel: Method = (request, ctx) => {
  const level = request.params?.level
  if (!isLevel(level)) return Effect.fail(invalidParams(`logging/setLevel: unknown level ${JSON.stringify(level)}`))
  ctx.session.level = level
  return Effect.succeed({})
}

// tasks/*: the server's tasks, when it runs tool calls as tasks.
const task = (method: string): Method => (request, ctx) => {
  const handler = ctx.session.tasks?.handlers[method]
  return handler === undefined ? notServed(request) : handler(request, ctx.session)
}

/** The built-in methods, by name. */
export const builtIn: Readonly<Record<string, Method>> = {
  [McpSchema.Method.Initialize]: initialize,
  [McpSchema.Method.ToolsList]: list("tools", "tools", (handlers, ctx) => handlers.tools?.list(ctx)),
  [McpSchema.Method.ToolsCall]: callTool,
  [McpSchema.Method.ResourcesList]: list("resources", "resources", (handlers, ctx) => handlers.resources?.list(ctx)),
  [McpSchema.Method.ResourcesTemplatesList]: list(
    "templates",
    "resourceTemplates",
    (handlers, ctx) =>
      handlers.resources === undefined ? undefined : handlers.resources.templates?.(ctx) ?? Effect.succeed([])
  ),
  [McpSchema.Method.ResourcesRead]: readResource,
  [McpSchema.Method.ResourcesSubscribe]: subscription(true),
  [McpSchema.Method.ResourcesUnsubscribe]: subscription(false),
  [McpSchema.Method.PromptsList]: list("prompts", "prompts", (handlers, ctx) => handlers.prompts?.list(ctx)),
  [McpSchema.Method.PromptsGet]: getPrompt,
  [McpSchema.Method.CompletionComplete]: complete,
  [McpSchema.Method.LoggingSetLevel]: setLevel,
  [McpSchema.Method.TasksGet]: task(McpSchema.Method.TasksGet),
  [McpSchema.Method.TasksResult]: task(McpSchema.Method.TasksResult),
  [McpSchema.Method.TasksList]: task(McpSchema.Method.TasksList),
  [McpSchema.Method.TasksCancel]: task(McpSchema.Method.TasksCancel)
}
