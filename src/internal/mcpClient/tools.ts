/**
 * A connection's tools: listed (every page, kept as the era accepts them, their
 * outputSchemas remembered), called, and a task of a call taken up again. Tool calls are the
 * hot path: the era's sender and whether the server has tools are decided once here, and a
 * call builds its params and options and nothing else before the era sends it.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type { CallToolOptions, McpClient } from "../../McpClient.js"
import type * as McpError from "../../McpError.js"
import * as McpSchema from "../../McpSchema.js"
import type * as Peer from "../../Peer.js"
import { traced } from "../traced.js"
import { type Gate, unsupported } from "./capabilities.js"
import type { Connection } from "./connection.js"
import { decode } from "./decode.js"
import type { Era } from "./era.js"
import type { Lister } from "./pagination.js"
import type { TaskOptions } from "./tasks.js"
import { makeOutputChecks, type OutputChecks } from "./toolResult.js"

/** A connection's tool operations, and the outputSchemas they check against. */
export interface Tools extends Pick<McpClient, "listTools" | "callTool" | "followTask"> {
  readonly outputs: OutputChecks
}

const resetOnProgress: Peer.RequestOptions = { resetTimeoutOnProgress: true }

// The most tool names whose plain-call options are kept (a fleet's servers have far fewer tools).
const MAX_CHECKED = 1024

/**
 * The tools of `connection`, spoken as `era` speaks, behind `supported`, listed by `list`.
 */
export const makeTools = (
  { scope, server }: Connection,
  era: Era,
  supported: Gate["supported"],
  list: Lister
): Tools => {
  const outputs = makeOutputChecks(server, scope, () => listTools())
  const listTools = traced("McpClient.listTools")(() =>
    list("tools", "list tools", McpSchema.Method.ToolsList, McpSchema.ListToolsResult, (result) => result.tools).pipe(
      Effect.flatMap(era.accepted),
      Effect.tap(outputs.remember)
    )
  )
  const toolsSupported = supported("tools")
  const send = era.sendCall(outputs.requiresTask)
  const plainCall = era.plainCall
  // A plain call's options by tool name, its result checked as it is read: no step after the
  // request, and nothing made per call.
  const checkedOptions = new Map<string, Peer.RequestOptions>()
  const checkedFor = (name: string): Peer.RequestOptions => {
    let options = checkedOptions.get(name)
    if (options === undefined) {
      if (checkedOptions.size >= MAX_CHECKED) checkedOptions.clear()
      options = { resetTimeoutOnProgress: true, onAnswer: (result) => outputs.check(name, result) }
      checkedOptions.set(name, options)
    }
    return options
  }
  // Whether the tool needs a task, and its outputSchema, are known once the tools are listed.
  const afterListed = <A>(effect: Effect.Effect<A, McpError.McpError>) =>
    outputs.listed() ? effect : Effect.zipRight(outputs.ensureListed, effect)
  const callTool = traced("McpClient.callTool")((
    name: string,
    args?: Record<string, unknown>,
    callOptions?: CallToolOptions
  ) => {
    if (!toolsSupported) return unsupported(server, "tools", "call tools")
    let params: Record<string, unknown> = { name, arguments: args ?? {} }
    if (callOptions === undefined && plainCall !== undefined) {
      return afterListed(
        plainCall(params, checkedFor(name)) as Effect.Effect<McpSchema.CallToolResult, McpError.McpError>
      )
    }
    let requestOptions: TaskOptions = resetOnProgress
    if (callOptions !== undefined) {
      // What the era reads of the options (task, onInput, onLog) is not the Peer's.
      const { meta, onInput: _input, onLog: _log, task: _task, ...rest } = callOptions
      if (meta !== undefined) params = { name, arguments: args ?? {}, _meta: meta }
      requestOptions = { resetTimeoutOnProgress: true, ...rest }
    }
    return afterListed(
      Effect.flatMap(send(name, params, requestOptions, callOptions), (result) => outputs.check(name, result))
    )
  })
  const followTask: McpClient["followTask"] = traced("McpClient.followTask")((taskId, options) => {
    const tool = options?.tool
    const followed = era.followTask(taskId, options)
    // Without the tool's name, no outputSchema to check against.
    return tool === undefined
      ? Effect.flatMap(
        followed,
        (result) => decode(server, McpSchema.Method.ToolsCall, McpSchema.CallToolResult, result)
      )
      : Effect.flatMap(followed, (result) => afterListed(outputs.check(tool, result)))
  })
  return { listTools, callTool, followTask, outputs }
}
