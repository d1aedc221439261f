import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as McpSchema from "../src/McpSchema.js"

/** Decode with the module's options and expect success. */
const decodeOk = <A, I>(schema: Schema.Schema<A, I, never>, input: unknown): A => {
  const result = McpSchema.decodeUnknown(schema)(input)
  if (Either.isLeft(result)) {
    throw new Error(`expected success, got: ${result.left.message}`)
  }
  return result.right
}

/** Decode with the module's options and expect failure; returns the error message. */
const decodeError = <A, I>(schema: Schema.Schema<A, I, never>, input: unknown): string => {
  const result = McpSchema.decodeUnknown(schema)(input)
  if (Either.isRight(result)) {
    throw new Error(`expected failure, got: ${JSON.stringify(result.right)}`)
  }
  return result.left.message
}

/** Decoding must neither drop, add nor reorder anything. */
const expectRoundTrip = <A, I>(schema: Schema.Schema<A, I, never>, input: unknown): A => {
  const decoded = decodeOk(schema, input)
  expect(JSON.stringify(decoded)).toBe(JSON.stringify(input))
  return decoded
}

describe("McpSchema", () => {
  describe("protocol versions", () => {
    it("lists the four revisions newest first", () => {
      expect(McpSchema.LATEST_PROTOCOL_VERSION).toBe("2025-11-25")
      expect(McpSchema.SUPPORTED_PROTOCOL_VERSIONS).toEqual(["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"])
    })

    it("ProtocolVersion accepts exactly the supported revisions", () => {
      for (const version of McpSchema.SUPPORTED_PROTOCOL_VERSIONS) {
        expect(decodeOk(McpSchema.ProtocolVersion, version)).toBe(version)
      }
      expect(decodeError(McpSchema.ProtocolVersion, "2099-01-01")).toContain("2024-11-05")
    })
  })

  describe("initialize", () => {
    it("decodes a 2024-11-05 result (no title, no instructions)", () => {
      const result = expectRoundTrip(McpSchema.InitializeResult, {
        protocolVersion: "2024-11-05",
        capabilities: { logging: {}, prompts: { listChanged: true }, resources: { subscribe: true } },
        serverInfo: { name: "example-server", version: "1.0.0" }
      })
      expect(result.serverInfo.title).toBeUndefined()
      expect(result.capabilities.resources?.subscribe).toBe(true)
    })

    it("decodes a 2025-11-25 result with icons, tasks and a custom capability", () => {
      const result = expectRoundTrip(McpSchema.InitializeResult, {
        protocolVersion: "2025-11-25",
        capabilities: {
          experimental: { "vendor.feature": { enabled: true } },
          logging: {},
          completions: {},
          prompts: { listChanged: true },
          resources: { subscribe: true, listChanged: true },
          tools: { listChanged: true },
          tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
          "x-custom": { level: 3 }
        },
        serverInfo: {
          name: "everything",
          title: "Everything Server",
          version: "2.0.0",
          description: "Exercises every MCP feature",
          websiteUrl: "https://example.com",
          icons: [
            { src: "https://example.com/icon.png", mimeType: "image/png", sizes: ["48x48"], theme: "light" },
            { src: "data:image/svg+xml;base64,PHN2Zy8+", sizes: ["any"] }
          ]
        },
        instructions: "Use the echo tool to test.",
        _meta: { "example.com/trace": "abc" }
      })
      expect(result.capabilities["x-custom"]).toEqual({ level: 3 })
      expect(result.capabilities.tasks?.requests?.tools?.call).toEqual({})
      expect(result.serverInfo.icons?.[0]?.theme).toBe("light")
      expect(result.instructions).toBe("Use the echo tool to test.")
    })

    it("rejects an icon theme the spec does not define", () => {
      expect(decodeError(McpSchema.Icon, { src: "https://x/icon.png", theme: "sepia" })).toContain("theme")
    })

    it("decodes 2025-11-25 initialize params with every client capability", () => {
      const params = expectRoundTrip(McpSchema.InitializeRequestParams, {
        _meta: { progressToken: "init-1" },
        protocolVersion: "2025-11-25",
        capabilities: {
          roots: { listChanged: true },
          sampling: { context: {}, tools: {} },
          elicitation: { form: {}, url: {} },
          tasks: {
            list: {},
            cancel: {},
            requests: { sampling: { createMessage: {} }, elicitation: { create: {} } }
          },
          experimental: {}
        },
        clientInfo: { name: "mcp-fleet", version: "0.1.0" }
      })
      expect(params._meta?.progressToken).toBe("init-1")
    })

    it("accepts the 2025-06-18 bare elicitation and 2024-11-05 bare sampling objects", () => {
      expectRoundTrip(McpSchema.ClientCapabilities, { sampling: {}, elicitation: {}, roots: {} })
    })

    it("names a missing field in the error", () => {
      const message = decodeError(McpSchema.InitializeResult, {
        protocolVersion: "2025-06-18",
        capabilities: {},
        serverInfo: { name: "no-version" }
      })
      expect(message).toContain("version")
      expect(message).toContain("is missing")
      expect(message).toContain("Implementation")
    })
  })

  describe("tools", () => {
    const fullTool = {
      name: "get_weather",
      title: "Weather",
      description: "Get the weather for a city",
      inputSchema: {
        $schema: "https://json-schema.org/draft/2020-12/schema",
        type: "object",
        properties: { city: { type: "string" } },
        required: ["city"]
      },
      outputSchema: {
        type: "object",
        properties: { temperature: { type: "number" } },
        required: ["temperature"]
      },
      annotations: { title: "Weather lookup", readOnlyHint: true, openWorldHint: true },
      execution: { taskSupport: "optional" },
      icons: [{ src: "https://example.com/weather.svg", mimeType: "image/svg+xml" }],
      _meta: { "example.com/cost": 1 }
    }

    it("decodes a 2025-11-25 tool with icons, execution and outputSchema", () => {
      const result = expectRoundTrip(McpSchema.ListToolsResult, {
        tools: [fullTool, { name: "ping", inputSchema: { type: "object" } }],
        nextCursor: "page-2"
      })
      expect(result.nextCursor).toBe("page-2")
      expect(result.tools[0]?.execution?.taskSupport).toBe("optional")
      expect(result.tools[0]?.outputSchema).toEqual(fullTool.outputSchema)
      expect(result.tools[1]?.annotations).toBeUndefined()
    })

    it("keeps unknown fields at the top level and inside nested objects", () => {
      const tool = {
        ...fullTool,
        "x-vendor": { rank: 1 },
        annotations: { ...fullTool.annotations, "x-hint": "fast" },
        execution: { taskSupport: "required", "x-queue": "slow" }
      }
      const result = expectRoundTrip(McpSchema.ListToolsResult, { tools: [tool], "x-page": 1 })
      expect((result as unknown as Record<string, unknown>)["x-page"]).toBe(1)
      expect(result.tools[0]).toEqual(tool)
    })

    it("rejects a tool without inputSchema, naming the field", () => {
      const message = decodeError(McpSchema.ListToolsResult, { tools: [{ name: "broken" }] })
      expect(message).toContain("inputSchema")
      expect(message).toContain("is missing")
    })

    it("decodes call params with arguments, a progress token and a task", () => {
      const params = expectRoundTrip(McpSchema.CallToolRequestParams, {
        name: "get_weather",
        arguments: { city: "Paris", days: 3 },
        _meta: { progressToken: 7, "example.com/origin": "ui" },
        task: { ttl: 60000 }
      })
      expect(params._meta?.progressToken).toBe(7)
    })

    it("decodes a result with every content block type", () => {
      const result = expectRoundTrip(McpSchema.CallToolResult, {
        content: [
          {
            type: "text",
            text: "Sunny, 24°C",
            annotations: { audience: ["user", "assistant"], priority: 0.8, lastModified: "2025-01-12T15:00:58Z" }
          },
          { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
          { type: "audio", data: "UklGRg==", mimeType: "audio/wav", _meta: { seconds: 2 } },
          {
            type: "resource_link",
            uri: "file:///forecast.json",
            name: "forecast",
            title: "Forecast",
            mimeType: "application/json",
            size: 512,
            annotations: { priority: 0.2 }
          },
          {
            type: "resource",
            resource: { uri: "file:///notes.md", mimeType: "text/markdown", text: "# Notes" }
          },
          {
            type: "resource",
            resource: { uri: "file:///map.png", mimeType: "image/png", blob: "iVBORw0KGgo=" },
            annotations: { audience: ["user"] }
          }
        ],
        structuredContent: { temperature: 24 },
        isError: false
      })
      expect(result.content.map((block) => block.type)).toEqual([
        "text",
        "image",
        "audio",
        "resource_link",
        "resource",
        "resource"
      ])
      expect(result.content.every(McpSchema.isKnownContentBlock)).toBe(true)
      // `type` alone cannot narrow past the open fallback; the guard can
      const blob = result.content[5]!
      expect(
        McpSchema.isKnownContentBlock(blob) && blob.type === "resource" && "blob" in blob.resource &&
          blob.resource.blob
      ).toBe("iVBORw0KGgo=")
    })

    it("decodes a 2024-11-05 error result", () => {
      const result = expectRoundTrip(McpSchema.CallToolResult, {
        content: [{ type: "text", text: "city not found" }],
        isError: true
      })
      expect(result.isError).toBe(true)
    })

    it("keeps unknown fields inside content blocks and embedded resources", () => {
      expectRoundTrip(McpSchema.CallToolResult, {
        content: [
          { type: "text", text: "hi", "x-lang": "en", annotations: { priority: 1, "x-weight": 2 } },
          { type: "resource", resource: { uri: "file:///a", text: "a", "x-etag": "1" } }
        ]
      })
    })

    it("accepts a content block of an unknown future type, keeping all of it", () => {
      const future = { type: "hologram", frames: 12, data: { x: 1 } }
      const result = expectRoundTrip(McpSchema.CallToolResult, {
        content: [future, { type: "text", text: "after" }]
      })
      const block = result.content[0]!
      expect(block).toEqual(future)
      expect(McpSchema.isKnownContentBlock(block)).toBe(false)
      expect(McpSchema.isKnownContentBlock(result.content[1]!)).toBe(true)
    })

    it("still rejects a malformed block of a known type", () => {
      const message = decodeError(McpSchema.CallToolResult, { content: [{ type: "text" }] })
      expect(message).toContain("TextContent")
      expect(message).toContain("[\"text\"]")
      expect(decodeError(McpSchema.ContentBlock, { type: "image", data: "x" })).toContain("mimeType")
    })

    it("rejects an embedded resource with neither text nor blob", () => {
      const message = decodeError(McpSchema.EmbeddedResource, { type: "resource", resource: { uri: "file:///a" } })
      expect(message).toContain("blob")
    })
  })

  describe("resources", () => {
    it("decodes a 2025-06-18 resource list with titles, annotations and _meta", () => {
      const result = expectRoundTrip(McpSchema.ListResourcesResult, {
        resources: [
          {
            uri: "file:///project/README.md",
            name: "README.md",
            title: "Project README",
            description: "The readme",
            mimeType: "text/markdown",
            size: 1024,
            annotations: { audience: ["user"], priority: 0.5, lastModified: "2025-05-01T00:00:00Z" },
            _meta: { owner: "me" }
          },
          { uri: "test://static/resource/1", name: "Resource 1" }
        ]
      })
      expect(result.resources[0]?.annotations?.lastModified).toBe("2025-05-01T00:00:00Z")
      expect(result.nextCursor).toBeUndefined()
    })

    it("decodes resource templates", () => {
      expectRoundTrip(McpSchema.ListResourceTemplatesResult, {
        resourceTemplates: [
          {
            uriTemplate: "test://static/resource/{id}",
            name: "Static Resource",
            title: "Static",
            description: "A static resource with a numeric ID",
            mimeType: "text/plain",
            icons: [{ src: "https://example.com/r.png" }]
          }
        ],
        nextCursor: "t2"
      })
    })

    it("decodes a read result with text and blob contents", () => {
      const result = expectRoundTrip(McpSchema.ReadResourceResult, {
        contents: [
          { uri: "test://static/resource/1", mimeType: "text/plain", text: "Resource 1: plaintext" },
          { uri: "test://static/resource/2", mimeType: "application/octet-stream", blob: "AAECAw==", _meta: {} }
        ]
      })
      expect(result.contents).toHaveLength(2)
    })

    it("decodes read/subscribe/unsubscribe params and the updated notification params", () => {
      const params = { uri: "file:///a.txt" }
      expectRoundTrip(McpSchema.ReadResourceRequestParams, params)
      expectRoundTrip(McpSchema.SubscribeRequestParams, params)
      expectRoundTrip(McpSchema.UnsubscribeRequestParams, { ...params, _meta: { progressToken: "u" } })
      expectRoundTrip(McpSchema.ResourceUpdatedNotificationParams, params)
      expect(decodeError(McpSchema.SubscribeRequestParams, {})).toContain("uri")
    })
  })

  describe("prompts", () => {
    it("decodes a prompt list with arguments", () => {
      const result = expectRoundTrip(McpSchema.ListPromptsResult, {
        prompts: [
          {
            name: "complex_prompt",
            title: "Complex",
            description: "A prompt with arguments",
            arguments: [
              { name: "temperature", description: "Temperature setting", required: true },
              { name: "style", title: "Style" }
            ],
            icons: [{ src: "https://example.com/p.png" }]
          },
          { name: "simple_prompt" }
        ],
        nextCursor: "p2"
      })
      expect(result.prompts[0]?.arguments?.[0]?.required).toBe(true)
    })

    it("decodes a rendered prompt with text, image, resource_link and an embedded resource", () => {
      const result = expectRoundTrip(McpSchema.GetPromptResult, {
        description: "A complex prompt",
        messages: [
          { role: "user", content: { type: "text", text: "What is the weather?" } },
          { role: "assistant", content: { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" } },
          { role: "user", content: { type: "resource_link", uri: "file:///w.json", name: "w" } },
          {
            role: "user",
            content: { type: "resource", resource: { uri: "file:///w.txt", text: "sunny" } }
          }
        ]
      })
      expect(result.messages).toHaveLength(4)
      expect(decodeError(McpSchema.PromptMessage, { role: "system", content: { type: "text", text: "x" } }))
        .toContain("role")
    })

    it("decodes get params with string arguments only", () => {
      expectRoundTrip(McpSchema.GetPromptRequestParams, { name: "complex_prompt", arguments: { temperature: "0.7" } })
      expect(decodeError(McpSchema.GetPromptRequestParams, { name: "p", arguments: { n: 1 } })).toContain("n")
    })
  })

  describe("completion", () => {
    it("decodes prompt and resource references, with and without context", () => {
      expectRoundTrip(McpSchema.CompleteRequestParams, {
        ref: { type: "ref/prompt", name: "complex_prompt", title: "Complex" },
        argument: { name: "style", value: "fo" },
        context: { arguments: { temperature: "0.7" } }
      })
      // the 2024-11-05 shape (ResourceReference) is the same on the wire
      const params = expectRoundTrip(McpSchema.CompleteRequestParams, {
        ref: { type: "ref/resource", uri: "test://static/resource/{id}" },
        argument: { name: "id", value: "1" }
      })
      expect(Schema.is(McpSchema.ResourceReference)(params.ref)).toBe(true)
    })

    it("decodes a completion result", () => {
      const result = expectRoundTrip(McpSchema.CompleteResult, {
        completion: { values: ["formal", "fun"], total: 10, hasMore: true }
      })
      expect(result.completion.values).toEqual(["formal", "fun"])
      expect(decodeError(McpSchema.CompleteResult, { completion: {} })).toContain("values")
    })
  })

  describe("logging, progress, cancellation", () => {
    it("decodes setLevel params for each of the eight levels", () => {
      for (const level of ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]) {
        expectRoundTrip(McpSchema.SetLevelRequestParams, { level })
      }
      expect(decodeError(McpSchema.SetLevelRequestParams, { level: "verbose" })).toContain("level")
    })

    it("decodes log messages and requires `data`", () => {
      expectRoundTrip(McpSchema.LoggingMessageNotificationParams, {
        level: "error",
        logger: "database",
        data: { error: "Connection failed", details: { host: "localhost", port: 5432 } }
      })
      expectRoundTrip(McpSchema.LoggingMessageNotificationParams, { level: "info", data: null })
      expect(decodeError(McpSchema.LoggingMessageNotificationParams, { level: "info" })).toContain("data")
    })

    it("accepts string and integer progress tokens", () => {
      expectRoundTrip(McpSchema.ProgressNotificationParams, { progressToken: "abc", progress: 0.5 })
      expectRoundTrip(McpSchema.ProgressNotificationParams, {
        progressToken: 42,
        progress: 50,
        total: 100,
        message: "Halfway"
      })
    })

    it("cancelled: requestId is optional (2025-11-25) and a reason may be given", () => {
      expectRoundTrip(McpSchema.CancelledNotificationParams, { requestId: 3, reason: "User requested" })
      expectRoundTrip(McpSchema.CancelledNotificationParams, {})
    })

    it("EmptyResult keeps whatever the server sent", () => {
      expectRoundTrip(McpSchema.EmptyResult, {})
      expectRoundTrip(McpSchema.EmptyResult, { _meta: { a: 1 }, extra: true })
    })

    it("paginated request params", () => {
      expectRoundTrip(McpSchema.PaginatedRequestParams, { cursor: "c1" })
      expectRoundTrip(McpSchema.PaginatedRequestParams, {})
    })
  })

  describe("Method", () => {
    it("spells the wire names", () => {
      expect(McpSchema.Method.ToolsCall).toBe("tools/call")
      expect(McpSchema.Method.ToolsListChanged).toBe("notifications/tools/list_changed")
      expect(McpSchema.Method.ResourcesTemplatesList).toBe("resources/templates/list")
      expect(McpSchema.Method.LoggingSetLevel).toBe("logging/setLevel")
      expect(McpSchema.Method.LoggingMessage).toBe("notifications/message")
      expect(McpSchema.Method.CompletionComplete).toBe("completion/complete")
      expect(new Set(Object.values(McpSchema.Method)).size).toBe(Object.values(McpSchema.Method).length)
    })
  })

  describe("decodeServerNotification", () => {
    const decodeRight = (method: string, params: unknown) => {
      const result = McpSchema.decodeServerNotification(method, params)
      if (Either.isLeft(result)) {
        throw new Error(result.left.message)
      }
      return result.right
    }

    it("decodes the three list_changed notifications, with or without params", () => {
      for (
        const method of [
          McpSchema.Method.ToolsListChanged,
          McpSchema.Method.ResourcesListChanged,
          McpSchema.Method.PromptsListChanged
        ]
      ) {
        expect(decodeRight(method, undefined)).toEqual({ method })
        expect(decodeRight(method, { _meta: { seq: 1 } })).toEqual({ method, params: { _meta: { seq: 1 } } })
      }
    })

    it("decodes resources/updated", () => {
      const n = decodeRight("notifications/resources/updated", { uri: "file:///a.txt" })
      expect(McpSchema.isKnownServerNotification(n)).toBe(true)
      if (McpSchema.isKnownServerNotification(n) && n.method === "notifications/resources/updated") {
        expect(n.params.uri).toBe("file:///a.txt")
      }
    })

    it("decodes a log message", () => {
      const n = decodeRight("notifications/message", { level: "warning", logger: "db", data: "slow query" })
      expect(n).toEqual({
        method: "notifications/message",
        params: { level: "warning", logger: "db", data: "slow query" }
      })
    })

    it("decodes progress", () => {
      const n = decodeRight("notifications/progress", { progressToken: 1, progress: 3, total: 10, message: "3/10" })
      expect(Schema.is(McpSchema.ProgressNotification)(n)).toBe(true)
    })

    it("decodes cancelled", () => {
      const n = decodeRight("notifications/cancelled", { requestId: "req-1", reason: "timeout" })
      expect(Schema.is(McpSchema.CancelledNotification)(n)).toBe(true)
    })

    it("keeps unknown fields inside known notifications", () => {
      const params = { progressToken: "t", progress: 1, "x-eta": 5 }
      expect(decodeRight("notifications/progress", params)).toEqual({ method: "notifications/progress", params })
    })

    it("turns unknown methods into the generic variant, not an error", () => {
      const n = decodeRight("notifications/elicitation/complete", { elicitationId: "e1" })
      expect(n).toEqual({ method: "notifications/elicitation/complete", params: { elicitationId: "e1" } })
      expect(McpSchema.isKnownServerNotification(n)).toBe(false)
      expect(decodeRight("vendor/custom", undefined)).toEqual({ method: "vendor/custom" })
      expect(decodeRight("vendor/custom", [1, 2])).toEqual({ method: "vendor/custom", params: [1, 2] })
    })

    it("fails for a known method with malformed params, naming the field", () => {
      const result = McpSchema.decodeServerNotification("notifications/progress", { progress: 1 })
      expect(Either.isLeft(result)).toBe(true)
      if (Either.isLeft(result)) {
        expect(result.left.message).toContain("progressToken")
      }
      expect(Either.isLeft(McpSchema.decodeServerNotification("notifications/resources/updated", undefined)))
        .toBe(true)
    })
  })
})
