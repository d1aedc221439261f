/**
 * What the CLI answers when a server asks its host (see Host):
 *
 * - Roots: `--root` (repeatable); without it no roots are declared at all, so a server keeps
 *   to the folders its own arguments name (a default root would widen them: server-filesystem
 *   replaces its arguments with the roots it is given).
 * - Elicitation: a form asked field by field on the terminal (typed from the schema: yes/no,
 *   numbers, choices by number or value, several choices separated by commas; defaults shown
 *   and taken on an empty answer), then "send?"; declined when there is no terminal to ask
 *   on (`serve --stdio`, CI). URL mode is not offered: a terminal cannot open the page.
 * - Sampling: off, unless a config file names a `sampling.command`: a program that reads the
 *   request's params as JSON on stdin and writes the result as JSON on stdout (any local
 *   model runner behind a small script). It runs in the config file's folder with the CLI's
 *   environment plus `MCP_FLEET_SERVER` (who asked), and is ended when the request is given
 *   up or takes longer than its `timeout` (default 2 minutes).
 *
 * @since 0.2.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import { spawn } from "node:child_process"
import type * as FleetConfig from "../FleetConfig.js"
import * as Host from "../Host.js"
import * as JsonRpc from "../JsonRpc.js"
import type * as McpSchema from "../McpSchema.js"
import * as NodeHost from "../NodeHost.js"
import * as Peer from "../Peer.js"
import * as Prompt from "./Prompt.js"
import type * as Settings from "./Settings.js"

type Property = Readonly<Record<string, unknown>>

interface Choice {
  readonly value: string
  readonly title: string
}

// The choices of an enum field (SEP-1330: untitled `enum`, titled `oneOf`/`anyOf`, legacy
// `enumNames`), of the field itself or of its items for a multi-select.
const choicesOf = (property: Property): ReadonlyArray<Choice> | undefined => {
  const source = property.type === "array" ? (property.items ?? {}) as Property : property
  const titled = (source.oneOf ?? source.anyOf) as ReadonlyArray<{ const: string; title?: string }> | undefined
  if (Array.isArray(titled)) {
    return titled.map((option) => ({ value: option.const, title: option.title ?? option.const }))
  }
  const values = source.enum as ReadonlyArray<string> | undefined
  if (!Array.isArray(values)) return undefined
  const names = source.enumNames as ReadonlyArray<string> | undefined
  return values.map((value, i) => ({ value, title: names?.[i] ?? value }))
}

const pick = (choices: ReadonlyArray<Choice>, answer: string): Either.Either<string, string> => {
  const text = answer.trim()
  const index = /^\d+$/.test(text) ? Number(text) - 1 : -1
  const found = choices[index] ??
    choices.find((choice) => choice.value === text || choice.title.toLowerCase() === text.toLowerCase())
  return found === undefined
    ? Either.left(`choose one of 1-${choices.length}, or type a value`)
    : Either.right(found.value)
}

/**
 * A field's answer typed from its schema, or why it does not fit.
 *
 * @since 0.2.0
 */
export const parseField = (property: Property, answer: string): Either.Either<McpSchema.ElicitValue, string> => {
  const choices = choicesOf(property)
  if (property.type === "array") {
    const parts = answer.split(",").map((part) => part.trim()).filter((part) => part !== "")
    return choices === undefined ? Either.right(parts) : Either.all(parts.map((part) => pick(choices, part)))
  }
  if (choices !== undefined) return pick(choices, answer)
  switch (property.type) {
    case "boolean": {
      if (/^(y|yes|true|1)$/i.test(answer.trim())) return Either.right(true)
      if (/^(n|no|false|0)$/i.test(answer.trim())) return Either.right(false)
      return Either.left("answer yes or no")
    }
    case "number":
    case "integer": {
      const value = Number(answer.trim())
      if (answer.trim() === "" || !Number.isFinite(value)) return Either.left("type a number")
      return property.type === "integer" && !Number.isInteger(value)
        ? Either.left("type a whole number")
        : Either.right(value)
    }
    default:
      return Either.right(answer)
  }
}

// A default as the person sees it: a choice by its title.
const shown = (value: unknown, choices: ReadonlyArray<Choice> | undefined): string => {
  if (Array.isArray(value)) return value.map((item) => shown(item, choices)).join(", ")
  return choices?.find((choice) => choice.value === value)?.title ?? String(value)
}

/**
 * The question of one field: its title and description, what to type, and its default.
 *
 * @since 0.2.0
 */
export const fieldQuestion = (name: string, property: Property, required: boolean): string => {
  const choices = choicesOf(property)
  const lines = choices === undefined ?
    [] :
    choices.map((choice, i) =>
      `    ${i + 1}) ${choice.title}${choice.title === choice.value ? "" : ` (${choice.value})`}`
    )
  const hint = choices !== undefined
    ? property.type === "array" ? "numbers, comma-separated" : "a number"
    : property.type === "boolean"
    ? "y/n"
    : property.type === "array"
    ? "comma-separated"
    : property.type === "number" || property.type === "integer"
    ? String(property.type)
    : undefined
  const title = typeof property.title === "string" ? property.title : name
  const description = typeof property.description === "string" ? ` — ${property.description}` : ""
  const extras = [hint, property.default === undefined ? undefined : `default: ${shown(property.default, choices)}`]
    .filter((extra) => extra !== undefined)
  return [
    `  ${title}${required ? " *" : ""}${description}`,
    ...lines,
    `  ${extras.length > 0 ? `(${extras.join("; ")}) ` : ""}> `
  ].join("\n")
}

type Ask = (text: string) => Effect.Effect<string | undefined>

// One field, asked until its answer fits: a value, "skip" (left to its default), or "cancel".
const askField = (ask: Ask, name: string, property: Property, required: boolean) =>
  Effect.gen(function*() {
    let text = fieldQuestion(name, property, required)
    while (true) {
      const answer = yield* ask(text)
      if (answer === undefined) return { _tag: "cancel" } as const
      if (answer === "" && (property.default !== undefined || !required)) return { _tag: "skip" } as const
      const parsed = answer === "" ? Either.left("an answer is required") : parseField(property, answer)
      if (Either.isRight(parsed)) return { _tag: "value", value: parsed.right } as const
      text = `  ${parsed.left} > `
    }
  })

/**
 * Asks a form on the terminal with `ask`: each field, then whether to send it. Ctrl-D
 * cancels; "n" at the end declines.
 *
 * @since 0.2.0
 */
export const askForm =
  (ask: Ask) => (request: McpSchema.ElicitFormParams, server: string): Effect.Effect<McpSchema.ElicitResult> =>
    Effect.gen(function*() {
      yield* Prompt.say(`\nserver '${server}' asks: ${request.message}`)
      const required = new Set(request.requestedSchema.required ?? [])
      const content: Record<string, McpSchema.ElicitValue> = {}
      for (const [name, property] of Object.entries(request.requestedSchema.properties)) {
        const field = yield* askField(ask, name, property, required.has(name))
        if (field._tag === "cancel") return { action: "cancel" }
        if (field._tag === "value") content[name] = field.value
      }
      const send = yield* ask(`  send to '${server}'? [Y/n] `)
      if (send === undefined) return { action: "cancel" }
      return /^n/i.test(send) ? { action: "decline" } : { action: "accept", content }
    })

const samplingFailed = (message: string) => new Peer.HandlerError({ code: JsonRpc.ErrorCode.InternalError, message })

// Runs the command once: params in, its stdout parsed out; ended (SIGTERM) when interrupted.
const runCommand = (command: FleetConfig.SamplingCommand, input: string, server: string) =>
  Effect.async<unknown, Peer.HandlerError>((resume) => {
    const child = spawn(command.command, [...command.args], {
      cwd: command.cwd,
      env: { ...process.env, MCP_FLEET_SERVER: server },
      stdio: ["pipe", "pipe", "pipe"]
    })
    const out: Array<Buffer> = []
    let err = ""
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk))
    child.stderr.on("data", (chunk: Buffer) => err = (err + chunk.toString()).slice(-2048))
    child.stdin.on("error", () => {}) // a command that exits without reading: its exit says why
    child.on(
      "error",
      (error) =>
        resume(
          Effect.fail(samplingFailed(`the sampling command '${command.command}' could not start: ${error.message}`))
        )
    )
    child.on("close", (code, signal) => {
      if (code !== 0) {
        const how = signal === null ? `exited with code ${code}` : `was ended by ${signal}`
        return resume(Effect.fail(samplingFailed(`the sampling command ${how}${err === "" ? "" : `: ${err.trim()}`}`)))
      }
      try {
        resume(Effect.succeed(JSON.parse(Buffer.concat(out).toString("utf8"))))
      } catch {
        resume(Effect.fail(samplingFailed("the sampling command did not write JSON on stdout")))
      }
    })
    child.stdin.end(input)
    return Effect.sync(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM")
    })
  })

/**
 * Sampling by a configured command (see the module's header).
 *
 * @since 0.2.0
 */
export const samplingByCommand = (command: FleetConfig.SamplingCommand): Host.Sampling => {
  const timeout = command.timeout ?? Duration.minutes(2)
  return {
    createMessage: (request, { server }) =>
      runCommand(command, JSON.stringify(request), server).pipe(
        Effect.timeoutFail({
          duration: timeout,
          onTimeout: () => samplingFailed(`the sampling command took longer than ${Duration.format(timeout)}`)
        }),
        // The Host checks it against the schema before the server sees it.
        Effect.map((answer) => answer as McpSchema.CreateMessageResult)
      )
  }
}

/**
 * The CLI's host features for a fleet: roots when `--root` named any, elicitation on the
 * terminal (one form at a time), sampling by `sampling` when it is given.
 *
 * @since 0.2.0
 */
export const layer = (
  settings: Settings.Settings,
  sampling: FleetConfig.SamplingCommand | undefined
): Layer.Layer<Host.Elicitation> =>
  Layer.mergeAll(
    settings.roots.length === 0 ? Layer.empty : Host.layerRoots(settings.roots.map(NodeHost.rootOf)),
    Layer.effect(
      Host.Elicitation,
      Effect.map(Effect.makeSemaphore(1), (one): Host.Elicitation => {
        const form = askForm((text) => Prompt.question(text))
        return {
          elicit: (request, { server }) =>
            request.mode === "url" || !Prompt.canAsk()
              ? Effect.succeed({ action: "decline" })
              : one.withPermits(1)(form(request, server))
        }
      })
    ),
    // Off without a command: the capability is then not declared at all.
    sampling === undefined ? Layer.empty : Host.layerSampling(samplingByCommand(sampling))
  )
