/**
 * Variable expansion in config files: `${VAR}` and `${VAR:-default}` as in the shell;
 * `${env:VAR}`, `${input:id}`, `${workspaceFolder}`, `${workspaceFolderBasename}`,
 * `${userHome}` and `${pathSeparator}` as in VS Code. Problems are collected, never thrown,
 * and never quote a value.
 *
 * @internal
 */
import * as Redacted from "effect/Redacted"
import type { Env } from "../../FleetConfig.js"
import type { PathOps } from "../platform.js"

/** Where variables come from, and what was found missing so far. */
export interface Context {
  readonly env: Env
  /** Path operations: the platform's (`${pathSeparator}`, `${workspaceFolderBasename}`, relative paths). */
  readonly path: PathOps
  /**
   * `${workspaceFolder}`, and what a relative `cwd` or `envFile` resolves against: the folder
   * holding `.vscode/` or `.cursor/`, else the file's directory (see hosts.ts).
   */
  readonly workspace: string
  /** `${userHome}`. */
  readonly home: string
  /** The values of `${input:id}` known so far, by id (from the user, when asked). */
  readonly inputs: ReadonlyMap<string, string>
  /** The ids of `${input:id}` references found without a value. */
  readonly unanswered: Set<string>
  /** Problems found so far for the current server; never holds a value, only names. */
  readonly problems: Array<string>
}

/** The environment variable that supplies `${input:id}`: `MCP_FLEET_INPUT_` and the id in capitals. */
export const inputVariable = (id: string): string => `MCP_FLEET_INPUT_${id.toUpperCase().replace(/[^A-Z0-9]/g, "_")}`

const variableName = /^([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?$/s

// VS Code's predefined variables that mean nothing outside its editor: a reference to one
// says so, rather than that a variable of that name is not set.
const editorOnly = new Set([
  "workspaceRoot",
  "file",
  "fileWorkspaceFolder",
  "relativeFile",
  "relativeFileDirname",
  "fileBasename",
  "fileBasenameNoExtension",
  "fileExtname",
  "fileDirname",
  "fileDirnameBasename",
  "cwd",
  "lineNumber",
  "columnNumber",
  "selectedText",
  "execPath",
  "defaultBuildTask"
])

/** A text with its variables expanded. */
export interface Expanded {
  readonly value: string
  /** Whether the text held a `${...}` reference: such env and header values are Redacted. */
  readonly referenced: boolean
}

// The value of one `${inner}`, or undefined with a problem recorded.
const resolve = (inner: string, field: string, context: Context): string | undefined => {
  const reference = `\${${inner}}`
  switch (inner) {
    case "workspaceFolder":
      return context.workspace
    case "workspaceFolderBasename":
      return context.path.basename(context.workspace)
    case "userHome":
      return context.home
    case "pathSeparator":
    case "/":
      return context.path.sep
  }
  if (inner.startsWith("input:")) {
    const id = inner.slice(6)
    const value = context.inputs.get(id) ?? context.env[inputVariable(id)]
    if (value !== undefined) return value
    context.unanswered.add(id)
    context.problems.push(
      `input "${id}" has no value (${reference} in ${field}): set ${
        inputVariable(id)
      }, or run on a terminal to be asked`
    )
    return undefined
  }
  const fromEnv = inner.startsWith("env:")
  const match = variableName.exec(fromEnv ? inner.slice(4) : inner)
  if (match === null) {
    context.problems.push(
      /^[A-Za-z]+:/.test(inner)
        ? `${reference} in ${field} is not supported`
        : `invalid variable reference ${reference} in ${field}`
    )
    return undefined
  }
  const [, name, fallback] = match
  if (fallback?.includes("${")) {
    context.problems.push(`nested variables are not supported (in ${field})`)
    return undefined
  }
  const found = Object.hasOwn(context.env, name) ? context.env[name] : undefined
  // As in the shell, `:-` also replaces a variable that is set but empty.
  if (fallback !== undefined && (found === undefined || found === "")) return fallback
  if (found !== undefined) return found
  context.problems.push(
    !fromEnv && fallback === undefined && editorOnly.has(name)
      ? `${reference} in ${field} is not supported (it is VS Code's, for the open editor)`
      : `variable ${name} is not set (used in ${field})`
  )
  return undefined
}

/** Expands every `${...}` in `text`; problems name `field`, never a value. */
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
    value += resolve(text.slice(start + 2, end), field, context) ?? ""
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
