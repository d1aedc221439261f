/**
 * A server: its two eras (`legacy.ts`, `modern.ts` when it answers modern requests), its
 * sessions, each a Peer over a Transport whose requests the eras answer, what it tells the
 * clients of both (list changes, resource updates, log messages), and its modern requests
 * answered with no session (`McpServer.answerModern`: `alone.ts`).
 *
 * List changes, updates and log messages reach modern listen streams too. A modern request with
 * no session at all is answered by `answerAlone` (`alone.ts`): what HTTP runs per sessionless
 * POST.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type * as McpSchema from "../../McpSchema.js"
import type { ListKind, McpServer, Options, Outbound } from "../../McpServer.js"
import * as Memory from "../../Memory.js"
import * as Peer from "../../Peer.js"
import { serverSessionDuration } from "../../Telemetry.js"
import { Transport } from "../../Transport.js"
import { sessionPoint } from "../telemetry.js"
import { traced } from "../traced.js"
import * as Alone from "./alone.js"
import type { Era } from "./era.js"
import * as Legacy from "./legacy.js"
import * as Modern from "./modern.js"
import { peerHandlers, Session } from "./session.js"
import { served, sessionAttributes } from "./telemetry.js"

export {
  invalidParams,
  MAX_INPUT_DEPTH,
  missingClientCapability,
  resourceNotFound,
  unknownPrompt,
  unknownTool
} from "./errors.js"

// Starts one session over the Transport in context; it leaves `legacy.sessions` when its Scope closes.
const connect = (options: Options, legacy: Legacy.Legacy, modern: Era | undefined) => (outbound: Outbound = {}) =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const session = new Session(options, scope, outbound)
    const transport = yield* Transport
    const clock = yield* Effect.clock
    const started = clock.unsafeCurrentTimeMillis()
    const name = options.serverInfo.name
    const serve = served(name, sessionAttributes(transport.kind, transport.info, () => session.client?.protocolVersion))
    const peer = yield* Peer.make({ handlers: peerHandlers(session, legacy, modern, serve) })
    session.peer = peer
    session.view = {
      peer,
      client: () => session.client,
      level: () => session.level,
      caller: outbound.caller,
      closed: peer.closed,
      notify: session.notify,
      request: session.send
    }
    legacy.sessions.add(session)
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        legacy.sessions.delete(session)
        session.ended = true
        const ended = { server: name, kind: transport.kind, errorType: undefined }
        const protocolVersion = session.client?.protocolVersion
        sessionPoint(
          serverSessionDuration,
          { ...ended, protocolVersion },
          (clock.unsafeCurrentTimeMillis() - started) / 1000
        )
      })
    )
    return session.view
  })

/** Makes a server (see `McpServer.make`). */
export const make = (given: Options): Effect.Effect<McpServer, never, Scope.Scope> =>
  Effect.gen(function*() {
    // Modern requests are answered unless turned off; the eras read the resolved flag.
    const options: Options = given.modern === false ? given : { ...given, modern: true }
    const legacy = yield* Legacy.make(options)
    const modern = options.modern === true ? yield* Modern.make(options) : undefined
    const eras: ReadonlyArray<Era> = modern === undefined ? [legacy] : [legacy, modern]
    // Sessions outlive no server: once its Scope closes, nothing more is told to them.
    yield* Effect.addFinalizer(() => Effect.sync(() => legacy.sessions.clear()))
    const all = (f: (era: Era) => Effect.Effect<void>) => Effect.forEach(eras, f, { discard: true })
    const start = traced("McpServer.connect")(connect(options, legacy, modern))
    return {
      serve: Effect.scoped(Effect.flatMap(start(), (session) => session.closed)),
      connect: start,
      notifyListChanged: traced("McpServer.notifyListChanged")((kind: ListKind) => all((era) => era.listChanged(kind))),
      notifyResourceUpdated: traced("McpServer.notifyResourceUpdated")((uri: string) =>
        all((era) => era.resourceUpdated(uri))
      ),
      log: traced("McpServer.log")((level: McpSchema.LoggingLevel, data: unknown, logger?: string) =>
        all((era) => era.log(level, data, logger))
      ),
      sessions: () => legacy.sessions.size,
      modern: modern !== undefined,
      answerModern: modern === undefined ? undefined : Alone.make(options, modern, yield* Effect.scope)
    }
  })

/** A client's Memory transport linked to a new session of `server` (see `McpServer.connectMemory`). */
export const connectMemory = (
  server: McpServer,
  options: { readonly name?: string | undefined; readonly outbound?: Outbound | undefined } = {}
) =>
  Effect.gen(function*() {
    const [client, end] = yield* Memory.makePair({ server: options.name ?? "memory", client: "client" })
    const session = yield* Effect.provideService(server.connect(options.outbound), Transport, end)
    return { transport: client, session }
  })
