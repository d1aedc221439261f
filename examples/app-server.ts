/**
 * An Effect app serving its own tools as an MCP server on stdio: two plain tools with Effect
 * Schema parameters (`McpServer.tool`) and an @effect/ai toolkit of two tools
 * (`AiToolkit.toolItems`), in one `McpServer.fromItems`. Any MCP client can spawn it, the
 * fleet among them:
 *
 *   { "mcpServers": { "app": { "command": "npx", "args": ["tsx", "examples/app-server.ts"] } } }
 *
 * Run it with `npx tsx examples/app-server.ts` (it then speaks MCP on stdin and stdout, and
 * ends when stdin does).
 */
import * as Tool from "@effect/ai/Tool"
import * as Toolkit from "@effect/ai/Toolkit"
import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer, Schema, SynchronizedRef } from "effect"
import { AiToolkit } from "../src/ai/index.js"
import { Gateway, McpServer } from "../src/index.js"
import { NodeMcpServer } from "../src/node/index.js"

// Plain tools: the arguments are decoded by `parameters`, the handler returns the result.
const wordCount = McpServer.tool({
  name: "word_count",
  description: "Counts the words of a text",
  parameters: Schema.Struct({ text: Schema.String }), // the inputSchema, and the arguments' decoder
  handler: ({ text }) => {
    const words = text.split(/\s+/).filter((word) => word !== "").length
    return Effect.succeed({ content: [{ type: "text", text: `${words} words` }] })
  }
})

const toFahrenheit = McpServer.tool({
  name: "celsius_to_fahrenheit",
  description: "Converts a temperature",
  annotations: { readOnlyHint: true },
  parameters: Schema.Struct({ celsius: Schema.Number }),
  handler: ({ celsius }) => Effect.succeed({ content: [{ type: "text", text: `${celsius * 9 / 5 + 32} °F` }] })
})

// An @effect/ai toolkit, as a model would be given it: the same tools serve MCP clients.
class DuplicateNote extends Schema.TaggedError<DuplicateNote>()("DuplicateNote", { title: Schema.String }) {}

const Note = Schema.Struct({ title: Schema.String, body: Schema.String })

const Notes = Toolkit.make(
  Tool.make("add_note", {
    description: "Keeps a note",
    parameters: Note.fields,
    success: Schema.Struct({ count: Schema.Number }),
    failure: DuplicateNote
  }).annotate(Tool.Destructive, false),
  Tool.make("list_notes", {
    description: "The notes kept so far",
    success: Schema.Struct({ notes: Schema.Array(Note) })
  }).annotate(Tool.Readonly, true)
)

const NotesLive = Notes.toLayer(Effect.gen(function*() {
  const notes = yield* SynchronizedRef.make<ReadonlyArray<typeof Note.Type>>([])
  return {
    add_note: (note) =>
      SynchronizedRef.modifyEffect(notes, (kept) =>
        kept.some((other) => other.title === note.title)
          ? Effect.fail(new DuplicateNote({ title: note.title }))
          : Effect.succeed([{ count: kept.length + 1 }, [...kept, note]] as const)),
    list_notes: () => Effect.map(SynchronizedRef.get(notes), (kept) => ({ notes: kept }))
  }
}))

const program = Effect.gen(function*() {
  const server = yield* McpServer.fromItems({
    serverInfo: { name: "app-server", version: "1.0.0" },
    tools: [wordCount, toFahrenheit, ...(yield* AiToolkit.toolItems(Notes))]
  })
  yield* NodeMcpServer.serveStdio(server) // until the client closes stdin
})

// stdout carries the protocol: logs go to stderr.
NodeRuntime.runMain(program.pipe(Effect.scoped, Effect.provide(Layer.merge(NotesLive, Gateway.stdioLogger))))
