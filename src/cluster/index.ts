/**
 * `mcp-fleet/cluster`: the fleet sharded over runners on @effect/cluster and PostgreSQL (Node).
 * Needs the optional peer dependencies `@effect/cluster`, `@effect/rpc`, `@effect/sql` and
 * `@effect/sql-pg`.
 *
 * @since 0.3.0
 */

/**
 * @since 0.3.0
 */
export * as ClusterRegistry from "./ClusterRegistry.js"
