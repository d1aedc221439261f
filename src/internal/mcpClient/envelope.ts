/**
 * The envelope of a modern (2026-07-28) result: its `resultType`, the `_meta` keys that
 * describe the exchange (the server's identity, the revision, ours echoed back) and the
 * caching hints (`ttlMs`, `cacheScope`). The connection consumes them; what its users — a
 * gateway's clients included — get is the result a legacy server would have given.
 *
 * @internal
 */
import { isRecord } from "effect/Predicate"
import * as McpSchema from "../../McpSchema.js"

// The `_meta` keys of the revision that describe the exchange (who answered), not the result.
const ENVELOPE_META: ReadonlyArray<string> = [
  McpSchema.MetaKey.ServerInfo,
  McpSchema.MetaKey.ProtocolVersion,
  McpSchema.MetaKey.ClientInfo,
  McpSchema.MetaKey.ClientCapabilities,
  McpSchema.MetaKey.LogLevel
]

const hasEnvelopeMeta = (meta: unknown): meta is Record<string, unknown> => {
  if (!isRecord(meta)) return false
  for (const key of ENVELOPE_META) if (key in meta) return true
  return false
}

// `meta` without the keys of the exchange; undefined when nothing else is left. Rest
// patterns, not `delete`: a deleted key leaves a slow dictionary object behind.
const resultMeta = (meta: Record<string, unknown>): Record<string, unknown> | undefined => {
  const {
    [McpSchema.MetaKey.ServerInfo]: _server,
    [McpSchema.MetaKey.ProtocolVersion]: _version,
    [McpSchema.MetaKey.ClientInfo]: _client,
    [McpSchema.MetaKey.ClientCapabilities]: _capabilities,
    [McpSchema.MetaKey.LogLevel]: _level,
    ...kept
  } = meta
  for (const _ in kept) return kept
  return undefined
}

/**
 * A result without the revision's envelope: its `resultType` and the `_meta` keys of the
 * exchange, consumed by the connection; what the caller gets is the result a legacy server
 * would have given (so a gateway passes on nothing of it). `_meta` left empty goes. The
 * result itself when it has neither (no copy on that path).
 */
export const withoutEnvelope = (result: Record<string, unknown>): Record<string, unknown> => {
  const meta = result._meta
  if (!hasEnvelopeMeta(meta)) {
    if (!("resultType" in result)) return result
    const { resultType: _type, ...rest } = result
    return rest
  }
  const { _meta: _meta, resultType: _type, ...rest } = result
  const kept = resultMeta(meta)
  if (kept !== undefined) rest._meta = kept
  return rest
}

/** A result without the caching hints the cache has read (`ttlMs`, `cacheScope`). */
export const withoutHints = <A>(result: A): A => {
  if (!isRecord(result) || !("ttlMs" in result || "cacheScope" in result)) return result
  const { cacheScope: _scope, ttlMs: _ttl, ...rest } = result
  return rest as A
}
