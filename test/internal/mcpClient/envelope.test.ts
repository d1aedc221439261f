// A 2026-07-28 result without the revision's envelope: `resultType` and the `_meta` keys of
// the exchange go, the result's own `_meta` stays, and a result with neither is not copied.
import { describe, expect, it } from "@effect/vitest"
import { withoutEnvelope } from "../../../src/internal/mcpClient/envelope.js"
import * as McpSchema from "../../../src/McpSchema.js"

const serverInfo = { [McpSchema.MetaKey.ServerInfo]: { name: "s", version: "1" } }

describe("withoutEnvelope", () => {
  it("drops resultType and the server's identity, and a _meta left empty", () => {
    const result = { content: [], resultType: "complete", _meta: serverInfo }
    expect(withoutEnvelope(result)).toStrictEqual({ content: [] })
    // The server's answer itself is left as it came.
    expect(result).toStrictEqual({ content: [], resultType: "complete", _meta: serverInfo })
  })

  it("keeps the result's own _meta", () => {
    expect(withoutEnvelope({ content: [], resultType: "complete", _meta: { ...serverInfo, trace: "t" } }))
      .toStrictEqual({ content: [], _meta: { trace: "t" } })
    expect(withoutEnvelope({ content: [], resultType: "complete", _meta: { trace: "t" } }))
      .toStrictEqual({ content: [], _meta: { trace: "t" } })
  })

  it("gives a result without an envelope back as it is", () => {
    const result = { content: [], _meta: { trace: "t" } }
    expect(withoutEnvelope(result)).toBe(result)
  })
})
