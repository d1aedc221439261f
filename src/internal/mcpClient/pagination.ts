/**
 * Listing every page of a paginated list, within limits: a server that pages forever, sends
 * too many items or repeats a cursor fails instead of holding the host.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as Schema from "effect/Schema"
import type { McpClient } from "../../McpClient.js"
import * as McpError from "../../McpError.js"
import type { Gate } from "./capabilities.js"

/**
 * How far one list may go.
 */
export interface Limits {
  readonly maxPages: number
  readonly maxItems: number
}

/**
 * Sends `method` once per page, following `nextCursor`, and gives all the items.
 */
export const listAll = <R extends { readonly nextCursor?: string | undefined }, A>(
  server: string,
  limits: Limits,
  request: (
    method: string,
    params: Record<string, unknown> | undefined,
    schema: Schema.Schema<R, any>
  ) => Effect.Effect<R, McpError.McpError>,
  method: string,
  schema: Schema.Schema<R, any>,
  itemsOf: (result: R) => ReadonlyArray<A>
): Effect.Effect<ReadonlyArray<A>, McpError.McpError> =>
  Effect.gen(function*() {
    const items: Array<A> = []
    const seen = new Set<string>()
    let cursor: string | undefined
    for (let page = 1;; page++) {
      if (page > limits.maxPages) {
        return yield* Effect.fail(
          McpError.limit(server, { what: `${method}: the number of pages`, size: page, limit: limits.maxPages })
        )
      }
      const result = yield* request(method, cursor === undefined ? undefined : { cursor }, schema)
      for (const item of itemsOf(result)) items.push(item)
      if (items.length > limits.maxItems) {
        return yield* Effect.fail(McpError.limit(server, {
          what: `${method}: the number of items`,
          size: items.length,
          limit: limits.maxItems
        }))
      }
      cursor = result.nextCursor
      if (cursor === undefined) return items
      if (seen.has(cursor)) {
        return yield* Effect.fail(
          McpError.validation(server, { method, message: `the server repeated the cursor ${JSON.stringify(cursor)}` })
        )
      }
      seen.add(cursor)
    }
  })

/**
 * Lists every page of `method` once the server supports `feature` (else Unsupported, saying
 * it cannot `action`), the items of each page picked by `itemsOf`.
 */
export type Lister = <R extends { readonly nextCursor?: string | undefined }, A>(
  feature: Parameters<Gate["gate"]>[0],
  action: string,
  method: string,
  schema: Schema.Schema<R, any>,
  itemsOf: (result: R) => ReadonlyArray<A>
) => Effect.Effect<ReadonlyArray<A>, McpError.McpError>

/**
 * The lister of a connection: `request` for every page, within `limits`, behind `gate`.
 */
export const makeLister = (
  server: string,
  limits: Limits,
  request: McpClient["request"],
  gate: Gate["gate"]
): Lister =>
(feature, action, method, schema, itemsOf) =>
  gate(feature, action, listAll(server, limits, request, method, schema, itemsOf))
