/**
 * The data form of a server: tools, resources, resource templates and prompts given as
 * values, kept in maps that can change while the server runs (each change tells every
 * session), and served through the low-level `Handlers`. A tool's Effect Schema gives its
 * inputSchema and decodes its arguments; templates match URIs (RFC 6570 `{var}`, `{+var}`);
 * completion is routed to the prompt's or the template's completers.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as JSONSchema from "effect/JSONSchema"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type * as McpSchema from "../../McpSchema.js"
import type {
  Completer,
  Handlers,
  ItemServer,
  ItemsOptions,
  ListKind,
  PromptItem,
  RequestContext,
  ResourceItem,
  ResourceTemplateItem,
  SkillItem,
  ToolItem
} from "../../McpServer.js"
import type * as Peer from "../../Peer.js"
import { invalidParams, resourceNotFound, taskMismatch, unknownPrompt, unknownTool } from "./errors.js"
import * as Server from "./server.js"
import { runsAsTask } from "./tasks.js"

/** A tool's definition, less its inputSchema (given, or made from `parameters`). */
export type ToolDefinition = Omit<McpSchema.Tool, "inputSchema">

type Handler = ToolItem["handler"]

// A resource's own caching hint on what it reads (the legacy era tells it to no client).
const cached = (item: ResourceItem, ctx: RequestContext) => {
  const hint = item.cache
  if (hint === undefined) return item.read(ctx)
  return Effect.map(item.read(ctx), (result) => ({ ...result, ttlMs: hint.ttlMs, cacheScope: hint.cacheScope }))
}

// A tool that requires a task refuses a plain call, as the spec says (-32601).
const requiringTask = (name: string, handler: Handler): Handler => (args, ctx) =>
  ctx.asTask !== true
    ? Effect.fail(taskMismatch(`Tool ${name} must be called as a task`))
    : handler(args, ctx)

// Bad arguments: a tool execution error from 2025-11-25 on (the model can read it and try
// again), -32602 before.
const badArguments = (name: string, message: string, ctx: RequestContext) => {
  const text = `Invalid arguments for tool ${name}: ${message}`
  return ctx.client.protocolVersion >= "2025-11-25"
    ? Effect.succeed<McpSchema.CallToolResult>({ content: [{ type: "text", text }], isError: true })
    : Effect.fail(invalidParams(text))
}

const inputSchemaOf = (parameters: Schema.Schema.Any): McpSchema.JsonObject => {
  const { $schema: _, ...json } = JSONSchema.make(parameters) as unknown as Record<string, unknown>
  return json
}

/** A tool from its definition (see `McpServer.tool`). */
export const tool = (
  definition: ToolDefinition & {
    readonly parameters?: Schema.Schema<any, any> | undefined
    readonly inputSchema?: McpSchema.JsonObject | undefined
    readonly handler: (args: any, ctx: RequestContext) => Effect.Effect<McpSchema.CallToolResult, Peer.HandlerError>
  }
): ToolItem => {
  const { handler, inputSchema, parameters, ...rest } = definition
  const name = rest.name
  let run: Handler = handler
  if (parameters !== undefined) {
    const decode = Schema.decodeUnknownEither(parameters as Schema.Schema<unknown, unknown>, { errors: "all" })
    run = (args, ctx) =>
      Either.match(decode(args), {
        onLeft: (error) => badArguments(name, error.message, ctx),
        onRight: (decoded) => handler(decoded, ctx)
      })
  }
  return {
    tool: {
      ...rest,
      inputSchema: parameters === undefined ? inputSchema ?? { type: "object" } : inputSchemaOf(parameters)
    },
    handler: rest.execution?.taskSupport === "required" ? requiringTask(name, run) : run
  }
}

/** A resource item (see `McpServer.resource`). */
export const resource = (
  definition: McpSchema.Resource & { readonly read: ResourceItem["read"]; readonly cache?: ResourceItem["cache"] }
): ResourceItem => {
  const { cache, read, ...resource } = definition
  return cache === undefined ? { resource, read } : { resource, read, cache }
}

/** A resource template item (see `McpServer.resourceTemplate`). */
export const resourceTemplate = (
  definition: McpSchema.ResourceTemplate & {
    readonly read: ResourceTemplateItem["read"]
    readonly complete?: ResourceTemplateItem["complete"]
  }
): ResourceTemplateItem => {
  const { complete, read, ...template } = definition
  return { template, read, complete }
}

/** A prompt item (see `McpServer.prompt`). */
export const prompt = (
  definition: McpSchema.Prompt & { readonly get: PromptItem["get"]; readonly complete?: PromptItem["complete"] }
): PromptItem => {
  const { complete, get, ...prompt } = definition
  return { prompt, get, complete }
}

/** Matches URIs against an RFC 6570 template's `{var}` and `{+var}` expressions. */
export const templateMatcher = (uriTemplate: string) => {
  const names: Array<string> = []
  let source = "^"
  let last = 0
  for (const match of uriTemplate.matchAll(/\{(\+?)([A-Za-z0-9_.]+)\}/g)) {
    source += uriTemplate.slice(last, match.index).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
    source += match[1] === "+" ? "(.*)" : "([^/?#]*)"
    names.push(match[2]!)
    last = match.index + match[0].length
  }
  const pattern = new RegExp(source + uriTemplate.slice(last).replace(/[.*+?^${}()|[\]\\]/g, "\\$&") + "$")
  return (uri: string): Record<string, string> | undefined => {
    const found = pattern.exec(uri)
    if (found === null) return undefined
    const variables: Record<string, string> = {}
    names.forEach((name, i) => {
      variables[name] = decodeURIComponent(found[i + 1]!)
    })
    return variables
  }
}

interface Template {
  readonly item: ResourceTemplateItem
  readonly match: (uri: string) => Record<string, string> | undefined
}

// The items, and their lists as clients see them (made again on each change, not per request).
class Items {
  readonly tools = new Map<string, ToolItem>()
  readonly resources = new Map<string, ResourceItem>()
  readonly templates = new Map<string, Template>()
  readonly prompts = new Map<string, PromptItem>()
  readonly skills = new Map<string, SkillItem>()
  toolList: ReadonlyArray<McpSchema.Tool> = []
  resourceList: ReadonlyArray<McpSchema.Resource> = []
  templateList: ReadonlyArray<McpSchema.ResourceTemplate> = []
  promptList: ReadonlyArray<McpSchema.Prompt> = []
  skillList: ReadonlyArray<McpSchema.Skill> = []

  relist(): void {
    this.toolList = [...this.tools.values()].map((item) => item.tool)
    this.resourceList = [...this.resources.values()].map((item) => item.resource)
    this.templateList = [...this.templates.values()].map((entry) => entry.item.template)
    this.promptList = [...this.prompts.values()].map((item) => item.prompt)
    this.skillList = [...this.skills.values()].map((item) => item.skill)
  }

  // A skill and its files, or none of them.
  setSkill(item: SkillItem): void {
    this.deleteSkill(item.skill.uri)
    this.skills.set(item.skill.uri, item)
    for (const file of item.files) this.resources.set(file.resource.uri, file)
  }

  deleteSkill(uri: string): void {
    for (const file of this.skills.get(uri)?.files ?? []) this.resources.delete(file.resource.uri)
    this.skills.delete(uri)
  }
}

const template = (item: ResourceTemplateItem): Template => ({
  item,
  match: templateMatcher(item.template.uriTemplate)
})

const completion = (
  completer: Completer | undefined,
  params: McpSchema.CompleteRequestParams,
  ctx: RequestContext
): Effect.Effect<McpSchema.CompleteResult> =>
  completer === undefined
    ? Effect.succeed({ completion: { values: [] } })
    : Effect.map(completer(params.argument.value, ctx, params.context?.arguments ?? {}), (values) => ({
      completion: { values: values.slice(0, 100), total: values.length, hasMore: values.length > 100 }
    }))

// The items as the low-level handlers; skills only when there are some at the start.
const handlersOf = (items: Items, skills: boolean): Handlers => ({
  ...(skills ? { skills: { list: () => Effect.sync(() => items.skillList) } } : {}),
  tools: {
    list: () => Effect.sync(() => items.toolList),
    call: (name, args, ctx) => {
      const item = items.tools.get(name)
      return item === undefined ? Effect.fail(unknownTool(name)) : item.handler(args, ctx)
    }
  },
  resources: {
    list: () => Effect.sync(() => items.resourceList),
    templates: () => Effect.sync(() => items.templateList),
    read: (uri, ctx) => {
      const item = items.resources.get(uri)
      if (item !== undefined) return cached(item, ctx)
      for (const entry of items.templates.values()) {
        const variables = entry.match(uri)
        if (variables !== undefined) return entry.item.read(uri, variables, ctx)
      }
      return Effect.fail(resourceNotFound(uri))
    }
  },
  prompts: {
    list: () => Effect.sync(() => items.promptList),
    get: (name, args, ctx) => {
      const item = items.prompts.get(name)
      return item === undefined ? Effect.fail(unknownPrompt(name)) : item.get(args, ctx)
    }
  },
  complete: (params, ctx) => {
    const ref = params.ref
    if (ref.type === "ref/prompt") {
      const item = items.prompts.get(ref.name)
      if (item === undefined) return Effect.fail(unknownPrompt(ref.name))
      return completion(item.complete?.[params.argument.name], params, ctx)
    }
    const entry = items.templates.get(ref.uri)
    if (entry === undefined) return Effect.fail(resourceNotFound(ref.uri))
    return completion(entry.item.complete?.[params.argument.name], params, ctx)
  }
})

/** A server made of items (see `McpServer.fromItems`). */
export const fromItems = (options: ItemsOptions): Effect.Effect<ItemServer, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { prompts, resourceTemplates, resources, skills, tools, ...rest } = options
    const items = new Items()
    for (const item of tools ?? []) items.tools.set(item.tool.name, item)
    for (const item of resources ?? []) items.resources.set(item.resource.uri, item)
    for (const item of resourceTemplates ?? []) items.templates.set(item.template.uriTemplate, template(item))
    for (const item of prompts ?? []) items.prompts.set(item.prompt.name, item)
    for (const item of skills ?? []) items.setSkill(item)
    items.relist()
    const tasks = rest.tasks ?? ((tools ?? []).some((item) => runsAsTask(item.tool)) ? {} : undefined)
    const server = yield* Server.make({ ...rest, tasks, handlers: handlersOf(items, skills !== undefined) })
    const change = (kind: ListKind, edit: () => void) =>
      Effect.suspend(() => {
        edit()
        items.relist()
        return server.notifyListChanged(kind)
      })
    return {
      ...server,
      addTool: (item) => change("tools", () => items.tools.set(item.tool.name, item)),
      removeTool: (name) => change("tools", () => items.tools.delete(name)),
      addResource: (item) => change("resources", () => items.resources.set(item.resource.uri, item)),
      removeResource: (uri) => change("resources", () => items.resources.delete(uri)),
      addResourceTemplate: (item) =>
        change("resources", () => items.templates.set(item.template.uriTemplate, template(item))),
      removeResourceTemplate: (uriTemplate) => change("resources", () => items.templates.delete(uriTemplate)),
      addPrompt: (item) => change("prompts", () => items.prompts.set(item.prompt.name, item)),
      removePrompt: (name) => change("prompts", () => items.prompts.delete(name)),
      addSkill: (item) => change("resources", () => items.setSkill(item)),
      removeSkill: (uri) => change("resources", () => items.deleteSkill(uri))
    }
  })
