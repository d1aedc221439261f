// Waiting on a fleet's events in tests: take events until one matches.
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import type { RegistryEvent } from "../../src/RegistryEvent.js"
import type { ServerState } from "../../src/ServerState.js"

/** Takes events until one matches, and returns it. */
export const until = <A extends RegistryEvent>(
  events: Queue.Dequeue<RegistryEvent>,
  match: (event: RegistryEvent) => event is A
) => Queue.take(events).pipe(Effect.repeat({ until: match }), Effect.map((event) => event as A))

/** Matches `server` entering the state `tag`. */
export const stateOf =
  (server: string, tag: ServerState["_tag"]) =>
  (event: RegistryEvent): event is Extract<RegistryEvent, { _tag: "ServerStateChanged" }> =>
    event._tag === "ServerStateChanged" && event.server === server && event.state._tag === tag
