/**
 * Pages of a server's lists. A cursor names the list and the offset of the next page,
 * base64url-encoded so clients treat it as opaque; a cursor of another list, or past the
 * end, is refused.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as JsonRpc from "../../JsonRpc.js"
import * as Peer from "../../Peer.js"
import { textBase64url, textFromBase64 } from "../crypto.js"

/** The cursor of the page of `kind` that starts at `offset`. */
export const encodeCursor = (kind: string, offset: number): string => textBase64url(JSON.stringify([kind, offset]))

/** The offset a cursor names, 0 for none, or undefined when it is not a cursor of this list. */
export const decodeCursor = (kind: string, cursor: unknown, length: number): number | undefined => {
  if (cursor === undefined) return 0
  if (typeof cursor !== "string") return undefined
  try {
    const decoded: unknown = JSON.parse(textFromBase64(cursor))
    if (!Array.isArray(decoded)) return undefined
    const [k, offset] = decoded
    return k === kind && Number.isInteger(offset) && offset >= 0 && offset <= length ? offset : undefined
  } catch {
    return undefined
  }
}

/** The page a list request asks for, as `{ [key]: items, nextCursor? }`; -32602 for a bad cursor. */
export const page = <A>(
  kind: string,
  key: string,
  items: ReadonlyArray<A>,
  request: JsonRpc.Request,
  size: number
): Effect.Effect<Record<string, unknown>, Peer.HandlerError> => {
  const offset = decodeCursor(kind, request.params?.cursor, items.length)
  if (offset === undefined) {
    return Effect.fail(
      new Peer.HandlerError({
        code: JsonRpc.ErrorCode.InvalidParams,
        message: `Invalid cursor: ${JSON.stringify(request.params?.cursor)}`
      })
    )
  }
  const end = offset + size
  return Effect.succeed(
    end < items.length
      ? { [key]: items.slice(offset, end), nextCursor: encodeCursor(kind, end) }
      : { [key]: items.slice(offset) }
  )
}
