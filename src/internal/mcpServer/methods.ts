/**
 * The built-in methods both revision families have: the paginated lists, tool calls,
 * resource reads, prompts and completion, each routed to the request's `Handlers`; and the
 * capabilities both declare for them. What only one family has is its era's (`legacy.ts`:
 * initialize, subscriptions, logging, 2025-11-25 tasks; `modern.ts`: discover, listen, the
 * tasks extension). Params are checked by hand, only as far as a handler needs them.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import { isRecord } from "effect/Predicate"
import type * as JsonRpc from "../../JsonRpc.js"
import * as McpSchema from "../../McpSchema.js"
import type { Handlers, Options } from "../../McpServer.js"
import type * as Peer from "../../Peer.js"
import { traced } from "../traced.js"
import type { Context } from "./context.js"
import { internalError, invalidParams, methodNotFound } from "./errors.js"
import { page } from "./paging.js"
import type { Session } from "./session.js"

/** A built-in method: the request, in its session's context. */
export type Method = (
  request: JsonRpc.Request,
  ctx: Context<Session>
) => Effect.Effect<Record<string, unknown>, Peer.HandlerError>

/**
 * `handler` in the span of `method`, its defects logged and answered -32603. Each era makes
 * its methods' spans once per server: a span's definition costs (Effect.fn).
 */
export const spanned = (method: string, handler: Method): Method =>
  traced(`McpServer.${method}`)((request: JsonRpc.Request, ctx: Context<Session>) =>
    handler(request, ctx).pipe(
      Effect.catchAllDefect((defect) =>
        Effect.zipRight(
          Effect.logError(`MCP server: the handler of ${method} failed`, defect),
          Effect.fail(internalError)
        )
      )
    )
  )

/** -32601 for a method whose handlers the server has not. */
export const notServed = (request: JsonRpc.Request) => Effect.fail(methodNotFound(request.method))

/**
 * The capabilities a server declares at `revision`: `Options.capabilities` when given, else
 * what `handlers` serve as far as the revision knows, and `own`, what only its family has.
 */
export const capabilities = (
  options: Options,
  handlers: Handlers,
  revision: string,
  own: McpSchema.ServerCapabilities
): McpSchema.ServerCapabilities =>
  options.capabilities ?? {
    ...(handlers.tools === undefined ? {} : { tools: { listChanged: true } }),
    ...(handlers.resources === undefined ? {} : { resources: { subscribe: true, listChanged: true } }),
    ...(handlers.prompts === undefined ? {} : { prompts: { listChanged: true } }),
    ...(handlers.complete === undefined || revision < "2025-03-26" ? {} : { completions: {} }),
    logging: {},
    ...own,
    ...(handlers.skills === undefined ? {} : {
      extensions: { ...(own.extensions as object | undefined), [McpSchema.SKILLS_EXTENSION]: {} }
    })
  }

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

/** The one string param a method needs (a name, a URI), or -32602. */
export const stringParam = (request: JsonRpc.Request, key: string): string | Peer.HandlerError => {
  const value = request.params?.[key]
  return typeof value === "string" ? value : invalidParams(`${request.method} needs a string '${key}'`)
}

/** tools/call, the tool's own answer. */
export const callTool: Method = (request, ctx) => {
  const tools = ctx.session.handlers?.tools
  if (tools === undefined) return notServed(request)
  const name = stringParam(request, "name")
  if (typeof name !== "string") return Effect.fail(name)
  const args = request.params?.arguments ?? {}
  if (!isRecord(args)) return Effect.fail(invalidParams("tools/call: 'arguments' must be an object"))
  return tools.call(name, args, ctx)
}

const readResource: Method = (request, ctx) => {
  const resources = ctx.session.handlers?.resources
  if (resources === undefined) return notServed(request)
  const uri = stringParam(request, "uri")
  return typeof uri === "string" ? resources.read(uri, ctx) : Effect.fail(uri)
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

// skills/get: one entry by its SKILL.md's URI; an unknown one is -32602, as the extension says.
const getSkill: Method = (request, ctx) => {
  const skills = ctx.session.handlers?.skills
  if (skills === undefined) return notServed(request)
  const uri = stringParam(request, "uri")
  if (typeof uri !== "string") return Effect.fail(uri)
  const found = skills.get === undefined
    ? Effect.map(skills.list(ctx), (all) => all.find((skill) => skill.uri === uri))
    : skills.get(uri, ctx)
  return Effect.flatMap(found, (skill) =>
    skill === undefined
      ? Effect.fail(invalidParams(`Unknown skill: ${uri}`))
      : Effect.succeed({ skill }))
}

/** The built-in methods both families have, by name. */
export const shared: Readonly<Record<string, Method>> = {
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
  [McpSchema.Method.PromptsList]: list("prompts", "prompts", (handlers, ctx) => handlers.prompts?.list(ctx)),
  [McpSchema.Method.PromptsGet]: getPrompt,
  [McpSchema.Method.CompletionComplete]: complete,
  [McpSchema.Method.SkillsList]: list("skills", "skills", (handlers, ctx) => handlers.skills?.list(ctx)),
  [McpSchema.Method.SkillsGet]: getSkill
}
