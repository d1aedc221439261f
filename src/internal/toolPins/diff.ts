/**
 * A tool's definition before and after a drift as a line diff, field by field, for a person
 * to review before approving it. Hidden text is shown (see sanitize `flag`), so the diff
 * is safe to print on a terminal and hides nothing the model would read.
 *
 * @internal
 */
import * as Hidden from "../sanitize.js"
import type * as PinSchema from "./schema.js"

type Definition = typeof PinSchema.Definition.Type

const fields = ["name", "title", "description", "inputSchema", "outputSchema", "annotations"] as const

const linesOf = (value: unknown): ReadonlyArray<string> =>
  value === undefined ? [] : (typeof value === "string" ? value : JSON.stringify(value, null, 2)).split("\n")

// The lines of `before` and `after` as kept (`  `), removed (`- `) and added (`+ `), from
// their longest common subsequence (definitions are short: the table is small).
const lineDiff = (before: ReadonlyArray<string>, after: ReadonlyArray<string>): ReadonlyArray<string> => {
  const common: Array<Array<number>> = Array.from({ length: before.length + 1 }, () => Array(after.length + 1).fill(0))
  for (let i = before.length - 1; i >= 0; i--) {
    for (let j = after.length - 1; j >= 0; j--) {
      common[i]![j] = before[i] === after[j]
        ? common[i + 1]![j + 1]! + 1
        : Math.max(common[i + 1]![j]!, common[i]![j + 1]!)
    }
  }
  const out: Array<string> = []
  let i = 0
  let j = 0
  while (i < before.length || j < after.length) {
    if (i < before.length && j < after.length && before[i] === after[j]) {
      out.push(`  ${before[i++]}`)
      j++
    } else if (i < before.length && (j === after.length || common[i + 1]![j]! >= common[i]![j + 1]!)) {
      out.push(`- ${before[i++]}`)
    } else {
      out.push(`+ ${after[j++]}`)
    }
  }
  return out
}

/**
 * Each field that differs (every field of `after` for a new tool), as `field:` and its
 * line diff indented under it.
 */
export const definitionDiff = (before: Definition | undefined, after: Definition): ReadonlyArray<string> =>
  fields.flatMap((field) => {
    const old = linesOf(before?.[field])
    const next = linesOf(after[field])
    if (old.join("\n") === next.join("\n")) return []
    return [`${field}:`, ...lineDiff(old, next).map((line) => `  ${Hidden.flag(line)}`)]
  })
