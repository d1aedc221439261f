/**
 * Questions to the person at the terminal, asked on stderr (stdout may be piped), or on the
 * terminal itself when stderr is piped too: the
 * values of VS Code `${input:id}` variables that no `MCP_FLEET_INPUT_<ID>` supplies, and the
 * fields of a server's elicitation (see HostFeatures).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as readline from "node:readline"
import { Writable } from "node:stream"
import * as tty from "node:tty"
import type * as FleetConfig from "../FleetConfig.js"
import * as Hidden from "../internal/sanitize.js"

// Where questions are written: stderr on a terminal; else, with stdin on one (stdout and
// stderr piped: `mcp-fleet call … 2>&1 | jq`), the terminal itself. Opened once.
let terminal: NodeJS.WritableStream | null | undefined
const terminalOutput = (): NodeJS.WritableStream | null => {
  if (terminal !== undefined) return terminal
  if (process.stderr.isTTY === true) return terminal = process.stderr
  try {
    const stream = new tty.WriteStream(fs.openSync("/dev/tty", "w"))
    // It must not keep the process alive once the command is done.
    stream.unref()
    return terminal = stream
  } catch {
    return terminal = null
  }
}

/**
 * Whether there is a person to ask: stdin is a terminal, and stderr is one or the terminal
 * can be opened (never for `serve --stdio`, whose stdin is the host's).
 *
 * @since 0.1.0
 */
export const canAsk = (): boolean => process.stdin.isTTY === true && terminalOutput() !== null

/**
 * Writes a line where the questions go (see `canAsk`): what comes before a question.
 *
 * @since 0.3.0
 */
export const say = (text: string): Effect.Effect<void> =>
  Effect.sync(() => void (terminalOutput() ?? process.stderr).write(`${Hidden.forTerminal(text)}\n`))

/**
 * Asks on the terminal; with `hidden`, what is typed is not shown. A question of several
 * lines shows them all, the last one as the prompt. Ctrl-D or Ctrl-C give undefined.
 *
 * @since 0.2.0
 */
export const question = (asked: string, hidden = false): Effect.Effect<string | undefined> =>
  Effect.async((resume) => {
    // A question may hold a server's text (an elicitation): nothing of it drives the terminal.
    const text = Hidden.forTerminal(asked)
    const out = terminalOutput() ?? process.stderr
    const output = new Writable({
      write: (chunk, _encoding, done) => {
        if (!hidden) out.write(chunk)
        done()
      }
    })
    // readline redraws its prompt by clearing the line first (ESC[1G ESC[0J): what was
    // written on that line before is erased, so the question's last line is its prompt, and
    // the lines before it are written as they are.
    const lastLine = text.lastIndexOf("\n") + 1
    const prompt = readline.createInterface({ input: process.stdin, output, terminal: true })
    out.write(text.slice(0, lastLine))
    // Typed unseen: the output is muted, so the prompt is written here, once the terminal
    // stopped echoing (when the interface was made).
    if (hidden) out.write(text.slice(lastLine))
    let answered = false
    prompt.question(hidden ? "" : text.slice(lastLine), (answer) => {
      answered = true
      if (hidden) out.write("\n")
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
