/**
 * JSON with comments and trailing commas (VS Code's mcp.json), read with `jsonc-parser`:
 * one parser for loading config files and for editing them in place. Errors name a code
 * and a place, never the text, which may hold a secret.
 *
 * @internal
 */
import * as Either from "effect/Either"
import jsonc from "jsonc-parser"

const options: jsonc.ParseOptions = { allowTrailingComma: true, disallowComments: false }

/** The first error in a text: what and where. */
export interface Problem {
  readonly code: string
  readonly offset: number
  /** 1-based. */
  readonly line: number
  /** 1-based. */
  readonly column: number
}

const problemOf = (text: string, error: jsonc.ParseError): Problem => {
  const before = text.slice(0, error.offset).split("\n")
  return {
    code: jsonc.printParseErrorCode(error.error),
    offset: error.offset,
    line: before.length,
    column: before[before.length - 1]!.length + 1
  }
}

/** A problem as words: `CloseBraceExpected at line 4, column 3`. */
export const describe = (problem: Problem): string =>
  `${problem.code} at line ${problem.line}, column ${problem.column}`

/** The syntax tree of a text, for edits that keep its comments and layout. */
export const parseTree = (text: string): Either.Either<jsonc.Node, Problem> => {
  const errors: Array<jsonc.ParseError> = []
  const root = jsonc.parseTree(text, errors, options)
  if (errors.length > 0) return Either.left(problemOf(text, errors[0]!))
  // An empty text has no tree and no error.
  if (root === undefined) return Either.left({ code: "ValueExpected", offset: 0, line: 1, column: 1 })
  return Either.right(root)
}

/** The value of a text. */
export const parse = (text: string): Either.Either<unknown, Problem> =>
  Either.map(parseTree(text), (root) => jsonc.getNodeValue(root))
