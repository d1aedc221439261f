/**
 * The hashing and randomness mcp-fleet needs, on any Web-standard runtime: synchronous
 * SHA-256 and HMAC-SHA-256 (WebCrypto's `subtle` is async only, and these digests are taken
 * inside pure functions: qualified names, spec hashes, pins, signed state) from the runtime's
 * `node:crypto` where it has one (Node, Bun, Deno: reached through `process.getBuiltinModule`,
 * so the module stays platform-neutral), else from `@noble/hashes`; random bytes and ids from
 * `globalThis.crypto`, which Node ≥ 19, Deno, Bun, Workers and browsers all have, and base64
 * both ways on `btoa`/`atob` in place of Node's Buffer.
 *
 * @internal
 */
import { hmac } from "@noble/hashes/hmac.js"
import { sha256 } from "@noble/hashes/sha2.js"

const encoder = new TextEncoder()
const decoder = new TextDecoder()

// Node's hash is four to five times @noble's on the short texts hashed here, more while
// @noble's code is still cold: a gateway restoring a hundred lazy servers takes a thousand.
interface NodeHash {
  update(data: string | Uint8Array): NodeHash
  digest(encoding: "hex" | "base64url"): string
}
type NodeCrypto = {
  readonly createHash: (algorithm: "sha256") => NodeHash
  readonly createHmac: (algorithm: "sha256", key: Uint8Array) => NodeHash
}
const nodeCrypto = (globalThis as {
  readonly process?: { readonly getBuiltinModule?: (id: string) => unknown }
}).process?.getBuiltinModule?.("node:crypto") as NodeCrypto | undefined

const hex = (bytes: Uint8Array): string => {
  let text = ""
  for (const byte of bytes) text += byte.toString(16).padStart(2, "0")
  return text
}

/** `bytes` in base64, padded. */
export const base64 = (bytes: Uint8Array): string => {
  let binary = ""
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return btoa(binary)
}

/** `bytes` in base64url, without padding. */
export const base64url = (bytes: Uint8Array): string =>
  base64(bytes).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")

/** The bytes of `text` in base64 or base64url, padded or not. */
export const fromBase64 = (text: string): Uint8Array =>
  Uint8Array.from(atob(text.replace(/-/g, "+").replace(/_/g, "/")), (char) => char.charCodeAt(0))

/** `text`'s UTF-8 bytes in base64url, without padding. */
export const textBase64url = (text: string): string => base64url(encoder.encode(text))

/** `text`'s UTF-8 bytes in base64, padded. */
export const textBase64 = (text: string): string => base64(encoder.encode(text))

/** The UTF-8 text of base64 or base64url; throws when it is neither, as `atob` does. */
export const textFromBase64 = (text: string): string => decoder.decode(fromBase64(text))

/** `text`'s UTF-8 bytes. */
export const utf8Bytes = (text: string): Uint8Array => encoder.encode(text)

/** The SHA-256 of `text`'s UTF-8 bytes, in lowercase hex. */
export const sha256Hex: (text: string) => string = nodeCrypto === undefined
  ? (text) => hex(sha256(encoder.encode(text)))
  : (text) => nodeCrypto.createHash("sha256").update(text).digest("hex")

/** The SHA-256 of `bytes`, in lowercase hex. */
export const bytesSha256Hex: (bytes: Uint8Array) => string = nodeCrypto === undefined
  ? (bytes) => hex(sha256(bytes))
  : (bytes) => nodeCrypto.createHash("sha256").update(bytes).digest("hex")

/** The SHA-256 of `text`'s UTF-8 bytes, in base64url. */
export const sha256Base64url: (text: string) => string = nodeCrypto === undefined
  ? (text) => base64url(sha256(encoder.encode(text)))
  : (text) => nodeCrypto.createHash("sha256").update(text).digest("base64url")

/** The HMAC-SHA-256 of `text`'s UTF-8 bytes under `key`, in base64url. */
export const hmacSha256Base64url: (key: Uint8Array, text: string) => string = nodeCrypto === undefined
  ? (key, text) => base64url(hmac(sha256, key, encoder.encode(text)))
  : (key, text) => nodeCrypto.createHmac("sha256", key).update(text).digest("base64url")

/**
 * Whether two strings are equal. Every character of `expected` is compared, whatever `given`
 * holds and however long it is, so the time taken says nothing of how much of it was right.
 */
export const timingSafeEqual = (given: string, expected: string): boolean => {
  let difference = given.length ^ expected.length
  for (let i = 0; i < expected.length; i++) difference |= (given.charCodeAt(i) | 0) ^ expected.charCodeAt(i)
  return difference === 0
}

export const randomBytes = (length: number): Uint8Array => globalThis.crypto.getRandomValues(new Uint8Array(length))

/** `length` random bytes in lowercase hex. */
export const randomHex = (length: number): string => hex(randomBytes(length))

/** A random (version 4) UUID. */
export const randomUUID = (): string => globalThis.crypto.randomUUID()
