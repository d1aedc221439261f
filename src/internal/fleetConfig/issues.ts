/**
 * A schema error of a config file as sentences a person reads: one per bad entry, each
 * naming the field as it is written in the file (`mcpServers.memory.command: expected a
 * string, got 5`), every bad entry listed. Values a schema marks as secret are not quoted.
 *
 * @internal
 */
import * as Option from "effect/Option"
import type * as ParseResult from "effect/ParseResult"
import * as AST from "effect/SchemaAST"

type Key = PropertyKey

const fieldOf = (path: ReadonlyArray<Key>): string =>
  path.reduce<string>((text, key) => {
    if (typeof key === "number") return `${text}[${key}]`
    const name = String(key)
    if (/^[A-Za-z_$][\w$-]*$/.test(name)) return text === "" ? name : `${text}.${name}`
    return `${text}[${JSON.stringify(name)}]`
  }, "")

// The value found, short: a long one is cut, since it may be a whole block of the file.
const shown = (actual: unknown): string => {
  const text = actual === undefined ? "nothing" : JSON.stringify(actual) ?? String(actual)
  return text.length > 40 ? `${text.slice(0, 39)}…` : text
}

const isUndefined = (ast: AST.AST) => ast._tag === "UndefinedKeyword"

// What a schema wants, in words.
const expected = (ast: AST.AST): string => {
  switch (ast._tag) {
    case "StringKeyword":
      return "a string"
    case "NumberKeyword":
      return "a number"
    case "BooleanKeyword":
      return "true or false"
    case "Literal":
      return JSON.stringify(ast.literal)
    case "TupleType": {
      const element = ast.rest[0]?.type
      return element?._tag === "StringKeyword" ? "an array of strings" : "an array"
    }
    case "TypeLiteral":
      return "an object"
    case "Refinement":
      return Option.getOrElse(AST.getDescriptionAnnotation(ast), () => expected(ast.from))
    case "Union": {
      const members = ast.types.filter((member) => !isUndefined(member)).map(expected)
      return members.length === 1 ? members[0]! : `${members.slice(0, -1).join(", ")} or ${members.at(-1)}`
    }
    case "Transformation":
      return expected(ast.to)
    case "Suspend":
      return expected(ast.f())
    default:
      return String(ast)
  }
}

const lower = (text: string) => text.charAt(0).toLowerCase() + text.slice(1)

// A schema's own message (set where the value must not be quoted), in lower case. One that
// does not override is for the value's own shape, not for a problem inside it.
const ownMessage = (issue: ParseResult.ParseIssue): string | undefined => {
  if (!("ast" in issue)) return undefined
  const annotation = AST.getMessageAnnotation(issue.ast)
  if (Option.isNone(annotation)) return undefined
  const result = annotation.value(issue)
  if (typeof result === "string") return lower(result)
  // The schemas here give plain texts, never Effects.
  if (!("override" in result) || typeof result.message !== "string") return undefined
  if (!result.override && issue._tag === "Composite") return undefined
  return lower(result.message)
}

const issuesOf = (issues: ParseResult.SingleOrNonEmpty<ParseResult.ParseIssue>) =>
  Array.isArray(issues) ? issues as ReadonlyArray<ParseResult.ParseIssue> : [issues as ParseResult.ParseIssue]

// Each bad entry under `path`, as [field, what is wrong].
const collect = (issue: ParseResult.ParseIssue, path: ReadonlyArray<Key>, out: Array<[string, string]>): void => {
  const own = ownMessage(issue)
  if (own !== undefined) {
    out.push([fieldOf(path), own])
    return
  }
  switch (issue._tag) {
    case "Pointer":
      return collect(issue.issue, [...path, ...(Array.isArray(issue.path) ? issue.path : [issue.path])], out)
    case "Composite": {
      if (issue.ast._tag === "Union") return union(issue, path, out)
      for (const inner of issuesOf(issue.issues)) collect(inner, path, out)
      return
    }
    case "Refinement":
      // A filter that names its own issues (with paths and messages) is told by them.
      if (issue.kind === "From" || issue.issue._tag !== "Type" || issue.issue.message !== undefined) {
        return collect(issue.issue, path, out)
      }
      out.push([fieldOf(path), `expected ${expected(issue.ast)}, got ${shown(issue.actual)}`])
      return
    case "Transformation":
      return collect(issue.issue, path, out)
    case "Missing":
      out.push([fieldOf(path), "is required"])
      return
    case "Unexpected":
      out.push([fieldOf(path), "is not allowed here"])
      return
    case "Type":
    case "Forbidden":
      out.push([fieldOf(path), issue.message ?? `expected ${expected(issue.ast)}, got ${shown(issue.actual)}`])
      return
  }
}

// An optional field is a union with undefined: when the value had the right shape for the
// one other member, its own problems are the ones to tell.
const union = (issue: ParseResult.Composite, path: ReadonlyArray<Key>, out: Array<[string, string]>): void => {
  const members = issuesOf(issue.issues).filter((inner) => !(inner._tag === "Type" && isUndefined(inner.ast)))
  if (members.length === 1 && members[0]!._tag !== "Type") return collect(members[0]!, path, out)
  out.push([fieldOf(path), `expected ${expected(issue.ast)}, got ${shown(issue.actual)}`])
}

/** The sentences of a schema error: one per bad entry, `field: what is wrong`. */
export const sentences = (error: ParseResult.ParseError): ReadonlyArray<string> => {
  const out: Array<[string, string]> = []
  collect(error.issue, [], out)
  return [...new Set(out.map(([field, text]) => field === "" ? text : `${field}: ${text}`))]
}
