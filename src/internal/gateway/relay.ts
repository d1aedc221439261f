/**
 * The gateway's clients as the fleet's host: the Sampling, Elicitation and Roots services a
 * fronted server's requests reach, passed to the gateway client whose call that server is
 * serving, and answered with that client's capabilities. Roots are the union of those its
 * clients declare, or the configured ones while none does.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Host from "../../Host.js"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpError from "../../McpError.js"
import * as McpSchema from "../../McpSchema.js"
import type * as McpServer from "../../McpServer.js"
import * as Peer from "../../Peer.js"
import { handlerError } from "./errors.js"
import type { InFlight } from "./inFlight.js"

/** One gateway client, as the relay sees it. */
export interface RelayClient {
  /** What it declared in initialize; undefined before. */
  capabilities: McpSchema.ClientCapabilities | undefined
  /** The roots it last listed. */
  roots: ReadonlyArray<McpSchema.Root>
  /** Its calls in flight, by server: a request to it goes through the call it belongs to. */
  readonly inFlight: InFlight
}

/** The gateway's clients, and the roots the fleet is told. */
export interface Relay {
  readonly clients: Set<RelayClient>
  readonly roots: SubscriptionRef.SubscriptionRef<ReadonlyArray<McpSchema.Root>>
  /** The roots told while no client declares any. */
  readonly fallbackRoots: ReadonlyArray<McpSchema.Root>
}

/** Whether a client answers form elicitations (declared `form`, or elicitation with no mode: before 2025-11-25). */
export const elicitsForms = (capabilities: McpSchema.ClientCapabilities | undefined): boolean => {
  const elicitation = capabilities?.elicitation
  return elicitation !== undefined && (elicitation.form !== undefined || elicitation.url === undefined)
}

/** A relay whose roots start as `fallbackRoots`. */
export const make = (fallbackRoots: ReadonlyArray<McpSchema.Root>): Effect.Effect<Relay> =>
  Effect.map(SubscriptionRef.make(fallbackRoots), (roots) => ({ clients: new Set(), roots, fallbackRoots }))

// The union of the clients' roots, by URI, or the fallback when none lists any.
const updateRoots = (relay: Relay): Effect.Effect<void> => {
  const union = new Map<string, McpSchema.Root>()
  for (const client of relay.clients) {
    for (const root of client.roots) if (!union.has(root.uri)) union.set(root.uri, root)
  }
  return SubscriptionRef.set(relay.roots, union.size === 0 ? relay.fallbackRoots : [...union.values()])
}

/** Adds a client for the life of the Scope. */
export const register = (relay: Relay, client: RelayClient): Effect.Effect<void, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => relay.clients.add(client)),
    () =>
      Effect.suspend(() => relay.clients.delete(client) && client.roots.length > 0 ? updateRoots(relay) : Effect.void)
  )

/** Replaces a client's roots (after its roots/list); the fleet is told when the union changed. */
export const setRoots = (
  relay: Relay,
  client: RelayClient,
  roots: ReadonlyArray<McpSchema.Root>
): Effect.Effect<void> =>
  Effect.suspend(() => {
    client.roots = roots
    return updateRoots(relay)
  })

// The client whose call `server` is serving, and that call. Only an unambiguous one: with
// calls of several clients in flight there, the request could be any one's, and a client is
// never shown what another's call asked.
const callerOf = (
  relay: Relay,
  server: string
): { readonly client: RelayClient; readonly related: McpServer.RequestContext } | Peer.HandlerError => {
  let found: { client: RelayClient; related: McpServer.RequestContext } | undefined
  for (const client of relay.clients) {
    const related = client.inFlight.latest(server)
    if (related === undefined) continue
    if (found !== undefined) {
      return Host.rejected(`calls of several gateway clients are in flight at '${server}': its request is refused`)
    }
    found = { client, related }
  }
  return found ?? Host.rejected(`no gateway client has a call in flight at '${server}': its request is refused`)
}

const pass = (
  relay: Relay,
  server: string,
  method: string,
  params: Record<string, unknown>,
  declared: (capabilities: McpSchema.ClientCapabilities) => boolean,
  what: string
): Effect.Effect<Record<string, unknown>, Peer.HandlerError> =>
  Effect.suspend(() => {
    const caller = callerOf(relay, server)
    if (!("client" in caller)) return Effect.fail(caller)
    const capabilities = caller.client.capabilities
    if (capabilities === undefined || !declared(capabilities)) {
      return Effect.fail(Host.rejected(`the gateway client did not declare ${what}`))
    }
    // Through the call: on its stream, or in a modern request's input round (its run ends
    // here and replays when the client retries with the answer).
    return Effect.mapError(
      caller.related.requestClient(method, params),
      (error) =>
        error.cause instanceof McpError.McpError
          ? handlerError(error.cause)
          : new Peer.HandlerError({ code: JsonRpc.ErrorCode.InternalError, message: error.message })
    )
  })

/** The host services that pass the fleet's requests to the gateway's clients. */
export const services = (relay: Relay): {
  readonly sampling: Host.SamplingService
  readonly elicitation: Host.ElicitationService
  readonly roots: Host.RootsService
} => ({
  sampling: {
    // Declared to the servers so they may ask; each request is checked against its client's.
    capabilities: { context: true, tools: true },
    createMessage: (request, context) =>
      pass(
        relay,
        context.server,
        McpSchema.Method.SamplingCreateMessage,
        request as Record<string, unknown>,
        (c) =>
          c.sampling !== undefined &&
          (request.tools === undefined && request.toolChoice === undefined || c.sampling.tools !== undefined) &&
          (request.includeContext === undefined || request.includeContext === "none" ||
            c.sampling.context !== undefined),
        request.tools === undefined ? "sampling" : "sampling with tools"
      ) as Effect.Effect<McpSchema.CreateMessageResult, Peer.HandlerError>
  },
  elicitation: {
    url: true,
    elicit: (request, context) =>
      pass(
        relay,
        context.server,
        McpSchema.Method.ElicitationCreate,
        request as Record<string, unknown>,
        (c) => request.mode === "url" ? c.elicitation?.url !== undefined : elicitsForms(c),
        request.mode === "url" ? "URL elicitation" : "elicitation"
      ) as Effect.Effect<McpSchema.ElicitResult, Peer.HandlerError>
  },
  roots: { roots: relay.roots }
})

/** Asks a client for its roots, when it declared them, and sets them in the relay. */
export const fetchRoots = (
  relay: Relay,
  client: RelayClient,
  request: Effect.Effect<Record<string, unknown>, McpError.McpError>
): Effect.Effect<void> =>
  Effect.suspend(() =>
    client.capabilities?.roots === undefined ? Effect.void : request.pipe(
      Effect.flatMap((result) =>
        setRoots(relay, client, Array.isArray(result.roots) ? result.roots as ReadonlyArray<McpSchema.Root> : [])
      ),
      Effect.catchAll((error) => Effect.logWarning(`a gateway client's roots/list failed: ${error.message}`))
    )
  )
