/**
 * The resource side of the management tools: listing and reading resources, and the
 * subscriptions to their updates, bounded in number and ended at the servers when the
 * Scope closes.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Catalog from "../../Catalog.js"
import * as McpError from "../../McpError.js"
import type * as McpManagementTools from "../../McpManagementTools.js"
import type * as McpSchema from "../../McpSchema.js"
import type * as ServerRegistry from "../../ServerRegistry.js"
import { jsonResult } from "./definitions.js"

/** What the resource tools work with. */
export interface Parts {
  readonly registry: ServerRegistry.ServerRegistry
  readonly subscriber: McpManagementTools.ResourceSubscriber
  readonly max: number
  readonly publish: (event: McpManagementTools.Event) => Effect.Effect<void>
}

/** The resource tools of one service. */
export interface Resources {
  readonly list: (
    server: string | undefined,
    reach: McpManagementTools.Reach
  ) => Effect.Effect<McpSchema.CallToolResult, McpError.McpError>
  readonly read: (
    server: string,
    uri: string,
    reach: McpManagementTools.Reach
  ) => Effect.Effect<McpSchema.CallToolResult, McpError.McpError>
  readonly subscribe: (
    server: string,
    uri: string,
    reach: McpManagementTools.Reach
  ) => Effect.Effect<McpSchema.CallToolResult, McpError.McpError>
  readonly unsubscribe: (params: {
    readonly subscriptionId?: string | undefined
    readonly server?: string | undefined
    readonly uri?: string | undefined
  }) => Effect.Effect<McpSchema.CallToolResult, McpError.McpError>
  /** The subscriptions in force, oldest first. */
  readonly held: () => ReadonlyArray<McpManagementTools.Subscription>
}

/**
 * `server`, if it is a server of the fleet the caller may reach; otherwise a NotFound
 * reason that suggests only servers it may reach.
 */
export const reachable = (
  registry: ServerRegistry.ServerRegistry,
  server: string,
  reach: McpManagementTools.Reach
): Effect.Effect<string, McpError.McpError> =>
  Effect.flatMap(registry.status, (statuses) => {
    const names = statuses.map((status) => status.name).filter(reach.server)
    return names.includes(server)
      ? Effect.succeed(server)
      : Effect.fail(McpError.notFound(
        undefined,
        { what: "server", name: server, suggestions: Catalog.suggest(server, names) }
      ))
  })

const invalid = (method: string, message: string) => McpError.validation(undefined, { method, message })

const keyOf = (server: string, uri: string) => JSON.stringify([server, uri])

/** Makes the resource tools; the subscriptions still held end when the Scope closes. */
export const make = (parts: Parts): Effect.Effect<Resources, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { registry, subscriber } = parts
    // By id, in the order they were made; `byKey` finds one by (server, URI).
    const subscriptions = new Map<string, McpManagementTools.Subscription>()
    const byKey = new Map<string, string>()
    const lock = yield* Effect.makeSemaphore(1)
    let next = 1

    yield* Effect.addFinalizer(() =>
      Effect.forEach(
        subscriptions.values(),
        (subscription) => Effect.ignore(subscriber.unsubscribe(subscription.server, subscription.uri)),
        { discard: true }
      )
    )

    // Updates of subscribed resources, republished with their subscription.
    const events = yield* registry.subscribe
    yield* Queue.take(events).pipe(
      Effect.flatMap((event) => {
        if (event._tag !== "ResourceUpdated") return Effect.void
        const id = byKey.get(keyOf(event.server, event.uri))
        const subscription = id === undefined ? undefined : subscriptions.get(id)
        return subscription === undefined
          ? Effect.void
          : parts.publish({ _tag: "ResourceUpdated", subscription })
      }),
      Effect.forever,
      Effect.forkScoped
    )

    const list: Resources["list"] = (server, reach) =>
      Effect.gen(function*() {
        if (server !== undefined) yield* reachable(registry, server, reach)
        const catalog = yield* SubscriptionRef.get(registry.catalog)
        const shown = (entry: { readonly server: string }) =>
          reach.server(entry.server) && (server === undefined || entry.server === server)
        return jsonResult({
          resources: catalog.resources.filter(shown).map(({ resource, server }) => ({
            server,
            uri: resource.uri,
            name: resource.name,
            ...(resource.title === undefined ? {} : { title: resource.title }),
            ...(resource.description === undefined ? {} : { description: resource.description }),
            ...(resource.mimeType === undefined ? {} : { mimeType: resource.mimeType })
          })),
          templates: catalog.templates.filter(shown).map(({ server, template }) => ({
            server,
            uriTemplate: template.uriTemplate,
            name: template.name,
            ...(template.description === undefined ? {} : { description: template.description }),
            ...(template.mimeType === undefined ? {} : { mimeType: template.mimeType })
          }))
        })
      })

    const read: Resources["read"] = (server, uri, reach) =>
      Effect.flatMap(reachable(registry, server, reach), () =>
        registry.readResource(server, uri, { principal: reach.principal })).pipe(
          Effect.map((result) => ({
            content: result.contents.map((resource) => ({ type: "resource" as const, resource }))
          }))
        )

    const subscribe: Resources["subscribe"] = (server, uri, reach) =>
      lock.withPermits(1)(Effect.gen(function*() {
        yield* reachable(registry, server, reach)
        const existing = byKey.get(keyOf(server, uri))
        if (existing !== undefined) {
          return jsonResult({ subscriptionId: existing, server, uri })
        }
        if (subscriptions.size >= parts.max) {
          return yield* Effect.fail(McpError.limit(
            undefined,
            { what: "the number of resource subscriptions", limit: parts.max }
          ))
        }
        yield* subscriber.subscribe(server, uri)
        const id = `sub-${next++}`
        subscriptions.set(id, { id, server, uri })
        byKey.set(keyOf(server, uri), id)
        return jsonResult({ subscriptionId: id, server, uri })
      }))

    const unsubscribe: Resources["unsubscribe"] = (params) =>
      lock.withPermits(1)(Effect.gen(function*() {
        const id = params.subscriptionId ??
          (params.server !== undefined && params.uri !== undefined
            ? byKey.get(keyOf(params.server, params.uri))
            : yield* Effect.fail(
              invalid("UnsubscribeMcpResource", "give a subscriptionId, or a server and a uri")
            ))
        const subscription = id === undefined ? undefined : subscriptions.get(id)
        if (subscription === undefined) {
          const held = [...subscriptions.keys()]
          return yield* Effect.fail(invalid(
            "UnsubscribeMcpResource",
            `no such subscription; those in force: ${held.length === 0 ? "none" : held.join(", ")}`
          ))
        }
        subscriptions.delete(subscription.id)
        byKey.delete(keyOf(subscription.server, subscription.uri))
        // A server that cannot be told (it is down) has forgotten the subscription anyway.
        yield* Effect.ignore(subscriber.unsubscribe(subscription.server, subscription.uri))
        return jsonResult({ unsubscribed: subscription.id, server: subscription.server, uri: subscription.uri })
      }))

    return { list, read, subscribe, unsubscribe, held: () => [...subscriptions.values()] }
  })
