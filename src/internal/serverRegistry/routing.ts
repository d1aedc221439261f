/**
 * Routing calls to the server they are for: by server name, or by a tool's qualified name
 * through the catalog. A call waiting on an actor that a reconcile replaced goes on
 * waiting on its successor. A per-principal server's calls, tasks followed, reads, prompts
 * and completions go to the caller's own instance (`principals.ts`), and fail without a principal.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Catalog from "../../Catalog.js"
import type * as McpClient from "../../McpClient.js"
import * as McpError from "../../McpError.js"
import type * as McpSchema from "../../McpSchema.js"
import type { CallToolOptions, ServerRegistry } from "../../ServerRegistry.js"
import * as ToolPins from "../../ToolPins.js"
import { traced } from "../traced.js"
import * as Deadline from "./deadline.js"
import type { Principals } from "./principals.js"
import * as RetryRule from "./retryRule.js"
import type { ServerActor } from "./serverActor.js"
import * as TaskCalls from "./taskCalls.js"

// The fleet's own onTask and the caller's.
const both = (
  own: (task: McpSchema.Task) => Effect.Effect<void>,
  caller: ((task: McpSchema.Task) => Effect.Effect<void>) | undefined
) => caller === undefined ? own : (task: McpSchema.Task) => Effect.zipRight(own(task), caller(task))

// The caller's onLog, told the call's log messages with the server's secrets masked, as its
// LogMessage events are.
const maskedLogs = <O extends { readonly onLog?: McpClient.CallToolOptions["onLog"] }>(
  actor: ServerActor,
  options: O | undefined
): O | undefined => {
  const onLog = options?.onLog
  return onLog === undefined
    ? options
    : { ...options!, onLog: (message) => onLog({ ...message, data: actor.masked(message.data) }) }
}

// A tool call on `client`: as a task when its server may make one (its statuses told to the
// server's task table and to the caller; the total limit bounds all its requests), else as
// one request.
const callOn = (
  routeOf: (actor: ServerActor) => TaskCalls.Route,
  actor: ServerActor,
  client: McpClient.McpClient,
  call: {
    readonly tool: string
    readonly args: Record<string, unknown> | undefined
    readonly options: CallToolOptions | undefined
    readonly deadline: Deadline.CallDeadline
  }
): Effect.Effect<McpSchema.CallToolResult, McpError.McpError> => {
  const { args, deadline, options, tool } = call
  return TaskCalls.mayRunTasks(client)
    ? Deadline.bounded(
      deadline,
      actor.tasks.track(
        tool,
        (onTask) => TaskCalls.call(routeOf(actor), client, tool, args, options, deadline, both(onTask, options?.onTask))
      )
    )
    : Deadline.send(deadline, options, (sent) => client.callTool(tool, args, sent))
}

// A call of `tool` judged by the crash rule, on the tool as its server lists it.
const judged = <A>(actor: ServerActor, tool: string, call: Effect.Effect<A, McpError.McpError>) =>
  RetryRule.applied(actor.name, tool, () => actor.lists().tools.find((listed) => listed.name === tool), call)

// Runs `f` with a ready connection of the actor, within the call's limits.
type Via = <A>(
  f: (client: McpClient.McpClient) => Effect.Effect<A, McpError.McpError>,
  deadline: Deadline.CallDeadline,
  stateful?: boolean | undefined
) => Effect.Effect<A, McpError.McpError>

// One tool call on `actor`, reached `via`: its limits decided here, once (`deadline.ts`); a
// crash mid-call judged by `retryRule.ts`; a call that runs as a task shows in its server's
// status and events and outlives its connection (`taskCalls.ts`), and a server that runs no
// tool calls as tasks costs its calls nothing more.
const callActor = (
  routeOf: (actor: ServerActor) => TaskCalls.Route,
  actor: ServerActor,
  via: Via,
  call: { readonly tool: string; readonly args: Record<string, unknown> | undefined },
  given: CallToolOptions | undefined
) => {
  const options = maskedLogs(actor, given)
  const { args, tool } = call
  return Deadline.decided(
    options,
    actor.spec,
    (deadline) =>
      judged(
        actor,
        tool,
        via((client) => callOn(routeOf, actor, client, { tool, args, options, deadline }), deadline, options?.stateful)
      )
        .pipe(Effect.map(actor.tokensMasked))
  )
}

/**
 * The routes of a registry whose running actors are `actors`.
 */
export interface Routing extends
  Pick<
    ServerRegistry,
    "withClient" | "callTool" | "callServerTool" | "followTask" | "readResource" | "getPrompt" | "complete"
  >
{
  /** The actor of that server; an unknown name fails with the closest names. */
  readonly actorOf: (server: string) => Effect.Effect<ServerActor, McpError.McpError>
}

// The actor of a server; an unknown name is no server of the fleet, so the error names none.
const actorIn = (actors: ReadonlyMap<string, ServerActor>) => (name: string) =>
  Effect.suspend(() => {
    const actor = actors.get(name)
    return actor !== undefined
      ? Effect.succeed(actor)
      : Effect.fail(McpError.notFound(
        undefined,
        { what: "server", name, suggestions: Catalog.suggest(name, actors.keys()) }
      ))
  })

/**
 * Makes the routes over `actors` (which the registry keeps current) and `catalog`;
 * `background` runs what outlives a call (a task's cancellation) in the registry's Scope;
 * `instanceOf` gives a per-principal server's instance for a principal.
 */
export const make = (
  actors: ReadonlyMap<string, ServerActor>,
  catalog: SubscriptionRef.SubscriptionRef<Catalog.Catalog>,
  drifted: Effect.Effect<ReadonlyArray<ToolPins.Drift>>,
  background: TaskCalls.Route["background"],
  instanceOf: Principals["instanceOf"]
): Routing => {
  const actorOf = actorIn(actors)

  // Stopped means the call was never sent, so going on with the successor runs nothing twice;
  // it waits within what is left of the same limits.
  const onActor = <A>(
    server: string,
    actor: ServerActor,
    f: (client: McpClient.McpClient) => Effect.Effect<A, McpError.McpError>,
    deadline: Deadline.CallDeadline,
    stateful?: boolean | undefined
  ): Effect.Effect<A, McpError.McpError> =>
    actor.withClient(f, deadline, stateful).pipe(
      Effect.catchIf(
        (error) =>
          error.reason._tag === "Unavailable" && error.reason.state === "Stopped" && actors.has(server) &&
          actors.get(server) !== actor,
        () => Effect.flatMap(actorOf(server), (next) => onActor(server, next, f, deadline, stateful))
      )
    )

  // The server's own actor, a per-principal server's template too: what wakes a lazy server.
  const withServer: Routing["withClient"] = (server, f, callOptions) =>
    Effect.flatMap(
      actorOf(server),
      (actor) => Deadline.decided(callOptions, actor.spec, (deadline) => onActor(server, actor, f, deadline))
    )

  // A principal's instance has no successor to go on to.
  const via = (actor: ServerActor): Via =>
    actor.spec.principal !== undefined
      ? actor.withClient
      : (f, deadline, stateful) => onActor(actor.name, actor, f, deadline, stateful)

  const routeOf = (actor: ServerActor): TaskCalls.Route => ({
    server: actor.name,
    stdio: actor.spec.transport.type === "stdio",
    state: () => actor.now()._tag,
    client: actor.client,
    background,
    withClient: via(actor)
  })

  // Runs `f` on the actor a request of `principal` goes to: a per-principal server's is the
  // caller's own instance (any other server's request pays nothing more for it).
  const onOwn = <A>(
    server: string,
    principal: string | undefined,
    f: (actor: ServerActor) => Effect.Effect<A, McpError.McpError>
  ) =>
    Effect.flatMap(
      actorOf(server),
      (actor) => actor.spec.perPrincipal === true ? Effect.flatMap(instanceOf(actor, principal), f) : f(actor)
    )

  // A ready connection of the caller's own actor of `server` (`CallOptions.principal`).
  const withOwnClient: Routing["withClient"] = (server, f, options) =>
    onOwn(
      server,
      options?.principal,
      (actor) => Deadline.decided(options, actor.spec, (deadline) => via(actor)(f, deadline))
    )

  const callServerTool: Routing["callServerTool"] = (server, tool, args, given) =>
    onOwn(server, given?.principal, (own) => callActor(routeOf, own, via(own), { tool, args }, given))

  const followTask: Routing["followTask"] = traced("ServerRegistry.followTask")((server, taskId, callOptions) =>
    onOwn(server, callOptions?.principal, (actor) =>
      Deadline.decided(
        callOptions,
        actor.spec,
        (deadline) => TaskCalls.resume(routeOf(actor), taskId, undefined, callOptions, deadline)
      ))
  )

  // An unknown name belongs to no server (the error names none; a quarantined tool's says how to
  // approve it), unless its prefix names a server not listed yet: a lazy one is started first.
  const route = (
    name: string,
    args: Record<string, unknown> | undefined,
    callOptions: CallToolOptions | undefined,
    wake: boolean
  ): Effect.Effect<McpSchema.CallToolResult, McpError.McpError> =>
    Effect.flatMap(SubscriptionRef.get(catalog), (current) => {
      const entry = Catalog.findTool(current, name)
      if (entry !== undefined) return callServerTool(entry.server, entry.tool.name, args, callOptions)
      const owner = ownerOf(actors, name)
      if (wake && unlisted(owner)) {
        return Effect.zipRight(
          withServer(owner!.name, () => Effect.void, callOptions),
          route(name, args, callOptions, false)
        )
      }
      const state = owner?.now()._tag
      if (state === "Pending" || state === "Connecting") return Effect.fail(stillConnecting(owner!.name, name))
      return Effect.flatMap(
        drifted,
        (drifts) => Effect.fail(ToolPins.missingTool(drifts, name, current.toolsByName.keys()))
      )
    })

  const callTool: Routing["callTool"] = traced("ServerRegistry.callTool")((name, args, o) => route(name, args, o, true))

  return {
    actorOf,
    withClient: withOwnClient,
    callTool,
    callServerTool,
    followTask,
    ...reads(actorOf, withOwnClient)
  }
}

// Reads, prompts and completions, at the caller's own actor as calls are. A prompt the server
// does not list fails here, with the names it does list.
const reads = (
  actorOf: Routing["actorOf"],
  withOwnClient: Routing["withClient"]
): Pick<Routing, "readResource" | "getPrompt" | "complete"> => ({
  readResource: traced("ServerRegistry.readResource")((server, uri, options) =>
    withOwnClient(server, (client) => client.readResource(uri, options), options)
  ),
  getPrompt: traced("ServerRegistry.getPrompt")((server, name, args, options) =>
    Effect.flatMap(actorOf(server), (actor) => {
      const known = actor.lists().prompts.map((prompt) => prompt.name)
      return known.length > 0 && !known.includes(name)
        ? Effect.fail(McpError.notFound(server, { what: "prompt", name, suggestions: Catalog.suggest(name, known) }))
        : withOwnClient(server, (client) => client.getPrompt(name, args, options), options)
    })
  ),
  complete: traced("ServerRegistry.complete")((server, ref, argument, context, options) =>
    withOwnClient(server, (client) => client.complete(ref, argument, context), options)
  )
})

// The server whose qualified prefix `name` has (the longest).
const ownerOf = (actors: ReadonlyMap<string, ServerActor>, name: string) =>
  [...actors.values()]
    .filter((actor) => name.startsWith(Catalog.qualify(actor.name, "")))
    .sort((a, b) => b.name.length - a.name.length)[0]

// A lazy server listed by name only (nothing cached, or its fill failed): its tools are
// known once it has started.
const unlisted = (owner: ServerActor | undefined) =>
  owner?.spec.lazy === true && ["Idle", "Pending"].includes(owner.now()._tag) &&
  owner.lists().tools.length === 0

const stillConnecting = (server: string, name: string) =>
  McpError.unavailable(server, {
    state: "Connecting",
    message: `is still connecting: its tools are not listed yet, so '${name}' cannot be called yet`
  })
