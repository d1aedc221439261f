/**
 * The operations of a connection besides tools: resources, prompts, completion, logging and
 * ping, each a request gated on the capability the server declared, in a span of its own.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type { CallToolOptions, McpClient } from "../../McpClient.js"
import * as McpSchema from "../../McpSchema.js"
import { traced } from "../traced.js"
import type { Feature, Gate } from "./capabilities.js"
import type { Lister } from "./pagination.js"

// The call's own answerer of the server's input requests (`CallToolOptions.onInput`).
type InputOption = Pick<CallToolOptions, "onInput">

/** What the operations are built from: a connection's request, its gate and its lister. */
export interface Parts {
  readonly request: McpClient["request"]
  readonly gate: Gate["gate"]
  readonly list: Lister
}

/** The operations of a connection besides tools. */
export type Operations = Pick<
  McpClient,
  | "listResources"
  | "listResourceTemplates"
  | "readResource"
  | "subscribeResource"
  | "unsubscribeResource"
  | "listPrompts"
  | "getPrompt"
  | "complete"
  | "setLoggingLevel"
  | "listTasks"
  | "ping"
>

/** The operations, from the connection's parts. */
export const makeOperations = ({ gate, list, request }: Parts): Operations => {
  const emptyRequest = (feature: Feature, action: string, method: string, params?: Record<string, unknown>) =>
    gate(feature, action, Effect.asVoid(request(method, params, McpSchema.EmptyResult)))
  return {
    listResources: traced("McpClient.listResources")(() =>
      list(
        "resources",
        "list resources",
        McpSchema.Method.ResourcesList,
        McpSchema.ListResourcesResult,
        (result) => result.resources
      )
    ),
    listResourceTemplates: traced("McpClient.listResourceTemplates")(() =>
      list(
        "resources",
        "list resource templates",
        McpSchema.Method.ResourcesTemplatesList,
        McpSchema.ListResourceTemplatesResult,
        (result) => result.resourceTemplates
      )
    ),
    readResource: traced("McpClient.readResource")((uri: string, options?: InputOption) =>
      gate(
        "resources",
        "read resources",
        request(McpSchema.Method.ResourcesRead, { uri }, McpSchema.ReadResourceResult, options)
      )
    ),
    subscribeResource: traced("McpClient.subscribeResource")((uri: string) =>
      emptyRequest("resources.subscribe", "subscribe to resources", McpSchema.Method.ResourcesSubscribe, { uri })
    ),
    unsubscribeResource: traced("McpClient.unsubscribeResource")((uri: string) =>
      emptyRequest("resources.subscribe", "unsubscribe from resources", McpSchema.Method.ResourcesUnsubscribe, {
        uri
      })
    ),
    listPrompts: traced("McpClient.listPrompts")(() =>
      list(
        "prompts",
        "list prompts",
        McpSchema.Method.PromptsList,
        McpSchema.ListPromptsResult,
        (result) => result.prompts
      )
    ),
    getPrompt: traced("McpClient.getPrompt")((
      name: string,
      args?: Readonly<Record<string, string>>,
      options?: InputOption
    ) =>
      gate(
        "prompts",
        "get prompts",
        request(
          McpSchema.Method.PromptsGet,
          args === undefined ? { name } : { name, arguments: args },
          McpSchema.GetPromptResult,
          options
        )
      )
    ),
    complete: traced("McpClient.complete")((ref, argument, context) =>
      gate(
        "completions",
        "complete arguments",
        request(
          McpSchema.Method.CompletionComplete,
          context === undefined ? { ref, argument } : { ref, argument, context },
          McpSchema.CompleteResult
        )
      )
    ),
    setLoggingLevel: traced("McpClient.setLoggingLevel")((level: McpSchema.LoggingLevel) =>
      emptyRequest("logging", "set the logging level", McpSchema.Method.LoggingSetLevel, { level })
    ),
    listTasks: traced("McpClient.listTasks")(() =>
      list("tasks.list", "list tasks", McpSchema.Method.TasksList, McpSchema.ListTasksResult, (result) => result.tasks)
    ),
    ping: traced("McpClient.ping")(() =>
      Effect.asVoid(request(McpSchema.Method.Ping, undefined, McpSchema.EmptyResult))
    )
  }
}
