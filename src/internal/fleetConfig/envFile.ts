/**
 * The `envFile` of a server entry (VS Code, Cursor): a dotenv file of `KEY=value` lines.
 * Comments (`#`), blank lines and an `export ` prefix are allowed; a value may be quoted:
 * `"..."` with `\n`, `\t`, `\"` and `\\` escapes (and over several lines), `'...'` as is.
 * Values are not expanded. Problems name a line, never its text.
 *
 * @internal
 */

/** What an env file holds, and its lines that could not be read. */
export interface Parsed {
  readonly values: Record<string, string>
  readonly problems: ReadonlyArray<string>
}

const assignment = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*/

const escapes: Record<string, string> = { n: "\n", r: "\r", t: "\t", "\"": "\"", "\\": "\\" }

// A double-quoted value from `at` (just past the quote): its text and where it ends.
const doubleQuoted = (text: string, at: number): { readonly value: string; readonly end: number } | undefined => {
  let value = ""
  for (let i = at; i < text.length; i++) {
    const char = text[i]!
    if (char === "\"") return { value, end: i + 1 }
    if (char === "\\" && i + 1 < text.length) {
      const next = text[++i]!
      value += escapes[next] ?? `\\${next}`
    } else {
      value += char
    }
  }
  return undefined
}

/** Reads the `KEY=value` lines of an env file. */
export const parse = (text: string): Parsed => {
  const values: Record<string, string> = {}
  const problems: Array<string> = []
  const source = text.replace(/^\uFEFF/, "").replace(/\r\n?/g, "\n")
  let at = 0
  while (at < source.length) {
    const lineEnd = source.indexOf("\n", at) === -1 ? source.length : source.indexOf("\n", at)
    const line = source.slice(at, lineEnd)
    const lineNumber = source.slice(0, at).split("\n").length
    const trimmed = line.trim()
    if (trimmed === "" || trimmed.startsWith("#")) {
      at = lineEnd + 1
      continue
    }
    const match = assignment.exec(trimmed)
    if (match === null) {
      problems.push(`line ${lineNumber} is not KEY=value`)
      at = lineEnd + 1
      continue
    }
    const valueStart = at + line.indexOf(trimmed) + match[0].length
    const quote = source[valueStart]
    if (quote === "\"") {
      const quoted = doubleQuoted(source, valueStart + 1)
      if (quoted === undefined) {
        problems.push(`line ${lineNumber} opens a quote that is never closed`)
        break
      }
      values[match[1]!] = quoted.value
      const next = source.indexOf("\n", quoted.end)
      at = next === -1 ? source.length : next + 1
      continue
    }
    const rest = source.slice(valueStart, lineEnd)
    if (quote === "'") {
      const close = rest.indexOf("'", 1)
      if (close === -1) problems.push(`line ${lineNumber} opens a quote that is never closed`)
      else values[match[1]!] = rest.slice(1, close)
    } else {
      // An unquoted value ends at a ` #` comment.
      values[match[1]!] = rest.replace(/\s+#.*$/, "").trim()
    }
    at = lineEnd + 1
  }
  return { values, problems }
}
