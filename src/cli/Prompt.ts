/**
 * Questions to the person at the terminal, asked on stderr (stdout may be piped): the
 * values of VS Code `${input:id}` variables that no `MCP_FLEET_INPUT_<ID>` supplies, and the
 * fields of a server's elicitation (see HostFeatures).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as readline from "node:readline"
import { Writable } from "node:stream"
import type * as FleetConfig from "../FleetConfig.js"
import * as Hidden from "../internal/sanitize.js"

/**
 * Whether there is a person to ask: stdin and stderr are a terminal (never for
 * `serve --stdio`, whose stdin is the host's).
 *
 * @since 0.1.0
 */
export const canAsk = (): boolean => process.stdin.isTTY === true && process.stderr.isTTY === true

/**
 * Asks one line on the terminal; with `hidden`, what is typed is not shown. Ctrl-D or Ctrl-C
 * give undefined.
 *
 * @since 0.2.0
 */
export const question = (text: string, hidden = false): Effect.Effect<string | undefined> =>
  Effect.async((resume) => {
    const output = new Writable({
      write: (chunk, _encoding, done) => {
        if (!hidden) process.stderr.write(chunk)
        done()
      }
    })
    // The terminal stops echoing once the interface is made: the question comes after it.
    const prompt = readline.createInterface({ input: process.stdin, output, terminal: true })
    // A question may hold a server's text (an elicitation): nothing of it drives the terminal.
    process.stderr.write(Hidden.forTerminal(text))
    let answered = false
    prompt.question("", (answer) => {
      answered = true
      if (hidden) process.stderr.write("\n")
      prompt.close()
      resume(Effect.succeed(answer))
    })
    // Ctrl-D or Ctrl-C: no answer.
    prompt.once("close", () => {
      if (!answered) resume(Effect.succeed(undefined))
    })
    return Effect.sync(() => prompt.close())
  })

/**
 * Asks for a VS Code input: its description (or id), and the variable that would have
 * supplied it; a `password` input is typed unseen. An empty answer leaves it unanswered.
 *
 * @since 0.1.0
 */
export const input = (request: FleetConfig.InputRequest): Effect.Effect<string | undefined> =>
  question(
    `${request.description ?? `Value for ${request.id}`} (\${input:${request.id}}; or set ${request.variable}): `,
    request.password
  ).pipe(Effect.map((answer) => answer === "" ? undefined : answer))

/**
 * The `askInput` of a config load: `input` when there is a person to ask, else none.
 *
 * @since 0.1.0
 */
export const askInput = (): FleetConfig.LoadOptions["askInput"] => canAsk() ? input : undefined
