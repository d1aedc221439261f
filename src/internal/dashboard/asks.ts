/**
 * The page as the Policy's approver: each `ask` waits here, shown in every open page, until
 * someone there allows or denies it, or its call is abandoned (then it goes away unanswered).
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Policy from "../../Policy.js"
import { randomHex } from "../crypto.js"

/** An `ask` waiting for an answer, as the page shows it. */
export interface Ask {
  readonly id: string
  readonly server: string
  readonly tool: string
  readonly name: string
  readonly arguments: Readonly<Record<string, unknown>>
  readonly rule: string | undefined
  readonly at: number
}

/** The waiting asks, and the answers given in the page. */
export interface Asks {
  readonly approval: Policy.Approval
  readonly pending: () => ReadonlyArray<Ask>
  /** Answers the ask `id`; false when it is no longer waiting. */
  readonly answer: (id: string, answer: Policy.ApprovalAnswer) => Effect.Effect<boolean>
  /** Calls `listener` whenever an ask comes or goes; returns its removal. */
  readonly onChange: (listener: () => void) => () => void
}

export const make = (ruleText: (rule: Policy.Rule) => string): Asks => {
  const waiting = new Map<string, { readonly ask: Ask; readonly deferred: Deferred.Deferred<Policy.ApprovalAnswer> }>()
  const listeners = new Set<() => void>()
  const changed = () => listeners.forEach((listener) => listener())
  const approve = (request: Policy.ApprovalRequest) =>
    Effect.gen(function*() {
      const deferred = yield* Deferred.make<Policy.ApprovalAnswer>()
      const at = yield* Clock.currentTimeMillis
      const id = randomHex(8)
      const ask: Ask = {
        id,
        server: request.server,
        tool: request.tool,
        name: request.name,
        arguments: request.arguments,
        rule: request.rule === undefined ? undefined : ruleText(request.rule),
        at
      }
      waiting.set(id, { ask, deferred })
      changed()
      return yield* Deferred.await(deferred).pipe(Effect.ensuring(Effect.sync(() => {
        waiting.delete(id)
        changed()
      })))
    })
  return {
    approval: { approve },
    pending: () => [...waiting.values()].map((entry) => entry.ask),
    answer: (id, answer) => {
      const entry = waiting.get(id)
      return entry === undefined ? Effect.succeed(false) : Deferred.succeed(entry.deferred, answer)
    },
    onChange: (listener) => {
      listeners.add(listener)
      return () => listeners.delete(listener)
    }
  }
}
