/**
 * Secrets leave their Redacted wrapper only on the way out of the process: into a child's
 * environment, onto an HTTP request.
 *
 * @internal
 */
import * as Redacted from "effect/Redacted"

/** A record of values, some of them Redacted, with every value in plain text. */
export const revealAll = (
  values: Readonly<Record<string, string | Redacted.Redacted<string>>> | undefined
): Record<string, string> => {
  const out: Record<string, string> = {}
  if (values) {
    for (const [key, value] of Object.entries(values)) {
      out[key] = Redacted.isRedacted(value)
        ? Redacted.value(value)
        : value
    }
  }
  return out
}

/** An OAuth access token as the value of an `Authorization` header, still Redacted. */
export const bearer = (token: Redacted.Redacted<string>): Redacted.Redacted<string> =>
  Redacted.make(`Bearer ${Redacted.value(token)}`)
