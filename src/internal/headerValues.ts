/**
 * What the client and the server of revision 2026-07-28 must agree on in Streamable HTTP's
 * request headers (SEP-2243), kept in one place: which methods name their target in
 * `Mcp-Name` and from which param, and the Base64 sentinel (`=?base64?…?=`) that carries a
 * value that is not plain header-safe ASCII.
 *
 * @internal
 */
import { fromBase64, textBase64 } from "./crypto.js"

/**
 * The methods whose target travels in `Mcp-Name`, and the param it is taken from. The tasks
 * extension (SEP-2663) names its task, so a balancer can route to the instance that has it.
 */
export const NAME_PARAMS: ReadonlyMap<string, "name" | "uri" | "taskId"> = new Map([
  ["tools/call", "name"],
  ["prompts/get", "name"],
  ["resources/read", "uri"],
  ["tasks/get", "taskId"],
  ["tasks/update", "taskId"],
  ["tasks/cancel", "taskId"]
])

// Visible ASCII, space and tab (RFC 9110 field values).
const SAFE = /^[\x20-\x7E\t]*$/
const SENTINEL = /^=\?base64\?(.*)\?=$/s
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/
// A field value as RFC 9110 allows it here: visible ASCII and inner spaces/tabs.
const FIELD_VALUE = /^[\x21-\x7e](?:[\x20-\x7e\t]*[\x21-\x7e])?$/
const utf8 = new TextDecoder("utf-8", { fatal: true })

/**
 * A value as a header value: as it is when it is plain header-safe ASCII without leading or
 * trailing whitespace (and does not look like the sentinel), else the Base64 sentinel of its
 * UTF-8 bytes.
 */
export const encodeValue = (value: string): string =>
  SAFE.test(value) && value.trim() === value && !SENTINEL.test(value)
    ? value
    : `=?base64?${textBase64(value)}?=`

/** A header value decoded from the Base64 sentinel form, as is otherwise; undefined when malformed. */
export const decodeValue = (value: string): string | undefined => {
  const encoded = SENTINEL.exec(value)
  if (encoded === null) return FIELD_VALUE.test(value) ? value : undefined
  const base64 = encoded[1]!
  if (!BASE64.test(base64)) return undefined
  try {
    return utf8.decode(fromBase64(base64))
  } catch {
    return undefined
  }
}
