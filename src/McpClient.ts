/**
 * One connection to one MCP server: the revision chosen (a `server/discover` probe for the
 * modern 2026-07-28 revision, the initialize handshake for the legacy ones), calls gated on
 * the capabilities the server declared, complete (bounded) pagination, and tool results
 * checked against the tool's outputSchema. On a 2026-07-28 connection every request carries
 * the revision, our identity and capabilities (and the log level) in its `_meta`.
 *
 * Host features (`Host`) are declared only when their service is in the connection's context
 * and not turned off (`Options.host`); a request's own `_meta` capabilities narrow the
 * connection's. A modern server's log messages belong to the request that named a level: a call
 * tells its own to `CallToolOptions.onLog` as they come, all before its result. A server's
 * requests tied to a call (an input round, a task's input, a request on the call's POST stream)
 * go to the call's `onInput` when it has one. It never reconnects, and never sends a request
 * twice: the fleet above decides.
 *
 * What differs between the two revision families is one seam, chosen once per connection
 * after the handshake (`internal/mcpClient/era.ts`, implemented by `legacy.ts` and
 * `modern.ts`); `make` composes the connection from small constructors and never asks
 * which revision it speaks.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import type * as Queue from "effect/Queue"
import type * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as Host from "./Host.js"
import { makeGate } from "./internal/mcpClient/capabilities.js"
import { connect, watch } from "./internal/mcpClient/connection.js"
import { chooseEra } from "./internal/mcpClient/era.js"
import { negotiate } from "./internal/mcpClient/handshake.js"
import { listen, type Subscription as ListenSubscription } from "./internal/mcpClient/listen.js"
import { makeLister } from "./internal/mcpClient/pagination.js"
import { makeSkills } from "./internal/mcpClient/skills.js"
import { makeTools } from "./internal/mcpClient/tools.js"
import type * as JsonRpc from "./JsonRpc.js"
import type * as McpError from "./McpError.js"
import * as McpSchema from "./McpSchema.js"
import type * as Peer from "./Peer.js"
import type { Transport } from "./Transport.js"

/**
 * Options of a connection.
 *
 * @since 0.1.0
 */
export interface Options {
  /** Who we are, sent in initialize or in every request's `_meta`. Default: mcp-fleet. */
  readonly clientInfo?: McpSchema.Implementation | undefined
  /**
   * The revision to speak. Default: chosen by itself — a `server/discover` probe asking for
   * 2026-07-28, and initialize (asking for 2025-11-25) when the server turns out to predate
   * it. A legacy revision (2025-11-25 and earlier) skips the probe and initializes; a
   * modern one (2026-07-28) is the only one tried, with no fallback.
   */
  readonly protocolVersion?: McpSchema.Revision | undefined
  /**
   * How long the server may leave the `server/discover` probe unanswered before a `ping`
   * asks whether it is alive: a server that answers the ping but not the probe (sent first)
   * is taken for one of an earlier revision; one merely slow (still starting on a busy
   * machine) answers the probe first and is spoken 2026-07-28 to. Default: 5 s.
   */
  readonly discoverTimeout?: Duration.DurationInput | undefined
  /**
   * Capabilities to declare beyond those of the host services (see `host`); their handlers
   * go in `handlers`. Default: none.
   */
  readonly capabilities?: McpSchema.ClientCapabilities | undefined
  /** Handlers for requests the server sends (ping is answered by default); they override the host services'. */
  readonly handlers?: Peer.Options["handlers"]
  /**
   * The host features to offer: each of `Host.Sampling`, `Host.Elicitation` and `Host.Roots`
   * found in context is declared and answers the server, unless turned off here.
   */
  readonly host?: Host.Features | undefined
  /** The default timeout of a request. Default: 60 s. */
  readonly requestTimeout?: Duration.DurationInput | undefined
  /** How long the server may take to answer initialize. Default: 30 s. */
  readonly initializeTimeout?: Duration.DurationInput | undefined
  /** The most pages one list may have. Default: 100. */
  readonly maxPages?: number | undefined
  /** The most items one list may have. Default: 100,000. */
  readonly maxItems?: number | undefined
  /** Called once, synchronously, when the connection ends (see `Peer.Options.onClosed`). */
  readonly onClosed?: Peer.Options["onClosed"]
  /**
   * Declare the tasks extension (`io.modelcontextprotocol/tasks`), so a server of 2026-07-28
   * may answer a tool call with a task, which the call then follows. Declared on 2026-07-28
   * connections only (the revisions before it have tasks of their own). Default: true.
   */
  readonly tasksExtension?: boolean | undefined
  /**
   * The log level a 2026-07-28 connection asks for in every request's `_meta` until
   * `setLoggingLevel` changes it: the server sends log messages only while it serves a
   * request that names one. Legacy revisions ignore it (their server logs by its own
   * default until `setLoggingLevel`). Default: none.
   */
  readonly logLevel?: McpSchema.LoggingLevel | undefined
}

/**
 * Options of one tool call.
 *
 * @since 0.1.0
 */
export interface CallToolOptions extends Peer.RequestOptions {
  /** `_meta` to send with the call. */
  readonly meta?: Record<string, unknown> | undefined
  /**
   * Run the call as a task (2025-11-25) when the server supports task-augmented tool calls.
   * Default: only for a tool whose `execution.taskSupport` is `required`.
   */
  readonly task?: boolean | undefined
  /**
   * Told every status of the task the call became, when it runs as one: created, polled,
   * notified by the server, cancelled.
   */
  readonly onTask?: ((task: McpSchema.Task) => Effect.Effect<void>) | undefined
  /**
   * The progress token a call that runs as a task (2025-11-25) is sent with when it has
   * `onProgress`. Default: one of the connection's own. The token stays valid for the task's
   * life: given to `followTask`, it takes the task's progress up again on another connection.
   */
  readonly progressToken?: string | undefined
  /**
   * Told the log messages a 2026-07-28 server sends while it serves the call (it sends them
   * for requests that name a level: `Options.logLevel`), in order, before the call's result
   * or failure. They still go to `notifications` too. Legacy revisions' log messages
   * belong to no call: there, only `notifications` has them.
   */
  readonly onLog?: ((message: McpSchema.LoggingMessageNotificationParams) => Effect.Effect<void>) | undefined
  /**
   * Answers the server's requests that belong to this call instead of the connection's
   * handlers (the host services): the input requests of its `InputRequiredResult`s and of
   * its task (2026-07-28, each with its key), the requests that name its task in their
   * `_meta` (2025-11-25 `io.modelcontextprotocol/related-task`), and a legacy server's
   * requests sent on the event stream of the call's own POST (Streamable HTTP). A request
   * that names no call and comes with none (stdio, HTTP+SSE or WebSocket outside a task, a
   * Streamable HTTP server's standing GET stream) still goes to the connection's handlers.
   * Asked only for the kinds the connection declared. Kept when a lost task is followed again.
   */
  readonly onInput?: ((input: CallInput) => Effect.Effect<Record<string, unknown>, Peer.HandlerError>) | undefined
}

/**
 * Options of `McpClient.followTask`: a call's `onTask`, `onInput`, `onProgress` and
 * `progressToken`, and the tool the task is a call of (its result checked against the
 * tool's outputSchema).
 *
 * @since 0.3.0
 */
export interface FollowTaskOptions
  extends Pick<CallToolOptions, "onTask" | "onInput" | "onProgress" | "progressToken">
{
  readonly tool?: string | undefined
}

/**
 * Options of a request: the Peer's, and the `onInput` of the call it is (see
 * `CallToolOptions.onInput`), for the requests that may ask input (resources/read, prompts/get).
 *
 * @since 0.3.0
 */
export interface RequestOptions extends Peer.RequestOptions, Pick<CallToolOptions, "onInput"> {}

/**
 * A server's request that belongs to one call, as its `CallToolOptions.onInput` is given it.
 *
 * @since 0.3.0
 */
export interface CallInput {
  /** `sampling/createMessage`, `elicitation/create` or `roots/list`. */
  readonly method: string
  readonly params: Record<string, unknown>
  /** The key the server asked under (2026-07-28); absent for a request it sent. */
  readonly key?: string | undefined
}

/**
 * An open `subscriptions/listen` stream (2026-07-28): what the server agreed to send (the
 * part of the filter it acknowledged) and the notifications it sends on the stream.
 *
 * @since 0.3.0
 */
export interface Subscription extends ListenSubscription {}

/**
 * A skill loaded (SEP-2640): its entry, its `SKILL.md` verified (size, digest, frontmatter)
 * as text, and its other files, listed but not read (`readSkillFile` reads one, verified).
 *
 * @since 0.4.0
 */
export interface LoadedSkill {
  readonly skill: McpSchema.Skill
  /** The whole `SKILL.md`, frontmatter included. */
  readonly text: string
  /** The manifest's other files, or `"dynamic"` when the server publishes none. */
  readonly files: ReadonlyArray<McpSchema.SkillFile> | "dynamic"
}

/**
 * One file of a skill, read and verified against the skill's manifest.
 *
 * @since 0.4.0
 */
export interface SkillFileContent {
  readonly uri: string
  /** The raw bytes the digest and size were checked on. */
  readonly bytes: Uint8Array
  /** The bytes as UTF-8 text (a text content as the server sent it). */
  readonly text: string
  readonly mimeType: string | undefined
}

/**
 * A reference to complete an argument of: a prompt, or a resource template.
 *
 * @since 0.1.0
 */
export type CompletionRef = McpSchema.PromptReference | McpSchema.ResourceTemplateReference

/**
 * An open, initialized connection to one server.
 *
 * @since 0.1.0
 */
export interface McpClient {
  /** The server's name (from the transport). */
  readonly server: string
  /** The revision both sides agreed on (2026-07-28, modern: no session, no initialize). */
  readonly protocolVersion: McpSchema.Revision
  readonly serverInfo: McpSchema.Implementation
  readonly capabilities: McpSchema.ServerCapabilities
  readonly instructions: string | undefined
  /** All tools, every page. */
  readonly listTools: () => Effect.Effect<ReadonlyArray<McpSchema.Tool>, McpError.McpError>
  /**
   * Calls a tool. A result with `isError: true` is a value, not a failure. Structured
   * content is checked against the tool's outputSchema. Progress resets the timeout
   * unless `resetTimeoutOnProgress: false`.
   */
  readonly callTool: (
    name: string,
    args?: Record<string, unknown> | undefined,
    options?: CallToolOptions | undefined
  ) => Effect.Effect<McpSchema.CallToolResult, McpError.McpError>
  readonly listResources: () => Effect.Effect<ReadonlyArray<McpSchema.Resource>, McpError.McpError>
  readonly listResourceTemplates: () => Effect.Effect<ReadonlyArray<McpSchema.ResourceTemplate>, McpError.McpError>
  /** Reads a resource; `onInput` answers the input the server asks for it (see `CallToolOptions.onInput`). */
  readonly readResource: (
    uri: string,
    options?: Pick<CallToolOptions, "onInput"> | undefined
  ) => Effect.Effect<McpSchema.ReadResourceResult, McpError.McpError>
  readonly subscribeResource: (uri: string) => Effect.Effect<void, McpError.McpError>
  readonly unsubscribeResource: (uri: string) => Effect.Effect<void, McpError.McpError>
  readonly listPrompts: () => Effect.Effect<ReadonlyArray<McpSchema.Prompt>, McpError.McpError>
  /** Gets a prompt; `onInput` answers the input the server asks for it (see `CallToolOptions.onInput`). */
  readonly getPrompt: (
    name: string,
    args?: Readonly<Record<string, string>> | undefined,
    options?: Pick<CallToolOptions, "onInput"> | undefined
  ) => Effect.Effect<McpSchema.GetPromptResult, McpError.McpError>
  readonly complete: (
    ref: CompletionRef,
    argument: { readonly name: string; readonly value: string },
    context?: { readonly arguments?: Readonly<Record<string, string>> } | undefined
  ) => Effect.Effect<McpSchema.CompleteResult, McpError.McpError>
  /**
   * The least severe log level the server should send. On a 2026-07-28 connection it is
   * carried by every later request's `_meta` instead of `logging/setLevel`.
   */
  readonly setLoggingLevel: (level: McpSchema.LoggingLevel) => Effect.Effect<void, McpError.McpError>
  /**
   * Takes up a task by its id (one a tool call was told of through `onTask`, on this
   * connection or an earlier one) and gives the result of the tool call it was made of: the
   * tasks extension's `tasks/get` on a 2026-07-28 connection, `tasks/get` and `tasks/result`
   * (2025-11-25) on the others. A server that does not know the task fails its first
   * `tasks/get`. Interrupting it cancels the task. With `tool` (the tool it is a call of),
   * the result is checked against that tool's outputSchema, as a call's is. `onInput`
   * answers the task's input requests, as a call's. `onProgress` is told the task's progress
   * (2025-11-25): what the server sends with `progressToken` (the token of the call that made
   * the task) or ties to the task in its `_meta`; the tasks extension sends no progress for
   * a task (its `statusMessage` reaches `onTask`).
   */
  readonly followTask: (
    taskId: string,
    options?: FollowTaskOptions | undefined
  ) => Effect.Effect<McpSchema.CallToolResult, McpError.McpError>
  /** The server's tasks (2025-11-25), every page; needs its `tasks.list` capability. */
  readonly listTasks: () => Effect.Effect<ReadonlyArray<McpSchema.Task>, McpError.McpError>
  /**
   * The server's skills (the skills extension, SEP-2640), every page: their entries only,
   * no file read. Unsupported unless the server declared the extension.
   */
  readonly listSkills: () => Effect.Effect<ReadonlyArray<McpSchema.Skill>, McpError.McpError>
  /** One skill's entry by the URI of its `SKILL.md` (`skills/get`); an unknown one fails (-32602). */
  readonly getSkill: (uri: string) => Effect.Effect<McpSchema.Skill, McpError.McpError>
  /**
   * Loads a skill (its entry, or the URI of its `SKILL.md`, whose entry is got first): reads
   * its `SKILL.md` and checks it against the entry, its size, its digest and its frontmatter
   * (parsed, compared field by field). Any mismatch fails with a Validation reason and
   * nothing of the content is given. No other file is read.
   */
  readonly loadSkill: (skill: McpSchema.Skill | string) => Effect.Effect<LoadedSkill, McpError.McpError>
  /**
   * Reads one file of a skill, checked against the manifest entry of its URI (size, digest);
   * a URI the manifest does not list fails, as does a mismatch (Validation).
   */
  readonly readSkillFile: (
    skill: McpSchema.Skill,
    uri: string
  ) => Effect.Effect<SkillFileContent, McpError.McpError>
  /** Whether the server answers: `ping`, or `server/discover` on a 2026-07-28 connection (which has no ping). */
  readonly ping: () => Effect.Effect<void, McpError.McpError>
  /**
   * The server's notifications (list_changed, resources/updated, log messages, progress, ...).
   * On a 2026-07-28 connection, as on a legacy one: while it runs, a `subscriptions/listen`
   * stream for the lists the server says change is held (see `subscribe`).
   */
  readonly notifications: Stream.Stream<McpSchema.ServerNotification>
  /**
   * Subscribes at once, so nothing sent after this returns is missed, and gives the
   * notifications as received. The subscription ends with the Scope. On a 2026-07-28
   * connection the server tells list changes only on a listen stream: one is held for the
   * lists it says change while anyone subscribes (opened by the first, re-opened when it
   * drops, cancelled when the last goes), this returns once it is acknowledged, and what
   * comes is what a legacy connection would get (no acknowledgments, no stream ids).
   */
  readonly subscribe: Effect.Effect<Queue.Dequeue<JsonRpc.Notification>, never, Scope.Scope>
  /**
   * Opens a `subscriptions/listen` stream (2026-07-28) for the life of the Scope, once the
   * server acknowledged it. It is sent again with a new id whenever it ends while the
   * connection runs; the Scope's end cancels it.
   */
  readonly listen: (filter: McpSchema.SubscriptionFilter) => Effect.Effect<Subscription, McpError.McpError, Scope.Scope>
  /**
   * Sends any request; the result is checked against `schema`. On a 2026-07-28 connection
   * the request carries our `_meta`, a list page or read is answered from the cache while its
   * `ttlMs` lasts (a change notification ends that at once), and the result comes without
   * the revision's envelope (`resultType`, the server's identity in `_meta`, cache hints), as
   * do those of every other operation.
   */
  readonly request: <A, I>(
    method: string,
    params: Record<string, unknown> | undefined,
    schema: Schema.Schema<A, I>,
    options?: RequestOptions | undefined
  ) => Effect.Effect<A, McpError.McpError>
  /** Waits until the connection ends and returns why. */
  readonly closed: Effect.Effect<McpError.McpError>
}

/**
 * The McpClient service tag, for programs that work with one server.
 *
 * @since 0.1.0
 */
export const McpClient = Context.GenericTag<McpClient>("mcp-fleet/McpClient")

/**
 * Connects over the Transport in context and agrees on a revision (see
 * `Options.protocolVersion`): `server/discover` for a 2026-07-28 server, else initialize and
 * notifications/initialized. The connection ends with the Scope. The host services in context
 * (`Host.Sampling`, `Host.Elicitation`, `Host.Roots`) are declared and answer the server's
 * requests; a change of the roots is told to a server of a legacy revision.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options = {}): Effect.Effect<McpClient, McpError.McpError, Transport | Scope.Scope> =>
  Effect.gen(function*() {
    const connection = yield* connect(options)
    const { peer, server } = connection
    const agreed = yield* negotiate(peer, connection.hello)
    connection.agreed.protocolVersion = agreed.protocolVersion
    // Chosen once: nothing below asks which revision the connection speaks. (The tools, made
    // below, are listed again by a modern era after a HeaderMismatch.)
    const era = yield* chooseEra(connection, agreed, Effect.suspend(() => tools.listTools()))
    const { gate, supported } = makeGate(server, agreed.capabilities, agreed.protocolVersion)
    const request = era.request
    const limits = { maxPages: options.maxPages ?? 100, maxItems: options.maxItems ?? 100_000 }
    const list = makeLister(server, limits, request, gate)
    const tools = makeTools(connection, era, supported, list)
    yield* watch(connection, tools.outputs.forget)
    return {
      server,
      protocolVersion: agreed.protocolVersion,
      serverInfo: agreed.serverInfo,
      capabilities: agreed.capabilities,
      instructions: agreed.instructions,
      listTools: tools.listTools,
      callTool: tools.callTool,
      followTask: tools.followTask,
      ...era.operations({ request, gate, list }),
      ...makeSkills(server, { request, gate, list }),
      notifications: era.notifications.pipe(
        Stream.filterMap((notification) =>
          Either.getRight(McpSchema.decodeServerNotification(notification.method, notification.params))
        )
      ),
      subscribe: era.subscribe,
      listen: (filter) => listen(era.wire, filter, connection.requestTimeout),
      request,
      closed: peer.closed
    } satisfies McpClient
  })

/**
 * A layer providing an McpClient over the Transport it is given.
 *
 * @since 0.1.0
 */
export const layer = (options: Options = {}): Layer.Layer<McpClient, McpError.McpError, Transport> =>
  Layer.scoped(McpClient, make(options))
