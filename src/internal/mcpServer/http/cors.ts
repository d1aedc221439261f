/**
 * CORS for the gateway's HTTP endpoint: an Origin that passed the guard may read the
 * answers, the session id included, and its preflight is answered.
 *
 * @internal
 */
import { Answer } from "./response.js"

/** The headers every answer to `origin` carries; none without an Origin. */
export const headers = (origin: string | undefined): Record<string, string> =>
  origin === undefined ? {} : {
    "access-control-allow-origin": origin,
    "access-control-expose-headers": "mcp-session-id, www-authenticate",
    vary: "Origin"
  }

/** The answer to a preflight (OPTIONS) from `origin`. */
export const preflight = (origin: string | undefined): Answer =>
  new Answer(204, {
    ...headers(origin),
    "access-control-allow-methods": "GET, POST, DELETE",
    "access-control-allow-headers":
      "authorization, content-type, accept, last-event-id, mcp-protocol-version, mcp-session-id",
    "access-control-max-age": "600"
  })
