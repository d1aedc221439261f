import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Host from "../../src/Host.js"
import * as McpClient from "../../src/McpClient.js"
import type * as McpSchema from "../../src/McpSchema.js"
import * as McpServer from "../../src/McpServer.js"
import type * as Peer from "../../src/Peer.js"
import { texts } from "../../src/testing/Results.js"
import { Transport } from "../../src/Transport.js"
import * as Fixture from "../fixtures/conformance-server.js"

// The conformance fixture through McpClient over a Memory pair: a few of the answers the
// suite's server scenarios check (npm run conformance runs the suite itself).

const connect = Effect.gen(function*() {
  const server = yield* Fixture.make
  const { transport } = yield* McpServer.connectMemory(server, { name: "fixture" })
  const client = yield* McpClient.make().pipe(Effect.provideService(Transport, transport))
  return { server, client }
})

// The host's side: a model that always says the same, a user who accepts every form with `content`.
const host = (
  asked: Array<McpSchema.CreateMessageRequestParams | McpSchema.ElicitRequestParams>,
  content: Record<string, McpSchema.ElicitValue>
) =>
  Layer.merge(
    Host.layerSampling({
      createMessage: (request) =>
        Effect.sync(() => {
          asked.push(request)
          return { role: "assistant", content: { type: "text", text: "Paris" }, model: "scripted" }
        })
    }),
    Host.layerElicitation({
      elicit: (request) =>
        Effect.sync(() => {
          asked.push(request)
          return { action: "accept", content }
        })
    })
  )

describe("conformance fixture", () => {
  it.scoped("lists what the scenarios name, each tool and prompt with a description", () =>
    Effect.gen(function*() {
      const { client } = yield* connect
      const tools = yield* client.listTools()
      expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining([
        "test_simple_text",
        "test_image_content",
        "test_audio_content",
        "test_embedded_resource",
        "test_multiple_content_types",
        "test_tool_with_logging",
        "test_error_handling",
        "test_tool_with_progress",
        "test_sampling",
        "test_elicitation",
        "test_elicitation_sep1034_defaults",
        "test_elicitation_sep1330_enums",
        "json_schema_2020_12_tool",
        // 2026-07-28 and the tasks extension
        "test_input_required_result_elicitation",
        "test_input_required_result_multi_round",
        "test_missing_capability",
        "test_streaming_elicitation",
        "slow_compute",
        "failing_job",
        "execute_sql",
        "test_trigger_tool_change",
        "test_trigger_prompt_change"
      ]))
      const prompts = yield* client.listPrompts()
      expect(prompts.map((prompt) => prompt.name).sort()).toEqual([
        "test_input_required_result_prompt",
        "test_prompt_with_arguments",
        "test_prompt_with_embedded_resource",
        "test_prompt_with_image",
        "test_simple_prompt"
      ])
      for (const item of [...tools, ...prompts]) expect(item.description).toBeTruthy()
      // SEP-1613: the 2020-12 keywords reach the client as given.
      const schema = tools.find((tool) => tool.name === "json_schema_2020_12_tool")!.inputSchema
      expect(schema).toMatchObject({
        $schema: "https://json-schema.org/draft/2020-12/schema",
        $defs: { address: { $anchor: "addressDef" } },
        additionalProperties: false
      })
      expect((yield* client.listResources()).map((resource) => resource.uri)).toEqual([
        "test://static-text",
        "test://static-binary",
        Fixture.WATCHED,
        // The skills' files (the skills extension's scenarios read them).
        ...Fixture.skills.flatMap((skill) => skill.files.map((file) => file.resource.uri))
      ])
      expect((yield* client.listResourceTemplates()).map((template) => template.uriTemplate)).toEqual([
        "test://template/{id}/data"
      ])
    }))

  it.scoped("answers with each content type, and a tool error as isError", () =>
    Effect.gen(function*() {
      const { client } = yield* connect
      expect(yield* client.callTool("test_audio_content")).toMatchObject({
        content: [{ type: "audio", mimeType: "audio/wav" }]
      })
      const mixed = yield* client.callTool("test_multiple_content_types")
      expect(mixed.content.map((block) => block.type)).toEqual(["text", "image", "resource"])
      const failed = yield* client.callTool("test_error_handling")
      expect(failed.isError).toBe(true)
      expect(texts(failed)[0]).toMatch(/intentionally/)
    }))

  it.scoped("reports progress, increasing, and log messages the level admits, before the answer", () =>
    Effect.gen(function*() {
      const { client } = yield* connect
      const progress = yield* Queue.unbounded<Peer.Progress>()
      yield* client.callTool("test_tool_with_progress", {}, { onProgress: (p) => Queue.offer(progress, p) })
      expect((yield* Queue.takeN(progress, 3)).pipe((all) => [...all].map((p) => [p.progress, p.total]))).toEqual([
        [0, 100],
        [50, 100],
        [100, 100]
      ])

      const notifications = yield* client.subscribe
      yield* client.setLoggingLevel("info")
      yield* client.callTool("test_tool_with_logging")
      const logs = [...yield* Queue.takeN(notifications, 3)]
      expect(logs.map((n) => [n.method, n.params?.level, n.params?.data])).toEqual([
        ["notifications/message", "info", "Tool execution started"],
        ["notifications/message", "info", "Tool processing data"],
        ["notifications/message", "info", "Tool execution completed"]
      ])
      // Above the level, nothing is sent.
      yield* client.setLoggingLevel("warning")
      yield* client.callTool("test_tool_with_logging")
      yield* client.ping()
      expect(yield* Queue.size(notifications)).toBe(0)

      // The list-change tools reach the server they belong to.
      yield* client.callTool("test_trigger_tool_change")
      expect((yield* Queue.take(notifications)).method).toBe("notifications/tools/list_changed")
    }))

  it.scoped("asks the client's model and user, and says what they answered", () =>
    Effect.gen(function*() {
      const asked: Array<McpSchema.CreateMessageRequestParams | McpSchema.ElicitRequestParams> = []
      const { client } = yield* connect.pipe(Effect.provide(host(asked, { status: "pending", verified: false })))
      const sampled = yield* client.callTool("test_sampling", { prompt: "Capital of France?" })
      expect(texts(sampled)).toEqual(["LLM response: Paris"])
      expect(asked[0]).toMatchObject({ messages: [{ role: "user", content: { text: "Capital of France?" } }] })

      // SEP-1034: the host fills what the user left out with the schema's defaults.
      const defaults = yield* client.callTool("test_elicitation_sep1034_defaults")
      expect(texts(defaults)[0]).toBe(
        "Elicitation completed: action=accept, content=" +
          JSON.stringify({ status: "pending", verified: false, name: "John Doe", age: 30, score: 95.5 })
      )
      // A bad argument is the tool's own error (2025-11-25), not a protocol error.
      expect((yield* client.callTool("test_sampling", { prompt: 42 })).isError).toBe(true)
    }))

  it.scoped("without sampling declared, test_sampling says so as a tool error", () =>
    Effect.gen(function*() {
      const { client } = yield* connect
      const refused = yield* client.callTool("test_sampling", { prompt: "hi" })
      expect(refused.isError).toBe(true)
      expect(texts(refused)[0]).toMatch(/did not declare the sampling capability/)
    }))

  it.scoped("reads resources and the template, tells subscribers of updates, gets and completes prompts", () =>
    Effect.gen(function*() {
      const { client, server } = yield* connect
      expect(yield* client.readResource("test://static-binary")).toMatchObject({
        contents: [{ uri: "test://static-binary", mimeType: "image/png", blob: expect.any(String) }]
      })
      const read = yield* client.readResource("test://template/123/data")
      expect(read.contents[0]).toMatchObject({ uri: "test://template/123/data", mimeType: "application/json" })
      expect(JSON.parse((read.contents[0] as { text: string }).text)).toMatchObject({ id: "123" })

      const notifications = yield* client.subscribe
      yield* client.subscribeResource(Fixture.WATCHED)
      yield* server.notifyResourceUpdated(Fixture.WATCHED)
      expect(yield* Queue.take(notifications)).toMatchObject({
        method: "notifications/resources/updated",
        params: { uri: Fixture.WATCHED }
      })
      yield* client.unsubscribeResource(Fixture.WATCHED)
      yield* server.notifyResourceUpdated(Fixture.WATCHED)
      yield* client.ping()
      expect(yield* Queue.size(notifications)).toBe(0)

      const prompt = yield* client.getPrompt("test_prompt_with_arguments", { arg1: "one", arg2: "two" })
      expect(prompt.messages[0]!.content).toEqual({
        type: "text",
        text: "Prompt with arguments: arg1='one', arg2='two'"
      })
      const completion = yield* client.complete({ type: "ref/prompt", name: "test_prompt_with_arguments" }, {
        name: "arg2",
        value: "par"
      })
      expect(completion.completion.values).toEqual(["paris", "park", "party"])
    }))
})
