/**
 * An MCP server on stdio serving one skill (the skills extension, SEP-2640): a `SKILL.md` and
 * a supporting file, given as data (`McpServer.skill`). It lists the skill's entry on
 * `skills/list` (frontmatter, and each file's digest and size) and serves its files on
 * `resources/read`. In a config:
 *
 *   { "mcpServers": { "docs": { "command": "npx", "args": ["tsx", "examples/skills-server.ts"] } } }
 *
 * then `mcp-fleet skills` lists it and `mcp-fleet skill release-notes` loads it, verified.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Effect } from "effect"
import { Gateway, McpServer } from "../src/index.js"
import { NodeMcpServer } from "../src/node/index.js"

const releaseNotes = McpServer.skill({
  files: {
    "SKILL.md": `---
name: release-notes
description: Write the release notes of a version from its merged changes
---

1. List the changes merged since the last tag.
2. Group them as in references/STYLE.md, newest first.
`,
    "references/STYLE.md": "Sections: Added, Changed, Fixed. One line per change, in the past tense.\n"
  }
})

const program = Effect.gen(function*() {
  const server = yield* McpServer.fromItems({
    serverInfo: { name: "docs", version: "1.0.0" },
    skills: [releaseNotes]
  })
  yield* NodeMcpServer.serveStdio(server) // until the client closes stdin
})

NodeRuntime.runMain(program.pipe(Effect.scoped, Effect.provide(Gateway.stdioLogger)))
