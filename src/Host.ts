/**
 * The host's side of MCP: what a server may ask of its client. Three services, each a
 * `Context.Tag` with a `layer` constructor:
 *
 * - `Sampling`: the server asks the host's model for a message (`sampling/createMessage`).
 * - `Elicitation`: the server asks the user for input, by a form or by sending them to a URL
 *   (`elicitation/create`, `notifications/elicitation/complete`).
 * - `Roots`: the folders the server may work in (`roots/list`), in a SubscriptionRef; a change
 *   sends `notifications/roots/list_changed` to every connected server.
 *
 * A connection (`McpClient.make`) declares a capability in initialize only when its service is
 * in context (and its `host` option does not turn it off), and answers the server's requests
 * through it. What the services answer is checked before it is sent: a sampling result against
 * `McpSchema.CreateMessageResult`; an accepted form gets the schema's defaults (SEP-1034) for
 * the fields it lacks and is then validated against the requested schema. For a fleet, provide
 * the services once, to the `ServerRegistry`'s layer: every server then uses them.
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as SubscriptionRef from "effect/SubscriptionRef"
import { applyDefaults, checkForm } from "./internal/host/form.js"
import { inputRequest as makeInputRequest, makeClientSide } from "./internal/host/handlers.js"
import type * as JsonRpc from "./JsonRpc.js"
import type * as McpError from "./McpError.js"
import type * as McpSchema from "./McpSchema.js"
import * as Peer from "./Peer.js"

/**
 * What a service knows about the request it answers.
 *
 * @since 0.2.0
 * @category models
 */
export interface RequestContext {
  /** The server that asked. */
  readonly server: string
  /**
   * Reports progress to the server, when it asked for progress (a `progressToken`);
   * otherwise does nothing.
   */
  readonly progress: (progress: Peer.Progress) => Effect.Effect<void>
  /**
   * The key the server asked under, when it asked inside a result (2026-07-28: an input
   * request of an `InputRequiredResult`, or of a task); absent for a request it sent.
   */
  readonly key?: string | undefined
}

/**
 * Answers `sampling/createMessage`. Fail with a `Peer.HandlerError` to refuse (`rejected`
 * makes the one the spec suggests).
 *
 * @since 0.2.0
 * @category models
 */
export interface Sampling {
  /**
   * What to declare beyond plain sampling: `context` (the server may ask for `includeContext`
   * other than `none`) and `tools` (2025-11-25: the request may carry tools, and the answer
   * may use them). Default: neither; a request with tools is then refused.
   */
  readonly capabilities?: { readonly context?: boolean; readonly tools?: boolean } | undefined
  readonly createMessage: (
    request: McpSchema.CreateMessageRequestParams,
    context: RequestContext
  ) => Effect.Effect<McpSchema.CreateMessageResult, Peer.HandlerError>
}

/**
 * The sampling service.
 *
 * @since 0.2.0
 * @category tags
 */
export const Sampling = Context.GenericTag<Sampling>("mcp-fleet/Host/Sampling")

/**
 * Answers `elicitation/create`. A form's accepted content needs only what the user gave: the
 * requested schema's defaults fill the rest, and the whole is validated before it is sent.
 *
 * @since 0.2.0
 * @category models
 */
export interface Elicitation {
  /** Whether URL mode (2025-11-25) is supported. Default: false; URL requests are then refused. */
  readonly url?: boolean | undefined
  readonly elicit: (
    request: McpSchema.ElicitRequestParams,
    context: RequestContext
  ) => Effect.Effect<McpSchema.ElicitResult, Peer.HandlerError>
  /** Told when a server says a URL elicitation is complete (`notifications/elicitation/complete`). */
  readonly completed?:
    | ((elicitationId: string, context: { readonly server: string }) => Effect.Effect<void>)
    | undefined
}

/**
 * The elicitation service.
 *
 * @since 0.2.0
 * @category tags
 */
export const Elicitation = Context.GenericTag<Elicitation>("mcp-fleet/Host/Elicitation")

/**
 * The roots every server is told; setting the ref tells every connected server that they
 * changed.
 *
 * @since 0.2.0
 * @category models
 */
export interface Roots {
  readonly roots: SubscriptionRef.SubscriptionRef<ReadonlyArray<McpSchema.Root>>
  /**
   * Answers one `roots/list` when the answer depends on the request (a gateway asks the
   * client whose call the server is serving); absent: `roots` answers every request.
   */
  readonly list?:
    | ((context: RequestContext) => Effect.Effect<ReadonlyArray<McpSchema.Root>, Peer.HandlerError>)
    | undefined
}

/**
 * The roots service.
 *
 * @since 0.2.0
 * @category tags
 */
export const Roots = Context.GenericTag<Roots>("mcp-fleet/Host/Roots")

/**
 * Which host features one connection offers: each is on when its service is in context,
 * unless turned off here (a fleet's per-server `sampling: false`, ...).
 *
 * @since 0.2.0
 * @category models
 */
export interface Features {
  readonly sampling?: boolean | undefined
  readonly elicitation?: boolean | undefined
  readonly roots?: boolean | undefined
}

/**
 * The host services one connection uses.
 *
 * @since 0.2.0
 * @category models
 */
export interface Services {
  readonly sampling: Option.Option<Sampling>
  readonly elicitation: Option.Option<Elicitation>
  readonly roots: Option.Option<Roots>
}

/**
 * The host services in context, less those `features` turns off.
 *
 * @since 0.2.0
 * @category constructors
 */
export const services = (features: Features = {}): Effect.Effect<Services> =>
  Effect.map(
    Effect.all({
      sampling: Effect.serviceOption(Sampling),
      elicitation: Effect.serviceOption(Elicitation),
      roots: Effect.serviceOption(Roots)
    }),
    (found) => ({
      sampling: features.sampling === false ? Option.none() : found.sampling,
      elicitation: features.elicitation === false ? Option.none() : found.elicitation,
      roots: features.roots === false ? Option.none() : found.roots
    })
  )

/**
 * What a connection needs from the host services.
 *
 * @since 0.2.0
 * @category models
 */
export interface ClientSide {
  readonly capabilities: McpSchema.ClientCapabilities
  readonly handlers: Readonly<Record<string, Peer.Handler>>
  /** Handles a server notification meant for a host service (`notifications/elicitation/complete`). */
  readonly onNotification: (notification: JsonRpc.Notification) => Effect.Effect<void>
  /**
   * Tells the server of each roots change, for as long as it runs (start it once the
   * connection is initialized); never ends otherwise.
   */
  readonly watchRoots: Effect.Effect<void>
}

/**
 * The client's side of a connection made from host services: the capabilities to declare,
 * the handlers of the server's requests, and what to do with its notifications and when the
 * roots change. Used by `McpClient.make`.
 *
 * @since 0.2.0
 * @category constructors
 */
export const clientSide: (
  services: Services,
  options: {
    readonly server: string
    readonly notify: (method: string, params?: Record<string, unknown>) => Effect.Effect<void, McpError.McpError>
  }
) => ClientSide = makeClientSide

/**
 * A server's input request (2026-07-28: asked under `key` inside a result) as the request
 * a connection's handlers answer: its id is the key, and the services see the key in their
 * `RequestContext`.
 *
 * @since 0.2.0
 * @category constructors
 */
export const inputRequest: (
  key: string,
  method: string,
  params: Record<string, unknown> | undefined
) => JsonRpc.Request = makeInputRequest

/**
 * A sampling service.
 *
 * @since 0.2.0
 * @category layers
 */
export const layerSampling = (service: Sampling): Layer.Layer<Sampling> => Layer.succeed(Sampling, service)

/**
 * An elicitation service.
 *
 * @since 0.2.0
 * @category layers
 */
export const layerElicitation = (service: Elicitation): Layer.Layer<Elicitation> => Layer.succeed(Elicitation, service)

/**
 * A roots service starting with `initial`.
 *
 * @since 0.2.0
 * @category layers
 */
export const layerRoots = (initial: ReadonlyArray<McpSchema.Root> = []): Layer.Layer<Roots> =>
  Layer.effect(Roots, Effect.map(SubscriptionRef.make(initial), (roots) => ({ roots })))

/**
 * Replaces the roots; every connected server is told.
 *
 * @since 0.2.0
 * @category combinators
 */
export const setRoots = (roots: ReadonlyArray<McpSchema.Root>): Effect.Effect<void, never, Roots> =>
  Effect.flatMap(Roots, (service) => SubscriptionRef.set(service.roots, roots))

/**
 * The refusal the spec suggests for a request the user rejected (code -1).
 *
 * @since 0.2.0
 * @category constructors
 */
export const rejected = (message = "The user rejected the request"): Peer.HandlerError =>
  new Peer.HandlerError({ code: -1, message })

/**
 * A form's content with the requested schema's defaults (SEP-1034) for the fields it lacks.
 *
 * @since 0.2.0
 * @category utils
 */
export const withDefaults: (
  schema: McpSchema.ElicitFormParams["requestedSchema"],
  content: Readonly<Record<string, McpSchema.ElicitValue>>
) => Record<string, McpSchema.ElicitValue> = applyDefaults

/**
 * Why a form's content does not fit the requested schema, or undefined when it does. The
 * first check loads the JSON Schema validator (Ajv), hence an Effect.
 *
 * @since 0.2.0
 * @category utils
 */
export const formProblem: (
  schema: McpSchema.ElicitFormParams["requestedSchema"],
  content: Readonly<Record<string, McpSchema.ElicitValue>>
) => Effect.Effect<string | undefined> = checkForm
