// The AI SDK's mock model (MockLanguageModelV3) scripted: its steps, tool calls and answers.
import type { MockLanguageModelV3 } from "ai/test"

/** One scripted step of the mock model. */
export type Step = Extract<
  NonNullable<ConstructorParameters<typeof MockLanguageModelV3>[0]>["doGenerate"],
  ReadonlyArray<unknown>
>[number]

export const usage: Step["usage"] = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined }
}

export const toolCalls = (...wanted: ReadonlyArray<[string, Record<string, unknown>]>): Step => ({
  content: wanted.map(([toolName, input], i) => ({
    type: "tool-call",
    toolCallId: `call-${i}`,
    toolName,
    input: JSON.stringify(input)
  })),
  finishReason: { unified: "tool-calls", raw: undefined },
  usage,
  warnings: []
})

export const answer = (text: string): Step => ({
  content: [{ type: "text", text }],
  finishReason: { unified: "stop", raw: undefined },
  usage,
  warnings: []
})
