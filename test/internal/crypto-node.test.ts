/**
 * The hashes of internal/crypto.ts on Node come from `node:crypto`: they must give the very
 * digests @noble's (the neutral fallback) gives, or a pin, a spec hash or a cache file name
 * taken on one runtime would not match one taken on another.
 */
import { describe, expect, it } from "@effect/vitest"
import { hmac } from "@noble/hashes/hmac.js"
import { sha256 } from "@noble/hashes/sha2.js"
import * as Crypto from "../../src/internal/crypto.js"

const encoder = new TextEncoder()
const hex = (bytes: Uint8Array) => Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("")
// Plain ASCII, several UTF-8 widths, a lone surrogate (both sides write U+FFFD), and a long text.
const texts = ["", "abc", "héllo wörld — ツール 🔧", "half \ud800 pair", "x".repeat(10_000)]

describe("crypto on Node", () => {
  it("hashes with node:crypto here", () => {
    expect(typeof process.getBuiltinModule).toBe("function")
    expect(Crypto.sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
  })

  it("gives @noble's digests, in hex and base64url", () => {
    for (const text of texts) {
      const digest = sha256(encoder.encode(text))
      expect(Crypto.sha256Hex(text)).toBe(hex(digest))
      expect(Crypto.sha256Base64url(text)).toBe(Crypto.base64url(digest))
      expect(Crypto.bytesSha256Hex(encoder.encode(text))).toBe(hex(digest))
    }
  })

  it("gives @noble's HMAC", () => {
    const key = Crypto.randomBytes(32)
    for (const text of texts) {
      expect(Crypto.hmacSha256Base64url(key, text)).toBe(Crypto.base64url(hmac(sha256, key, encoder.encode(text))))
    }
  })
})
