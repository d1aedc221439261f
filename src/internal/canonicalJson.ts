/**
 * Canonical JSON: object keys sorted, no whitespace, undefined fields left out, so two
 * values that mean the same produce the same text (and digest) whatever their key order.
 * Used for the audit log's argument digests and for tool pins.
 *
 * @internal
 */
import { sha256Hex } from "./crypto.js"

/** The canonical JSON text of `value`. */
export const canonicalJson = (value: unknown): string => {
  if (value !== null && typeof value === "object" && typeof (value as { toJSON?: unknown }).toJSON === "function") {
    return canonicalJson((value as { toJSON: () => unknown }).toJSON())
  }
  if (Array.isArray(value)) {
    return `[${value.map((item) => item === undefined ? "null" : canonicalJson(item)).join(",")}]`
  }
  if (value !== null && typeof value === "object") {
    const record = value as Record<string, unknown>
    const keys = Object.keys(record).filter((key) => record[key] !== undefined && typeof record[key] !== "function")
      .sort()
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`).join(",")}}`
  }
  return JSON.stringify(value) ?? "null"
}

/** `sha256:` and the hex SHA-256 of `value`'s canonical JSON. */
export const canonicalDigest = (value: unknown): string => `sha256:${sha256Hex(canonicalJson(value))}`
