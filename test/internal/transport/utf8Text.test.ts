// Utf8Text: a character cut between chunks comes out whole, once, as StringDecoder gives it.
import { describe, expect, it } from "@effect/vitest"
import { StringDecoder } from "node:string_decoder"
import { Utf8Text } from "../../../src/internal/transport/utf8Text.js"

const bytes = new TextEncoder().encode("\uFEFFa é € 😀 z")

describe("Utf8Text", () => {
  it("decodes a body cut at every byte the way StringDecoder does", () => {
    for (let cut = 0; cut <= bytes.length; cut++) {
      for (let second = cut; second <= bytes.length; second++) {
        const text = new Utf8Text()
        const node = new StringDecoder("utf8")
        const parts = [bytes.subarray(0, cut), bytes.subarray(cut, second), bytes.subarray(second)]
        expect(parts.map((part) => text.write(part)).join("")).toBe(parts.map((part) => node.write(part)).join(""))
      }
    }
  })
})
