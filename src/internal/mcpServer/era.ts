/**
 * The one seam between the two revision families a server speaks. Legacy (2024-11-05 …
 * 2025-11-25): a session that initializes, keeps the client, its log level and its resource
 * subscriptions, and is told what changes; 2025-11-25 tasks. Modern (2026-07-28): no
 * session, each request carrying its client, capabilities and log level in `_meta`, its
 * result a `resultType` with caching hints, input asked by MRTR rounds, changes told on
 * `subscriptions/listen` streams, the tasks extension, `Mcp-Param-*` headers checked.
 *
 * A server makes one `Era` of each family (`legacy.ts`, `modern.ts`); `choose` picks one per
 * request where the request comes in (`session.ts`; `alone.ts` is the modern one's alone),
 * and the rest (the built-in methods, the request context, the data form, the HTTP endpoint)
 * does not ask which revision it is in.
 *
 * @internal
 */
import type * as Effect from "effect/Effect"
import { isRecord } from "effect/Predicate"
import type * as JsonRpc from "../../JsonRpc.js"
import * as McpSchema from "../../McpSchema.js"
import type { ListKind } from "../../McpServer.js"
import type * as Peer from "../../Peer.js"
import type { Session } from "./session.js"

/** A revision family: the stateful revisions, or 2026-07-28 and later. */
export type Family = "legacy" | "modern"

/** What differs between the revision families, as one server serves them. */
export interface Era {
  /** The family. */
  readonly family: Family
  /** The methods a request of the family may name: the shared built-ins, its own, `Options.methods`. */
  readonly methods: ReadonlySet<string>
  /** Answers a request of the family arriving in `session` (-32601 for a method it does not have). */
  readonly answer: (
    session: Session,
    request: JsonRpc.Request
  ) => Effect.Effect<Record<string, unknown>, Peer.HandlerError>
  /** Tells its clients that the list of `kind` changed, as far as each asked to be told. */
  readonly listChanged: (kind: ListKind) => Effect.Effect<void>
  /** Tells its clients that the resource at `uri` changed, as far as each subscribed to it. */
  readonly resourceUpdated: (uri: string) => Effect.Effect<void>
  /** Sends a log message not related to a request to its clients whose level admits it. */
  readonly log: (level: McpSchema.LoggingLevel, data: unknown, logger?: string) => Effect.Effect<void>
}

/** The notification that tells a list of `kind` changed, in either family. */
export const LIST_CHANGED: Readonly<Record<ListKind, string>> = {
  tools: McpSchema.Method.ToolsListChanged,
  resources: McpSchema.Method.ResourcesListChanged,
  prompts: McpSchema.Method.PromptsListChanged
}

const modernMeta = (request: JsonRpc.Request): boolean => {
  const meta = request.params?._meta
  return isRecord(meta) &&
    (McpSchema.MetaKey.ProtocolVersion in meta || McpSchema.MetaKey.ClientCapabilities in meta)
}

/**
 * Whether a request outside a stateful session is a modern one: it carries the modern
 * `_meta` keys, or it is a method only the modern revision has.
 */
export const isModern = (request: JsonRpc.Request): boolean =>
  modernMeta(request) ||
  request.method === McpSchema.ModernMethod.Discover ||
  request.method === McpSchema.ModernMethod.SubscriptionsListen

/**
 * The era of `request` arriving in `session`: a stateful (initialized) session's requests are
 * legacy; before initialize, a modern request is modern when the server answers modern ones
 * (`modern` given), and anything else legacy (initialize, ping, or refused until initialize).
 */
export const choose = (session: Session, request: JsonRpc.Request, legacy: Era, modern: Era | undefined): Era =>
  modern === undefined || session.initialized || !isModern(request) ? legacy : modern
