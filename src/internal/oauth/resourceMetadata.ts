/**
 * A protected resource as its clients see it: the Protected Resource Metadata (RFC 9728)
 * and where it is served, the `WWW-Authenticate` challenges of its refusals (RFC 6750 §3,
 * RFC 9728 §5.1), and the scope check on top of the token's validation.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as ResourceServer from "../../ResourceServer.js"
import { makeValidator, ResourceServerError } from "./resourceServer.js"

const WELL_KNOWN = "/.well-known/oauth-protected-resource"

/** The path-aware metadata path of a resource, and the root one. */
export const metadataPaths = (resource: URL): ReadonlyArray<string> => {
  const path = resource.pathname.replace(/\/+$/, "")
  return path === "" ? [WELL_KNOWN] : [`${WELL_KNOWN}${path}`, WELL_KNOWN]
}

// An auth-param's quoted-string (RFC 9110 §5.6.4).
const quoted = (value: string) => `"${value.replace(/["\\]/g, "\\$&")}"`

/** A resource server for `options.resource`. */
export const make = (
  options: ResourceServer.Options & { readonly resource: string }
): Effect.Effect<ResourceServer.ResourceServer> =>
  Effect.map(makeValidator(options, options.audience ?? options.resource), (validator) => {
    const resource = new URL(options.resource)
    const paths = metadataPaths(resource)
    const metadataUrl = `${resource.origin}${paths[0]}`
    const required = options.scopes ?? []
    const missing = (principal: ResourceServer.Principal) => required.filter((s) => !principal.scopes.includes(s))
    const scoped = (principal: ResourceServer.Principal): ResourceServer.Principal | ResourceServerError => {
      const lacking = missing(principal)
      return lacking.length === 0 ? principal : new ResourceServerError({
        reason: "insufficient_scope",
        message: `the token lacks the scope${lacking.length > 1 ? "s" : ""} ${lacking.join(" ")}`
      })
    }
    const base = [`resource_metadata=${quoted(metadataUrl)}`]
    if (required.length > 0) base.push(`scope=${quoted(required.join(" "))}`)
    const plain = `Bearer ${base.join(", ")}`
    return {
      resource: options.resource,
      metadataUrl,
      metadataPaths: paths,
      metadata: {
        resource: options.resource,
        authorization_servers: [options.issuer],
        ...(required.length > 0 ? { scopes_supported: required } : {}),
        bearer_methods_supported: ["header"]
      },
      check: (token) => {
        const principal = validator.cached(token)
        return principal === undefined ? undefined : scoped(principal)
      },
      verify: (token) =>
        Effect.flatMap(validator.validate(token), (principal) => {
          const verdict = scoped(principal)
          return verdict instanceof ResourceServerError ? Effect.fail(verdict) : Effect.succeed(verdict)
        }),
      challenge: (error) =>
        error === undefined || error.reason === "unavailable"
          ? plain
          : `Bearer error=${quoted(error.reason)}, error_description=${quoted(error.message)}, ${base.join(", ")}`
    }
  })
