/**
 * Variable expansion in config files: `${VAR}` and `${VAR:-default}` as in the shell,
 * `${env:VAR}` and `${workspaceFolder}` as in VS Code. Problems are collected, never
 * thrown, and never quote a value.
 *
 * @internal
 */
import * as Redacted from "effect/Redacted"
import type { Env } from "../../FleetConfig.js"

/** Where variables come from, and the problems found so far. */
export interface Context {
  readonly env: Env
  /** The config file's directory: relative `cwd` resolves against it. */
  readonly dir: string
  /** `${workspaceFolder}`: the folder holding `.vscode/`, else the file's directory. */
  readonly workspace: string
  /** Problems found so far for the current server; never holds a value, only names. */
  readonly problems: Array<string>
}

const variableName = /^([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?$/s

/** A text with its variables expanded. */
export interface Expanded {
  readonly value: string
  /** Whether the text held a `${...}` reference: such env and header values are Redacted. */
  readonly referenced: boolean
}

/** Expands `${VAR}`, `${VAR:-default}`, `${env:VAR}` and `${workspaceFolder}` in `text`; problems name `field`, never a value. */
export const expand = (text: string, field: string, context: Context): Expanded => {
  let value = ""
  let referenced = false
  let from = 0
  for (;;) {
    const start = text.indexOf("${", from)
    if (start === -1) break
    const end = text.indexOf("}", start + 2)
    if (end === -1) {
      context.problems.push(`unterminated "\${" in ${field}`)
      break
    }
    value += text.slice(from, start)
    from = end + 1
    referenced = true
    const inner = text.slice(start + 2, end)
    const reference = `\${${inner}}`
    if (inner === "workspaceFolder") {
      value += context.workspace
      continue
    }
    const match = variableName.exec(inner.startsWith("env:") ? inner.slice(4) : inner)
    if (match === null) {
      context.problems.push(
        inner.startsWith("input:")
          ? `VS Code input variables are not supported (${reference} in ${field})`
          : /^[A-Za-z]+:/.test(inner)
          ? `unsupported variable ${reference} in ${field}`
          : `invalid variable reference ${reference} in ${field}`
      )
      continue
    }
    const [, name, fallback] = match
    if (fallback?.includes("${")) {
      context.problems.push(`nested variables are not supported (in ${field})`)
      continue
    }
    const found = Object.hasOwn(context.env, name) ? context.env[name] : undefined
    // As in the shell, `:-` also replaces a variable that is set but empty.
    if (fallback !== undefined && (found === undefined || found === "")) value += fallback
    else if (found !== undefined) value += found
    else context.problems.push(`variable ${name} is not set (used in ${field})`)
  }
  return { value: value + text.slice(from), referenced }
}

/** Expands every value of a record; values that referenced a variable become Redacted. */
export const expandRecord = (
  record: Readonly<Record<string, string>> | undefined,
  field: string,
  context: Context
): Record<string, string | Redacted.Redacted<string>> | undefined => {
  if (record === undefined) return undefined
  const entries = Object.entries(record)
  if (entries.length === 0) return undefined
  return Object.fromEntries(entries.map(([key, text]) => {
    const { referenced, value } = expand(text, `${field}.${key}`, context)
    return [key, referenced ? Redacted.make(value) : value]
  }))
}
