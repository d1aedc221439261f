/**
 * The handlers of requests the gateway routes to the server that owns what they name:
 * tools/call (through the Policy, with the client's progress and its cancellation carried
 * over, and the fronted server's requests of the call asked of its client), resources/read, prompts/get and completion/complete. A name no server has yet is
 * looked up again once the fleet has settled, as lists are.
 *
 * A tools/call's `_meta` is passed on, but for the progress token and the modern revision's
 * keys, which the gateway's own replace.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as McpSchema from "../../McpSchema.js"
import * as McpServer from "../../McpServer.js"
import * as Peer from "../../Peer.js"
import type * as Policy from "../../Policy.js"
import * as ToolPins from "../../ToolPins.js"
import { askClient } from "./approval.js"
import { handlerError, toolFailure, unknownName } from "./errors.js"
import type { FleetHub } from "./fleetHub.js"
import type { InFlight } from "./inFlight.js"
import { callLog } from "./logging.js"
import * as Naming from "./naming.js"
import { askModernRoots, callInput, elicitsForms, type RelayClient, wantsModernRoots } from "./relay.js"
import { ownerOf } from "./resources.js"

/** What the routed handlers of one session work with. */
export interface RouteContext {
  readonly hub: FleetHub
  /** The catalog as this session's client may see it, under the names it sees. */
  readonly catalog: Effect.Effect<Naming.View>
  readonly inFlight: InFlight
  /** The session's client: what it declared, and requests to it. */
  readonly client: RelayClient
  /** Who the client is, by its access token (HTTP with OAuth): its calls' audit entries name it. */
  readonly caller: Policy.CallToolOptions["caller"]
  /**
   * Whether the client keeps a session and answers sampling or elicitation: its calls ask
   * for a server's stateful session (`ServerRegistry.CallToolOptions.stateful`), as the
   * server alone would have served this client.
   */
  readonly stateful: boolean
}

/**
 * The route context of a request: a session's own, the same for all its requests, or (a
 * 2026-07-28 request, whose handlers all requests share) made for the request at its call.
 */
export type Route = (ctx: McpServer.RequestContext) => RouteContext

/** Whether `u` is a plain JSON object. */
export const isRecord = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

// The server's progress goes back to the client under its own token, on the request's stream.
const progressOf = (ctx: McpServer.RequestContext): Pick<Peer.RequestOptions, "onProgress"> => {
  const meta = ctx.request.params?._meta
  const token = isRecord(meta) ? meta.progressToken : undefined
  if (typeof token !== "string" && typeof token !== "number") return {}
  return { onProgress: (progress) => ctx.progress(progress.progress, progress.total, progress.message) }
}

// Runs `f` on the catalog. A name it does not hold may be of a server still connecting:
// then `f` runs on the catalog as it is once the fleet has settled (within the settle window).
const inCatalog = <A, E>(
  context: RouteContext,
  has: (view: Naming.View) => boolean,
  f: (view: Naming.View) => Effect.Effect<A, E>
): Effect.Effect<A, E> =>
  Effect.flatMap(
    context.catalog,
    (current) => has(current) ? f(current) : Effect.flatMap(Effect.zipRight(context.hub.settled, context.catalog), f)
  )

// The server's requests that belong to the routed call (a stateful server's on the call's
// stream too) go to this client, whatever else is in flight there (when the gateway is the
// fleet's host); asked before the gateway's task while `beforeTask()`.
const inputOf = (
  context: RouteContext,
  ctx: McpServer.RequestContext,
  beforeTask: () => boolean = () => false
): Pick<Policy.CallToolOptions, "onInput"> =>
  context.hub.relay === undefined ? {} : { onInput: callInput(context.hub.relay, context.client, ctx, beforeTask) }

// Whom a read, a prompt or a completion is for, as the Policy tells a call's (a per-principal
// server serves it from the caller's own instance).
const principalOf = (context: RouteContext): { readonly principal?: string } =>
  context.caller?.subject === undefined ? {} : { principal: context.caller.subject }

// The client's _meta goes on, except its progress token (the gateway has its own) and the
// 2026-07-28 keys of its exchange with the gateway, which the gateway's own replace; its
// capabilities do go on, to narrow the gateway's (a server asks only what the client answers).
const NOT_FORWARDED: ReadonlySet<string> = new Set([
  "progressToken",
  McpSchema.MetaKey.ProtocolVersion,
  McpSchema.MetaKey.ClientInfo,
  McpSchema.MetaKey.LogLevel
])

const forwarded = (meta: unknown): Record<string, unknown> | undefined => {
  if (!isRecord(meta)) return undefined
  let kept: Record<string, unknown> | undefined
  for (const key in meta) {
    if (!NOT_FORWARDED.has(key)) (kept ??= {})[key] = meta[key]
  }
  return kept
}

/** tools/call, through the Policy. Interrupting the handler (the client cancelled) cancels the call. */
export const callTool = (route: Route): McpServer.ToolHandlers["call"] => (name, args, ctx) => {
  const context = route(ctx)
  const request = ctx.request
  const meta = forwarded(request.params?._meta)
  const find = (view: Naming.View) => Naming.lookupTool(view, name)
  return inCatalog(context, (view) => find(view) !== undefined, (current) => {
    const entry = find(current)
    if (entry === undefined) {
      // A quarantined tool is refused with how to approve it; any other is unknown.
      return Effect.flatMap(context.hub.registry.drifted, (drifts) => {
        const held = ToolPins.heldBack(drifts, name)
        return held === undefined
          ? Effect.fail(unknownName("tool", name, current.tools.keys()))
          : toolFailure(held)
      })
    }
    // Whether the routed call became a task; until then the gateway's call stays inline.
    let routedTask = false
    const call = context.hub.policy.callTool(entry.name, request.params?.arguments === undefined ? undefined : args, {
      ...progressOf(ctx),
      onLog: callLog(entry.server, ctx),
      ...inputOf(context, ctx, () => !routedTask),
      // A gateway call that may still become a task becomes one when the routed call does.
      onTask: () =>
        Effect.suspend(() => {
          routedTask = true
          return ctx.becomeTask()
        }),
      // An `ask` rule asks the calling client, when it can be asked.
      ...(elicitsForms(context.client.capabilities) ? { approve: askClient(ctx) } : {}),
      ...(meta === undefined ? {} : { meta }),
      ...(context.caller === undefined ? {} : { caller: context.caller }),
      ...(context.stateful ? { stateful: true } : {})
    })
    // Inline while the routed call is (SEP-2663's composition: a question the fronted
    // server asks before its task exists is asked of the client before the gateway's).
    return Effect.zipRight(
      rootsFirst(context, ctx, entry.server),
      ctx.keepInline(context.inFlight.track(
        entry.server,
        ctx,
        Effect.matchEffect(call, { onFailure: toolFailure, onSuccess: (result) => Effect.succeed(result) })
      ))
    )
  })
}

// A 2026-07-28 client's roots, asked in its first call of a stateful server, before the
// call is routed: such a server asks for roots outside any call (after initialize, when
// told they changed), where it cannot reach this client. A 2026-07-28 server asks in the
// call itself.
const rootsFirst = (context: RouteContext, ctx: McpServer.RequestContext, server: string): Effect.Effect<void> => {
  const relay = context.hub.relay
  if (relay === undefined || !wantsModernRoots(relay, ctx)) return Effect.void
  return Effect.flatMap(context.hub.registry.status, (statuses) => {
    const version = statuses.find((status) => status.name === server)?.protocolVersion
    return version === undefined || McpSchema.isModernVersion(version) ? Effect.void : askModernRoots(relay, ctx)
  })
}

/** resources/read, at the server that owns the URI. */
export const readResource = (route: Route): McpServer.ResourceHandlers["read"] => (uri, ctx) => {
  const context = route(ctx)
  return inCatalog(context, (view) => ownerOf(view.catalog, uri) !== undefined, (current) => {
    const server = ownerOf(current.catalog, uri)
    if (server === undefined) return Effect.fail(McpServer.resourceNotFound(uri))
    return context.inFlight.track(
      server,
      ctx,
      context.hub.registry.readResource(server, uri, { ...inputOf(context, ctx), ...principalOf(context) })
    )
      .pipe(
        Effect.mapError(handlerError)
      )
  })
}

/** prompts/get, by the name the client sees (or the qualified one). */
export const getPrompt = (route: Route): McpServer.PromptHandlers["get"] => (name, args, ctx) => {
  const context = route(ctx)
  const find = (view: Naming.View) => Naming.lookup(view.prompts, view.catalog.promptsByName, name)
  return inCatalog(context, (view) => find(view) !== undefined, (current) => {
    const entry = find(current)
    if (entry === undefined) return Effect.fail(unknownName("prompt", name, current.prompts.keys()))
    return context.inFlight.track(
      entry.server,
      ctx,
      context.hub.registry.getPrompt(entry.server, entry.prompt.name, args, {
        ...inputOf(context, ctx),
        ...principalOf(context)
      })
    ).pipe(Effect.mapError(handlerError))
  })
}

const noCompletion = { completion: { values: [], hasMore: false } }

type CompletionTarget = {
  readonly server: string
  readonly ref: McpSchema.PromptReference | McpSchema.ResourceTemplateReference
}

// The server and reference a completion's `ref` names, an error, or undefined when no
// server owns the resource (so there is nothing to suggest).
const completionTarget = (
  view: Naming.View,
  ref: Record<string, unknown>
): CompletionTarget | Peer.HandlerError | undefined => {
  const current = view.catalog
  if (ref.type === "ref/prompt" && typeof ref.name === "string") {
    const entry = Naming.lookup(view.prompts, current.promptsByName, ref.name)
    if (entry === undefined) return unknownName("prompt", ref.name, view.prompts.keys())
    return { server: entry.server, ref: { ...ref, type: "ref/prompt", name: entry.prompt.name } }
  }
  if (ref.type === "ref/resource" && typeof ref.uri === "string") {
    const uri = ref.uri
    const template = current.templates.find((entry) => entry.template.uriTemplate === uri)
    const server = template?.server ?? ownerOf(current, uri)
    return server === undefined ? undefined : { server, ref: { type: "ref/resource", uri } }
  }
  return McpServer.invalidParams(
    "completion/complete: 'ref' must be a ref/prompt with a name or a ref/resource with a uri"
  )
}

/** completion/complete, at the server of the prompt or resource template. */
export const complete = (route: Route): NonNullable<McpServer.Handlers["complete"]> => (params, ctx) => {
  const context = route(ctx)
  const ref = params.ref as unknown as Record<string, unknown>
  const argument = params.argument
  if (typeof argument.value !== "string") {
    return Effect.fail(
      McpServer.invalidParams("completion/complete needs a 'ref' and an 'argument' with a name and a value")
    )
  }
  const completionContext: unknown = params.context
  return Effect.flatMap(context.catalog, (current) => {
    const target = completionTarget(current, ref)
    if (target === undefined) return Effect.succeed(noCompletion)
    if (target instanceof Peer.HandlerError) return Effect.fail(target)
    return context.inFlight.track(
      target.server,
      ctx,
      context.hub.registry.complete(
        target.server,
        target.ref,
        { name: argument.name, value: argument.value },
        isRecord(completionContext) ? completionContext as { arguments?: Record<string, string> } : undefined,
        principalOf(context)
      )
    ).pipe(
      // A server that cannot complete has no suggestions, which is not the client's error.
      Effect.catchIf((error) => error.reason._tag === "Unsupported", () => Effect.succeed(noCompletion)),
      Effect.mapError(handlerError)
    )
  })
}
