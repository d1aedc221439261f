/**
 * `WWW-Authenticate` challenges (RFC 9110 §11.6.1): the scheme and its auth-params, as a
 * protected resource sends them on 401 and 403 (RFC 6750 §3, RFC 9728 §5.1). Written here
 * because oauth4webapi keeps its parser private.
 *
 * @internal
 */

/** One challenge: its scheme (lower-cased) and parameters (names lower-cased). */
export interface Challenge {
  readonly scheme: string
  readonly params: ReadonlyMap<string, string>
}

// A scheme, or an auth-param (name = token or quoted-string), or a token68.
const TOKEN = /^\s*,?\s*([!#$%&'*+\-.^_`|~0-9A-Za-z]+)/
const PARAM = /^\s*,?\s*([!#$%&'*+\-.^_`|~0-9A-Za-z]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([!#$%&'*+\-.^_`|~0-9A-Za-z/=:]+))/

/** Every challenge of a header value; what cannot be parsed ends the list. */
export const parse = (header: string | undefined): ReadonlyArray<Challenge> => {
  const out: Array<Challenge> = []
  let rest = header ?? ""
  while (rest.trim() !== "") {
    const scheme = TOKEN.exec(rest)
    if (scheme === null) break
    rest = rest.slice(scheme[0].length)
    const params = new Map<string, string>()
    for (;;) {
      // A token after the scheme that is not followed by "=" starts the next challenge.
      const param = PARAM.exec(rest)
      if (param === null) break
      params.set(param[1]!.toLowerCase(), param[2] !== undefined ? param[2].replace(/\\(.)/g, "$1") : param[3]!)
      rest = rest.slice(param[0].length)
    }
    out.push({ scheme: scheme[1]!.toLowerCase(), params })
  }
  return out
}

/** What the authorization client takes from a refusal: any scheme's parameters count. */
export interface Refusal {
  readonly status: number
  /** RFC 9728 §5.1: where the protected-resource metadata is. */
  readonly resourceMetadata: string | undefined
  /** The scopes the resource asks for. */
  readonly scope: string | undefined
  /** `invalid_token`, `insufficient_scope`, … */
  readonly error: string | undefined
}

/** A 401 or 403 and its challenge: Bearer's parameters first, then any other scheme's. */
export const refusal = (status: number, header: string | undefined): Refusal => {
  const challenges = parse(header)
  const ordered = [
    ...challenges.filter((c) => c.scheme === "bearer"),
    ...challenges.filter((c) => c.scheme !== "bearer")
  ]
  const param = (name: string) => ordered.find((c) => c.params.has(name))?.params.get(name)
  return { status, resourceMetadata: param("resource_metadata"), scope: param("scope"), error: param("error") }
}
