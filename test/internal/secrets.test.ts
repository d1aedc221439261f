import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Logger from "effect/Logger"
import * as Redacted from "effect/Redacted"
import { inspect } from "node:util"
import * as Secrets from "../../src/internal/secrets.js"
import * as McpError from "../../src/McpError.js"
import * as ServerSpec from "../../src/ServerSpec.js"

const TOKEN = "tok-3f9a1c77e2b4"
const masker = Secrets.make([TOKEN, "Bearer abc-123-def-456", "Basic dXNlcjpwYXNzLXcwcmQtOTk="].map(Redacted.make))

describe("secrets", () => {
  it("masks values of 8 characters or more that are not numbers", () => {
    const short = Secrets.make(["abc1234", "12345678", "3.14159265", "true", "   "].map(Redacted.make))
    expect(short.isEmpty).toBe(true)
    expect(short.text("abc1234 12345678 3.14159265")).toBe("abc1234 12345678 3.14159265")
    expect(masker.text(`the token ${TOKEN} is wrong; ${TOKEN}!`)).toBe("the token *** is wrong; ***!")
  })

  it("masks the forms a server may echo: URL-encoded, base64, the credentials of a scheme, decoded Basic", () => {
    const spaced = Secrets.make([Redacted.make("s3cret value/+")])
    expect(spaced.text(`q=${encodeURIComponent("s3cret value/+")}`)).toBe("q=***")
    expect(spaced.text(Buffer.from("s3cret value/+").toString("base64"))).toBe("***")
    expect(masker.text("got abc-123-def-456 instead")).toBe("got *** instead")
    expect(masker.text("Authorization: Bearer abc-123-def-456")).toBe("Authorization: ***")
    expect(masker.text("user:pass-w0rd-99 / pass-w0rd-99")).toBe("*** / ***")
  })

  it("masks the longest value first, and the start of a value an excerpt cut off", () => {
    const nested = Secrets.make(["abcdefgh", "xx-abcdefgh-yy"].map(Redacted.make))
    expect(nested.text("xx-abcdefgh-yy and abcdefgh")).toBe("*** and ***")
    expect(masker.text(`body: token=${TOKEN.slice(0, 9)}… (1200 characters)`)).toBe(
      "body: token=***… (1200 characters)"
    )
    expect(masker.text("done… more")).toBe("done… more")
  })

  it("masks every string of a JSON value, copying only what changed", () => {
    const same = { a: [1, "x"], b: { c: null } }
    expect(Secrets.maskValue(masker, same)).toBe(same)
    expect(Secrets.maskValue(masker, { a: [TOKEN], b: { c: `t=${TOKEN}` }, n: 1 })).toEqual({
      a: ["***"],
      b: { c: "t=***" },
      n: 1
    })
  })

  it("masks an error's reason and reduces its cause to text: no request, headers or URL query", () => {
    const request = { url: `http://h/mcp?token=${TOKEN}`, headers: { "x-key": TOKEN } }
    const wire = Object.assign(new TypeError(`fetch failed for http://u:p@h/mcp?token=${TOKEN}`), {
      code: "ECONNREFUSED",
      request,
      cause: Object.assign(new Error("inner"), { socket: request })
    })
    const error = McpError.protocol(
      "s",
      { method: "tools/call", code: -1, message: `bad ${TOKEN}`, data: { TOKEN } },
      wire
    )
    const masked = Secrets.maskError(masker, error)
    expect(masked.message).toBe("server 's' answered tools/call with error -1: bad ***")
    expect(masked.reason).toMatchObject({ _tag: "Protocol", data: { TOKEN: "***" } })
    const cause = masked.cause as Secrets.ScrubbedCause
    expect(cause).toBeInstanceOf(Secrets.ScrubbedCause)
    expect(cause.name).toBe("TypeError")
    expect(cause.message).toBe("fetch failed for http://h/mcp")
    expect(cause.code).toBe("ECONNREFUSED")
    expect((cause.cause as Error).message).toBe("inner")
    for (const shown of [inspect(masked, { depth: null }), JSON.stringify(masked), String(masked)]) {
      expect(shown).not.toContain(TOKEN)
      expect(shown).not.toContain("x-key")
    }
    const clean = McpError.config("s", { message: "fine" })
    expect(Secrets.maskError(masker, clean)).toBe(clean)
  })

  it("shows a URL without credentials, query or fragment", () => {
    expect(Secrets.safeUrl("https://u:p@example.com:8443/a/mcp?token=x#f")).toBe("https://example.com:8443/a/mcp")
    expect(Secrets.safeUrl("not a url")).toBe("(an invalid URL)")
    expect(Secrets.scrubUrls("GET https://u:p@h/x?token=y failed")).toBe("GET https://h/x failed")
  })

  it.effect("masks log messages, annotations and causes of the fibers it wraps", () =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      const logger = Logger.make(({ annotations, cause, message }) =>
        lines.push(`${String(message)} ${inspect(HashMap.toEntries(annotations))} ${Cause.pretty(cause)}`)
      )
      yield* Effect.logWarning(`stderr: ${TOKEN}`, Cause.die(new Error(`died with ${TOKEN}`))).pipe(
        Effect.annotateLogs({ line: TOKEN }),
        Secrets.maskLogs(masker),
        Effect.provide(Logger.replace(Logger.defaultLogger, logger))
      )
      expect(lines).toHaveLength(1)
      expect(lines[0]).toContain("stderr: ***")
      expect(lines[0]).toContain("died with ***")
      expect(lines[0]).not.toContain(TOKEN)
    }))
})

describe("ServerSpec.secrets", () => {
  const values = (spec: ServerSpec.ServerSpec) => ServerSpec.secrets(spec).map(Redacted.value)

  it("of a stdio server: Redacted env values and those whose name says they are secret", () => {
    expect(values({
      name: "s",
      transport: {
        type: "stdio",
        command: "x",
        args: ["--flag"],
        env: {
          FROM_VAR: Redacted.make("expanded-value"),
          GITHUB_PERSONAL_ACCESS_TOKEN: "ghp_literal",
          OPENAI_API_KEY: "sk-literal",
          DB_PASSWORD: "hunter22",
          NODE_ENV: "production",
          PATH: "/usr/bin"
        }
      }
    })).toEqual(["expanded-value", "ghp_literal", "sk-literal", "hunter22"])
  })

  it("of a remote server: every header value, the URL's credentials and query values", () => {
    expect(values({
      name: "r",
      transport: {
        type: "http",
        url: "https://me:p%40ss@example.com/mcp?token=abc&v=2",
        headers: { Authorization: Redacted.make("Bearer x"), "X-Team": "core" }
      }
    })).toEqual(["Bearer x", "core", "me", "p@ss", "me:p@ss", "abc", "2"])
  })
})
