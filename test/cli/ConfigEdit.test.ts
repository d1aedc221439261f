/**
 * Edits of a config file's text: `remove` takes the entry's own comments with it, and
 * leaves everything else as it was.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as ConfigEdit from "../../src/cli/ConfigEdit.js"

const removed = (text: string, name: string) => Either.getOrThrow(ConfigEdit.removeServer(text, "/p/.mcp.json", name))

describe("ConfigEdit.removeServer", () => {
  const text = `{
  // Servers of this project
  "mcpServers": {
    // notes, kept between sessions
    "memory": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"] },
    // about the servers below: it stays, parted from the entry by a blank line

    /*
     * The docs server, read-only.
     */
    "docs": {
      "url": "https://example.com/mcp"
    }, // trailing
    "files": { "command": "files" }
  }
}
`

  it("removes the comment lines right above the entry with it", () => {
    expect(removed(text, "memory")).toBe(text.replace(
      `    // notes, kept between sessions\n    "memory": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"] },\n`,
      ""
    ))
    expect(removed(text, "docs")).toBe(text.replace(
      `    /*\n     * The docs server, read-only.\n     */\n    "docs": {\n      "url": "https://example.com/mcp"\n    }, // trailing\n`,
      ""
    ))
  })

  it("keeps comments that are not the entry's own", () => {
    const result = removed(text, "docs")
    expect(result).toContain("// about the servers below: it stays")
    expect(result).toContain("// Servers of this project")
    // A comment after an entry, on its line, is that entry's: the next one's removal keeps it.
    expect(removed(text, "files")).toContain(`    } // trailing\n  }\n}`)
  })
})
