/**
 * A server's lists: fetching them all on connect, telling what changed between two sets
 * of lists as registry events, and keeping them fresh — list_changed marks a kind dirty
 * and a debounced re-list fetches the dirty kinds, keeping the last good list on failure.
 * The server's other notifications become events too. A 2026-07-28 server's lists come
 * through its connection's cache (`internal/mcpClient/cache.ts`): a re-list before their
 * `ttlMs` ran out costs no request unless a notification said they changed, which empties it.
 * Such a server sends list changes only on a `subscriptions/listen` stream, which its
 * connection holds open while the watch subscribes (`McpClient.subscribe`).
 *
 * @internal
 */
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Catalog from "../../Catalog.js"
import * as JsonRpc from "../../JsonRpc.js"
import type * as McpClient from "../../McpClient.js"
import type * as McpError from "../../McpError.js"
import * as McpSchema from "../../McpSchema.js"
import { RegistryEvent } from "../../RegistryEvent.js"

/**
 * The kinds of list a server announces changes of.
 */
export type ListKind = "tools" | "resources" | "prompts"

// The lists already found missing, per client: "logged once" for a server's life.
const missing = new WeakMap<McpClient.McpClient, Set<string>>()

// A list the server declared but answers with "method not found" (-32601): some servers
// declare `resources` and have no templates. An optional list that is missing is empty
// (said once per connection), not a failure that would restart the server forever.
const orEmpty = <A>(
  c: McpClient.McpClient,
  method: string,
  list: Effect.Effect<ReadonlyArray<A>, McpError.McpError>
): Effect.Effect<ReadonlyArray<A>, McpError.McpError> =>
  Effect.catchIf(
    list,
    (error) => error.reason._tag === "Protocol" && error.reason.code === JsonRpc.ErrorCode.MethodNotFound,
    () => {
      const seen = missing.get(c) ?? new Set<string>()
      missing.set(c, seen)
      if (seen.has(method)) return Effect.succeed([])
      seen.add(method)
      return Effect.as(
        Effect.logWarning(
          `server '${c.server}' declares ${method.split("/")[0]} but answers ${method} with -32601; taking it as empty`
        ),
        []
      )
    }
  )

// Whether the server declared the skills extension (SEP-2640).
const hasSkills = (c: McpClient.McpClient): boolean => {
  const extensions = c.capabilities.extensions
  return typeof extensions === "object" && extensions !== null && McpSchema.SKILLS_EXTENSION in extensions
}

const fetch = (
  c: McpClient.McpClient,
  kind: ListKind
): Effect.Effect<Partial<Catalog.ServerLists>, McpError.McpError> => {
  if (c.capabilities[kind] === undefined) {
    return Effect.succeed(kind === "resources" ? { resources: [], templates: [] } : { [kind]: [] })
  }
  switch (kind) {
    case "tools":
      return Effect.map(orEmpty(c, McpSchema.Method.ToolsList, c.listTools()), (tools) => ({ tools }))
    case "prompts":
      return Effect.map(orEmpty(c, McpSchema.Method.PromptsList, c.listPrompts()), (prompts) => ({ prompts }))
    case "resources":
      // A skill's files are resources: its entries are listed again with them.
      return Effect.map(
        Effect.all([
          orEmpty(c, McpSchema.Method.ResourcesList, c.listResources()),
          orEmpty(c, McpSchema.Method.ResourcesTemplatesList, c.listResourceTemplates()),
          hasSkills(c) ? orEmpty(c, McpSchema.Method.SkillsList, c.listSkills()) : Effect.succeed(undefined)
        ], { concurrency: 3 }),
        ([resources, templates, skills]) =>
          skills === undefined ? { resources, templates } : { resources, templates, skills }
      )
  }
}

/**
 * Every list the server offers; a kind it did not declare is empty.
 */
export const fetchAll = (c: McpClient.McpClient): Effect.Effect<Catalog.ServerLists, McpError.McpError> =>
  Effect.map(
    Effect.all([fetch(c, "tools"), fetch(c, "resources"), fetch(c, "prompts")], { concurrency: 3 }),
    (parts): Catalog.ServerLists => Object.assign({}, Catalog.emptyLists, ...parts)
  )

/**
 * The events that tell how `server`'s lists went from `previous` to `next`; none when
 * nothing differs.
 */
export const changes = (
  server: string,
  previous: Catalog.ServerLists,
  next: Catalog.ServerLists
): Array<RegistryEvent> => {
  const tools = Catalog.diff(previous.tools, next.tools, (tool) => tool.name)
  const resources = Catalog.diff(previous.resources, next.resources, (resource) => resource.uri)
  const templates = Catalog.diff(previous.templates, next.templates, (template) => template.uriTemplate)
  const prompts = Catalog.diff(previous.prompts, next.prompts, (prompt) => prompt.name)
  const events: Array<RegistryEvent> = []
  if (!Catalog.isEmptyDiff(tools)) events.push(RegistryEvent.ToolsChanged({ server, ...tools }))
  if (!Catalog.isEmptyDiff(resources)) events.push(RegistryEvent.ResourcesChanged({ server, ...resources }))
  if (!Catalog.isEmptyDiff(templates)) events.push(RegistryEvent.ResourceTemplatesChanged({ server, ...templates }))
  if (!Catalog.isEmptyDiff(prompts)) events.push(RegistryEvent.PromptsChanged({ server, ...prompts }))
  return events
}

/**
 * What the watch needs from its actor.
 */
export interface Watcher {
  readonly server: string
  readonly refreshDebounce: Duration.DurationInput
  readonly lists: () => Catalog.ServerLists
  readonly setLists: (lists: Catalog.ServerLists) => Effect.Effect<void>
  readonly publish: (event: RegistryEvent) => Effect.Effect<void>
}

// Re-lists the kinds that changed; a failure keeps the last good list.
const refresh = (watcher: Watcher, c: McpClient.McpClient, kinds: ReadonlySet<ListKind>) =>
  Effect.forEach(kinds, (kind) =>
    fetch(c, kind).pipe(
      Effect.flatMap((part) => watcher.setLists({ ...watcher.lists(), ...part })),
      Effect.catchAll((error) =>
        Effect.zipRight(
          Effect.logWarning(
            `server '${watcher.server}': re-listing ${kind} failed; keeping the last list: ${error.message}`
          ),
          watcher.publish(RegistryEvent.RefreshFailed({ server: watcher.server, list: kind, error }))
        )
      )
    ), { discard: true })

// A notification other than list_changed, as an event when it is one the fleet reports.
const forward = (
  watcher: Watcher,
  message: { readonly method: string; readonly params?: unknown },
  perRequest: boolean
) => {
  const decoded = McpSchema.decodeServerNotification(message.method, message.params)
  if (Either.isLeft(decoded)) {
    return Effect.logWarning(`server '${watcher.server}' sent a malformed ${message.method}; skipped`)
  }
  const notification = decoded.right
  if (!McpSchema.isKnownServerNotification(notification)) return Effect.void
  if (notification.method === McpSchema.Method.ResourcesUpdated) {
    return watcher.publish(RegistryEvent.ResourceUpdated({ server: watcher.server, uri: notification.params.uri }))
  }
  if (notification.method === McpSchema.Method.LoggingMessage) {
    const { data, level, logger } = notification.params
    return watcher.publish(RegistryEvent.LogMessage({ server: watcher.server, level, logger, data, perRequest }))
  }
  return Effect.void
}

const listOf: Readonly<Record<string, ListKind>> = {
  [McpSchema.Method.ToolsListChanged]: "tools",
  [McpSchema.Method.ResourcesListChanged]: "resources",
  [McpSchema.Method.PromptsListChanged]: "prompts"
}

/**
 * Routes `c`'s notifications, in fibers of the Scope: list changes to a debounced
 * re-list (unless `relist` is false: a connection that does not own the lists),
 * resources/updated and log messages to events.
 */
export const watch = (
  watcher: Watcher,
  c: McpClient.McpClient,
  relist = true
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function*() {
    const incoming = yield* c.subscribe
    const dirty = new Set<ListKind>()
    const changed = yield* Queue.sliding<void>(1)
    yield* Stream.fromQueue(changed).pipe(
      Stream.debounce(watcher.refreshDebounce),
      Stream.runForEach(() =>
        Effect.suspend(() => {
          const kinds = new Set(dirty)
          dirty.clear()
          return refresh(watcher, c, kinds)
        })
      ),
      Effect.forkScoped
    )
    const stateless = McpSchema.isModernVersion(c.protocolVersion)
    const route = (message: JsonRpc.Notification): Effect.Effect<void> => {
      const kind = Object.hasOwn(listOf, message.method) ? listOf[message.method] : undefined
      if (kind !== undefined) {
        if (!relist) return Effect.void
        return Effect.zipRight(Effect.sync(() => dirty.add(kind)), Queue.offer(changed, undefined))
      }
      return message.method === McpSchema.Method.ResourcesUpdated ||
          message.method === McpSchema.Method.LoggingMessage
        ? forward(watcher, message, stateless)
        : Effect.void
    }
    yield* Queue.take(incoming).pipe(Effect.flatMap(route), Effect.forever, Effect.forkScoped)
  })
