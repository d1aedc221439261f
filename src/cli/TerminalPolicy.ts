/**
 * The policy the CLI works through: the config's rules and limits, with the person at the
 * terminal as the approver of `ask` rules (when there is a terminal to ask on).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as readline from "node:readline"
import * as Policy from "../Policy.js"
import * as ServerRegistry from "../ServerRegistry.js"
import type * as Fleet from "./Fleet.js"

const preview = (args: Readonly<Record<string, unknown>>): string => {
  const text = JSON.stringify(args)
  return text.length > 200 ? `${text.slice(0, 199)}…` : text
}

/**
 * Asks on the terminal: `Allow mcp__x__y {...}? [y/N]`. Anything but y/yes denies.
 *
 * @since 0.1.0
 */
export const terminalApproval: Policy.Approval = {
  approve: (request) =>
    Effect.async<Policy.ApprovalAnswer>((resume) => {
      const prompt = readline.createInterface({ input: process.stdin, output: process.stderr })
      prompt.question(`Allow ${request.name} ${preview(request.arguments)}? [y/N] `, (answer) => {
        prompt.close()
        resume(Effect.succeed(
          /^y(es)?$/i.test(answer.trim())
            ? { decision: "allow" }
            : { decision: "deny", reason: "the user said no at the terminal" }
        ))
      })
      return Effect.sync(() => prompt.close())
    })
}

/**
 * The policy of a started fleet. `ask` rules ask on the terminal when stdin is one and
 * the output is not `--json`; otherwise they deny.
 *
 * @since 0.1.0
 */
export const make = (
  started: Fleet.Started,
  interactive: boolean
): Effect.Effect<Policy.Policy, never, Scope.Scope> => {
  const policy = Policy.make(started.loaded.policy).pipe(
    Effect.provideService(ServerRegistry.ServerRegistry, started.registry)
  )
  return interactive && process.stdin.isTTY === true
    ? Effect.provideService(policy, Policy.Approval, terminalApproval)
    : policy
}
