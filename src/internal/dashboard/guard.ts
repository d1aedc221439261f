/**
 * Who may use the dashboard, as a local notebook server decides it: a random token, given
 * in the URL printed at start and then kept in an HttpOnly cookie; the Host header must
 * name a loopback address (or the bound one) so a DNS-rebinding page cannot reach it; a
 * request that carries an Origin must come from the dashboard's own origin (not another
 * local port). Refusals never repeat
 * the token.
 *
 * @internal
 */
import { timingSafeEqual } from "../crypto.js"

export const COOKIE = "mcp_fleet_dashboard"

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]", "::1"])

const hostname = (value: string): string | undefined => {
  try {
    return new URL(value.includes("://") ? value : `http://${value}`).hostname.toLowerCase()
  } catch {
    return undefined
  }
}

const cookie = (header: string | null): string | undefined =>
  header?.split(";").map((part) => part.trim()).find((part) => part.startsWith(`${COOKIE}=`))?.slice(COOKIE.length + 1)

/** What a request is: refused (with a status and a reason), or let in, by URL token or cookie. */
export type Verdict =
  | { readonly _tag: "Refused"; readonly status: number; readonly reason: string }
  | { readonly _tag: "Allowed"; readonly byUrl: boolean }

export const make = (options: { readonly token: string; readonly host: string }) => {
  const bound = hostname(options.host)
  const hostAllowed = (host: string | undefined) => host !== undefined && (LOOPBACK.has(host) || host === bound)
  return (request: Request): Verdict => {
    const host = hostname(request.headers.get("host") ?? "")
    if (!hostAllowed(host)) return { _tag: "Refused", status: 403, reason: "this Host is not allowed" }
    const origin = request.headers.get("origin")
    if (origin !== null && origin !== new URL(request.url).origin) {
      return { _tag: "Refused", status: 403, reason: "this Origin is not allowed" }
    }
    const given = new URL(request.url).searchParams.get("token")
    if (given !== null && timingSafeEqual(given, options.token)) return { _tag: "Allowed", byUrl: true }
    const kept = cookie(request.headers.get("cookie"))
    if (kept !== undefined && timingSafeEqual(kept, options.token)) return { _tag: "Allowed", byUrl: false }
    return { _tag: "Refused", status: 401, reason: "open the URL with its token, as printed at start" }
  }
}

/** The cookie that keeps the token once the page was opened with it. */
export const setCookie = (token: string): string => `${COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/`
