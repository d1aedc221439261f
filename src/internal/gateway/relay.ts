/**
 * The gateway's clients as the fleet's host: a fronted server's requests go to the gateway
 * client whose call they belong to, and are answered with that client's capabilities. A
 * request tied to its call (an input request of a 2026-07-28 result or task, a 2025-11-25
 * task's request, a stateful Streamable HTTP server's request on the stream of the call's
 * POST) reaches that call's `onInput` (`callInput`, given by the routes for every fronted
 * server); one that is not (a stateful server's over stdio, HTTP+SSE or WebSocket outside a
 * task, or on a Streamable HTTP server's GET stream) reaches the Sampling, Elicitation and
 * Roots services, which guess: they pass it to the client whose call that server is
 * serving, when only one client's calls are in flight there. A fronted server of 2026-07-28 asks
 * under keys of its own, and a 2026-07-28 client is asked under the same keys. Roots are the
 * union of those its stateful clients listed, or the configured ones while none did; a
 * 2026-07-28 client has no session to list them once, so when such a client's call is what
 * the server serves, and the client declared roots, its roots are asked of it in the call.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Host from "../../Host.js"
import * as JsonRpc from "../../JsonRpc.js"
import type * as McpClient from "../../McpClient.js"
import * as McpError from "../../McpError.js"
import * as McpSchema from "../../McpSchema.js"
import * as McpServer from "../../McpServer.js"
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
  /**
   * The roots a 2026-07-28 client listed when asked in its first call (it has no session to
   * list them once, as a stateful client does): kept for the gateway's life, in the union.
   */
  modernRoots: ReadonlyArray<McpSchema.Root> | undefined
}

/** Whether a client answers form elicitations (declared `form`, or elicitation with no mode: before 2025-11-25). */
export const elicitsForms = (capabilities: McpSchema.ClientCapabilities | undefined): boolean => {
  const elicitation = capabilities?.elicitation
  return elicitation !== undefined && (elicitation.form !== undefined || elicitation.url === undefined)
}

/** A relay whose roots start as `fallbackRoots`. */
export const make = (fallbackRoots: ReadonlyArray<McpSchema.Root>): Effect.Effect<Relay> =>
  Effect.map(
    SubscriptionRef.make(fallbackRoots),
    (roots): Relay => ({ clients: new Set(), roots, fallbackRoots, modernRoots: undefined })
  )

// The union of the clients' roots, by URI, or the fallback when none lists any.
const updateRoots = (relay: Relay): Effect.Effect<void> => {
  const union = new Map<string, McpSchema.Root>()
  for (const root of relay.modernRoots ?? []) union.set(root.uri, root)
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

// `beforeTask`: whether the routed call is still inline, for a call the server named (one
// `callerOf` found is not known to be).
type Caller = {
  readonly client: RelayClient
  readonly related: McpServer.RequestContext
  readonly beforeTask?: (() => boolean) | undefined
}

// The client whose call `server` is serving, and that call, for a request tied to no call
// (see the header: what `callInput` does not get). Only an unambiguous one: with calls of
// several clients in flight there, the request could be any one's, and a client is never
// shown what another's call asked.
const callerOf = (relay: Relay, server: string): Caller | Peer.HandlerError => {
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

// Whether the call is a 2026-07-28 request: its client is asked by input rounds, and is told
// of what it lacks with -32021.
const isModern = (caller: Caller): boolean => McpSchema.isModernVersion(caller.related.client.protocolVersion)

// Through the call: on its stream, or in a modern request's input round (its run ends here
// and replays when the client retries with the answer), under the key the server asked by.
// `beforeTask` when the server asks before the routed call became a task (`routes.ts` keeps
// the gateway's call inline until then).
const ask = (caller: Caller, input: McpClient.CallInput): Effect.Effect<Record<string, unknown>, Peer.HandlerError> =>
  Effect.mapError(
    caller.related.requestClient(input.method, input.params, {
      ...(input.key === undefined ? {} : { key: input.key }),
      ...(caller.beforeTask?.() === true ? { beforeTask: true } : {})
    }),
    (error) =>
      error.cause instanceof McpError.McpError
        ? handlerError(error.cause)
        : new Peer.HandlerError({ code: JsonRpc.ErrorCode.InternalError, message: error.message })
  )

// Asked of the caller when it declared what the request needs.
const pass = (
  caller: Caller,
  input: McpClient.CallInput,
  declared: (capabilities: McpSchema.ClientCapabilities) => boolean,
  required: McpSchema.ClientCapabilities,
  what: string
): Effect.Effect<Record<string, unknown>, Peer.HandlerError> => {
  const capabilities = caller.client.capabilities
  if (capabilities === undefined || !declared(capabilities)) {
    return Effect.fail(
      isModern(caller)
        ? McpServer.missingClientCapability(required)
        : Host.rejected(`the gateway client did not declare ${what}`)
    )
  }
  return ask(caller, input)
}

// Whether a call's caller is a 2026-07-28 client that declared roots.
const modernWithRoots = (related: McpServer.RequestContext): boolean =>
  McpSchema.isModernVersion(related.client.protocolVersion) && related.client.capabilities.roots !== undefined

// A 2026-07-28 caller that declared roots is asked for them in its call; any other request
// gets the fleet's roots.
const listRoots = (
  relay: Relay,
  caller: Caller | undefined,
  key: string | undefined
): Effect.Effect<McpSchema.ListRootsResult, Peer.HandlerError> =>
  caller === undefined || !modernWithRoots(caller.related)
    ? Effect.map(SubscriptionRef.get(relay.roots), (roots) => ({ roots: [...roots] }))
    // The round checked the answer against ListRootsResult before handing it over.
    : ask(caller, { method: McpSchema.Method.RootsList, params: {}, key }) as Effect.Effect<
      McpSchema.ListRootsResult,
      Peer.HandlerError
    >

const usesTools = (request: McpSchema.CreateMessageRequestParams): boolean =>
  request.tools !== undefined || request.toolChoice !== undefined

const usesContext = (request: McpSchema.CreateMessageRequestParams): boolean =>
  request.includeContext !== undefined && request.includeContext !== "none"

// A fronted server's request, answered through the call it belongs to: the one place that
// checks the caller's capabilities, for requests of identified calls and guessed ones alike.
const answer = (
  relay: Relay,
  caller: Caller,
  input: McpClient.CallInput
): Effect.Effect<Record<string, unknown>, Peer.HandlerError> => {
  switch (input.method) {
    case McpSchema.Method.SamplingCreateMessage: {
      const request = input.params as McpSchema.CreateMessageRequestParams
      return pass(
        caller,
        input,
        (c) =>
          c.sampling !== undefined &&
          (!usesTools(request) || c.sampling.tools !== undefined) &&
          (!usesContext(request) || c.sampling.context !== undefined),
        {
          sampling: { ...(usesTools(request) ? { tools: {} } : {}), ...(usesContext(request) ? { context: {} } : {}) }
        },
        request.tools === undefined ? "sampling" : "sampling with tools"
      )
    }
    case McpSchema.Method.ElicitationCreate: {
      const url = input.params.mode === "url"
      return pass(
        caller,
        input,
        (c) => url ? c.elicitation?.url !== undefined : elicitsForms(c),
        { elicitation: url ? { url: {} } : { form: {} } },
        url ? "URL elicitation" : "elicitation"
      )
    }
    default:
      return listRoots(relay, caller, input.key)
  }
}

/**
 * The `onInput` of a call `client` made by the request of `related`: the requests the
 * fronted server asks in that call (named by it, or sent on the call's stream) go to it,
 * whatever else is in flight there; asked `beforeTask` (`McpServer.InputOptions`) while
 * `beforeTask()` says the routed call is no task.
 */
export const callInput = (
  relay: Relay,
  client: RelayClient,
  related: McpServer.RequestContext,
  beforeTask: () => boolean
): NonNullable<McpClient.CallToolOptions["onInput"]> =>
(input) => answer(relay, { client, related, beforeTask }, input)

// A request tied to no call: through the call `callerOf` finds.
const guessed = (relay: Relay, context: Host.RequestContext, method: string, params: object) =>
  Effect.suspend(() => {
    const caller = callerOf(relay, context.server)
    return "client" in caller
      ? answer(relay, caller, { method, params: params as Record<string, unknown>, key: context.key })
      : Effect.fail(caller)
  })

/** The host services that pass the fleet's requests to the gateway's clients. */
export const services = (relay: Relay): {
  readonly sampling: Host.Sampling
  readonly elicitation: Host.Elicitation
  readonly roots: Host.Roots
} => ({
  sampling: {
    // Declared to the servers so they may ask; each request is checked against its client's.
    capabilities: { context: true, tools: true },
    createMessage: (request, context) =>
      guessed(relay, context, McpSchema.Method.SamplingCreateMessage, request) as Effect.Effect<
        McpSchema.CreateMessageResult,
        Peer.HandlerError
      >
  },
  elicitation: {
    url: true,
    elicit: (request, context) =>
      guessed(relay, context, McpSchema.Method.ElicitationCreate, request) as Effect.Effect<
        McpSchema.ElicitResult,
        Peer.HandlerError
      >
  },
  roots: {
    roots: relay.roots,
    // A stateful server's roots/list, tied to no call: once a 2026-07-28 client's roots are
    // known (`askModernRoots`), they are in the fleet's roots, so a list that lands during
    // its call (the server re-listing after the change was told) is answered, not asked again.
    list: (context) =>
      Effect.suspend(() => {
        const caller = callerOf(relay, context.server)
        const asked = "client" in caller && relay.modernRoots === undefined ? caller : undefined
        return Effect.map(listRoots(relay, asked, context.key), (r) => r.roots)
      })
  }
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

/** The key the gateway asks a 2026-07-28 client's roots under, in the client's first call. */
const ROOTS_KEY = "mcp-fleet/gateway-roots"

/** Whether `askModernRoots` would ask the caller of `related`: it may skip the work otherwise. */
export const wantsModernRoots = (relay: Relay, related: McpServer.RequestContext): boolean =>
  relay.modernRoots === undefined && modernWithRoots(related)

/**
 * Asks a 2026-07-28 client that declared roots for them in its call (`related`), the first
 * time one calls a stateful server (which asks for roots outside any call, so cannot ask
 * the client itself): the fleet's servers then see its roots, not the configured ones, as
 * they see a stateful client's (listed once it initialized). A client that fails to answer
 * leaves the roots as they were; the call goes on either way.
 */
export const askModernRoots = (relay: Relay, related: McpServer.RequestContext): Effect.Effect<void> =>
  Effect.suspend(() =>
    !wantsModernRoots(relay, related)
      ? Effect.void
      : related.requestClient(McpSchema.Method.RootsList, {}, { key: ROOTS_KEY }).pipe(
        Effect.flatMap((result) =>
          Effect.suspend(() => {
            relay.modernRoots = Array.isArray(result.roots) ? result.roots as ReadonlyArray<McpSchema.Root> : []
            return updateRoots(relay)
          })
        ),
        Effect.catchAll((error) => Effect.logWarning(`a gateway client's roots/list failed: ${error.message}`))
      )
  )
