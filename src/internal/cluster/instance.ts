/**
 * Per-principal instances on a cluster (`perPrincipal: true`): each (server, principal) is an
 * entity of its own type, `McpFleetInstance`, with the server entity's messages, placed on any
 * runner like a server and, unlike one, stopped when idle. Its id is the server's name, `#`,
 * and the principal in base64url: split at the last `#` (base64url has none), so no two pairs
 * share an id, and a type of its own keeps ids apart from server names.
 *
 * On its first message the runner makes the instance as one process does: the principal's
 * credentials from the token store added to the server's spec as secrets, run by a registry of
 * its own (one server). A call is claimed as a server's is. Calls, tasks followed, reads,
 * prompts and completions come here, as in one process; the catalog stays the server's own.
 * The instance's row in `mcp_fleet_instances` tells every replica where it runs and in which
 * state.
 *
 * @since 0.3.0
 */
import * as Entity from "@effect/cluster/Entity"
import type * as Sharding from "@effect/cluster/Sharding"
import type * as SqlClient from "@effect/sql/SqlClient"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Encoding from "effect/Encoding"
import * as Exit from "effect/Exit"
import type * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as McpError from "../../McpError.js"
import * as ServerRegistry from "../../ServerRegistry.js"
import * as ServerSpec from "../../ServerSpec.js"
import { ServerEntity } from "./entity.js"
import * as Host from "./host.js"
import * as Store from "./store.js"

/**
 * The per-principal instance entity type: the server entity's messages.
 *
 * @since 0.3.0
 */
export const InstanceEntity = Entity.fromRpcGroup("McpFleetInstance", ServerEntity.protocol)

/** The entity id of `principal`'s instance of `server`. */
export const instanceId = (server: string, principal: string): string =>
  `${server}#${Encoding.encodeBase64Url(principal)}`

/** The server and principal an instance's entity id names. */
export const parseInstanceId = (id: string): { readonly server: string; readonly principal: string } => {
  const at = id.lastIndexOf("#")
  return {
    server: id.slice(0, at),
    principal: Either.getOrElse(Encoding.decodeBase64UrlString(id.slice(at + 1)), () => "")
  }
}

/** The token store in `mcp_fleet_credentials`, read by any runner. */
export const storedCredentials: Effect.Effect<ServerRegistry.PrincipalCredentials, never, SqlClient.SqlClient> = Effect
  .map(
    Effect.context<SqlClient.SqlClient>(),
    (context) => (server, principal) =>
      Store.readCredentials(server, principal).pipe(
        Effect.mapError(() =>
          McpError.unavailable(server, { state: "NeedsAuth", message: "the token store could not be read" })
        ),
        Effect.provide(context)
      )
  )

interface Made {
  readonly digest: string
  readonly registry: ServerRegistry.ServerRegistry
  readonly scope: Scope.CloseableScope
}

const noCredentials = (server: string) =>
  McpError.unavailable(server, {
    state: "NeedsAuth",
    message: "has no credentials for this principal in the token store"
  })

const notPerPrincipal = (server: string, runner: string) =>
  McpError.config(server, { message: `runner ${runner} has no per-principal config for this server` })

/**
 * The instance entity's handlers on this runner; an instance stops after `maxIdleTime`
 * without messages (its process after the spec's `idleTimeout`, as in one process).
 */
export const layer = (
  hosting: Host.Hosting,
  maxIdleTime: Duration.DurationInput
): Layer.Layer<never, never, Sharding.Sharding | SqlClient.SqlClient> =>
  InstanceEntity.toLayer(
    Effect.gen(function*() {
      const id = (yield* Entity.CurrentAddress).entityId
      const { principal, server } = parseInstanceId(id)
      const lock = yield* Effect.makeSemaphore(1)
      const context = yield* Effect.context<SqlClient.SqlClient>()
      let made: Made | undefined
      const row = (state: string) =>
        Store.writeInstance(id, { server, principal, runner: hosting.runner, state }).pipe(
          Effect.zipRight(Store.notify(server)),
          Effect.ignoreLogged,
          Effect.provide(context)
        )
      const end = Effect.suspend(() => {
        const ending = made
        made = undefined
        return ending === undefined ? Effect.void : Scope.close(ending.scope, Exit.void)
      })
      yield* Effect.addFinalizer(() =>
        end.pipe(
          Effect.zipRight(Store.deleteInstance(id, hosting.runner)),
          Effect.zipRight(Store.notify(server)),
          Effect.ignoreLogged
        )
      )
      const start = (spec: ServerSpec.ServerSpec) =>
        Effect.gen(function*() {
          const own = yield* hosting.instances.credentials(server, principal)
          if (own === undefined) return yield* Effect.fail(noCredentials(server))
          const scope = yield* Scope.make()
          // The instance's spec is no template: its calls are its own.
          const registry = yield* hosting.instances.make({
            ...ServerRegistry.principalSpec(spec, principal, own),
            perPrincipal: undefined
          })
            .pipe(Scope.extend(scope))
          made = { digest: ServerSpec.hash(spec), registry, scope }
          yield* Effect.logInfo(`server '${server}': an instance started for a principal on ${hosting.runner}`)
          yield* registry.events.pipe(
            Stream.filter((event) => event._tag === "ServerStateChanged"),
            Stream.runForEach((event) => row(event.state._tag)),
            Effect.forkIn(scope)
          )
          yield* row((yield* registry.status)[0]?.state._tag ?? "Pending")
          return registry
        })
      // The instance of the server's current spec: made on first use, again once it changed.
      const instance = lock.withPermits(1)(Effect.suspend(() => {
        const spec = hosting.specs.get(server)
        if (spec?.perPrincipal !== true) {
          return Effect.zipRight(end, Effect.fail(notPerPrincipal(server, hosting.runner)))
        }
        if (made?.digest === ServerSpec.hash(spec)) return Effect.succeed(made.registry)
        return Effect.zipRight(end, start(spec))
      }))
      return Host.handlers(hosting, server, (f) => Effect.flatMap(instance, f))
    }),
    { maxIdleTime, concurrency: "unbounded", disableFatalDefects: true }
  )
