/**
 * The cluster's own tables in PostgreSQL, beside @effect/cluster's: `mcp_fleet_servers` (one
 * row per configured server: its digest, the runner hosting it, its status and its lists, for
 * every replica to read) and `mcp_fleet_calls` (each routed call's claim, taken before the
 * tool runs), `mcp_fleet_credentials` (the token store of per-principal instances: each
 * (server, principal)'s credentials, a JSON object of names to values) and
 * `mcp_fleet_instances` (the per-principal instances running now). Changes are told on the `mcp_fleet` channel with `SELECT pg_notify(...)`
 * (`PgClient.notify` is broken in sql-pg 0.53); a listener re-reads the rows, never trusts a
 * payload.
 *
 * @since 0.3.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type * as SqlError from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"

/** The channel every replica listens on. */
export const channel = "mcp_fleet"

/** One server's row as stored. `status` and `lists` are JSON values (see `wire.ts`). */
export interface Row {
  readonly name: string
  readonly position: number
  readonly runner: string | null
  readonly status: unknown
  readonly lists: unknown
}

// Several processes start at once: the advisory lock makes the tables' creation one at a time.
const MIGRATION_LOCK = 4_721_027

/** Creates the tables when they are missing. */
export const migrate: Effect.Effect<void, SqlError.SqlError, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.withTransaction(Effect.gen(function*() {
    yield* sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`
    yield* sql`CREATE TABLE IF NOT EXISTS mcp_fleet_servers (
      name text PRIMARY KEY,
      position integer NOT NULL DEFAULT 0,
      digest text,
      runner text,
      status jsonb,
      lists jsonb,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
    yield* sql`CREATE TABLE IF NOT EXISTS mcp_fleet_calls (
      id text PRIMARY KEY,
      server text NOT NULL,
      tool text NOT NULL,
      runner text NOT NULL,
      claimed_at timestamptz NOT NULL DEFAULT now()
    )`
    yield* sql`CREATE TABLE IF NOT EXISTS mcp_fleet_credentials (
      server text NOT NULL,
      principal text NOT NULL,
      credentials jsonb NOT NULL,
      PRIMARY KEY (server, principal)
    )`
    yield* sql`CREATE TABLE IF NOT EXISTS mcp_fleet_instances (
      id text PRIMARY KEY,
      server text NOT NULL,
      principal text NOT NULL,
      runner text NOT NULL,
      state text NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  }))
})

/** Tells every replica that the servers' rows changed. */
export const notify = (payload: string): Effect.Effect<void, SqlError.SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT pg_notify(${channel}, ${payload})`.pipe(Effect.asVoid))

/** Every server's row, in config order. */
export const readRows: Effect.Effect<ReadonlyArray<Row>, SqlError.SqlError, SqlClient.SqlClient> = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql<Row>`SELECT name, position, runner, status, lists FROM mcp_fleet_servers ORDER BY position, name`
)

/**
 * Makes the rows equal to the desired servers (name, config digest, order): new ones added,
 * gone ones deleted. Returns the names that were deleted.
 */
export const writeDesired = (
  desired: ReadonlyArray<{ readonly name: string; readonly digest: string }>
): Effect.Effect<ReadonlyArray<string>, SqlError.SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const names = desired.map((server) => server.name)
    const gone = yield* sql<
      { name: string }
    >`DELETE FROM mcp_fleet_servers WHERE name NOT IN (SELECT jsonb_array_elements_text(${
      JSON.stringify(names)
    }::jsonb)) RETURNING name`
    for (const [position, server] of desired.entries()) {
      yield* sql`INSERT INTO mcp_fleet_servers (name, position, digest) VALUES (${server.name}, ${position}, ${server.digest})
        ON CONFLICT (name) DO UPDATE SET position = EXCLUDED.position, digest = EXCLUDED.digest`
    }
    return gone.map((row) => row.name)
  })

/**
 * Writes what the hosting runner knows of a server: its runner, status and lists (`undefined`:
 * the lists stored stay).
 */
export const writeHosted = (
  name: string,
  runner: string | null,
  status: unknown,
  lists: unknown
): Effect.Effect<void, SqlError.SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const listed = lists === undefined ? null : JSON.stringify(lists)
    yield* sql`INSERT INTO mcp_fleet_servers (name, runner, status, lists, updated_at)
      VALUES (${name}, ${runner}, ${JSON.stringify(status)}::jsonb, ${listed}::jsonb, now())
      ON CONFLICT (name) DO UPDATE SET runner = EXCLUDED.runner, status = EXCLUDED.status,
        lists = COALESCE(EXCLUDED.lists, mcp_fleet_servers.lists), updated_at = now()`
  })

/** Forgets the status `runner` wrote for a server it no longer hosts (its entity moved away). */
export const writeLeft = (name: string, runner: string): Effect.Effect<void, SqlError.SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql`UPDATE mcp_fleet_servers SET runner = NULL, status = NULL, updated_at = now()
      WHERE name = ${name} AND runner = ${runner}`.pipe(Effect.asVoid)
  )

/** What a claim found: a fresh claim, or the claim of an earlier delivery of the same call. */
export type Claim =
  | { readonly _tag: "Claimed" }
  | { readonly _tag: "Existing"; readonly runner: string }

/** Claims a call's id for this runner, or reports the claim that exists. */
export const claim = (
  id: string,
  server: string,
  tool: string,
  runner: string
): Effect.Effect<Claim, SqlError.SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const inserted = yield* sql`INSERT INTO mcp_fleet_calls (id, server, tool, runner)
      VALUES (${id}, ${server}, ${tool}, ${runner}) ON CONFLICT (id) DO NOTHING RETURNING id`
    if (inserted.length > 0) return { _tag: "Claimed" } as const
    const [existing] = yield* sql<{ runner: string }>`SELECT runner FROM mcp_fleet_calls WHERE id = ${id}`
    return { _tag: "Existing", runner: existing?.runner ?? "" } as const
  })

/** Takes over a claim for a retry on this runner. */
export const reclaim = (id: string, runner: string): Effect.Effect<void, SqlError.SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql`UPDATE mcp_fleet_calls SET runner = ${runner}, claimed_at = now() WHERE id = ${id}`.pipe(
        Effect.asVoid
      )
  )

/** Forgets claims older than `seconds`: no delivery of theirs can still arrive. */
export const pruneClaims = (seconds: number): Effect.Effect<void, SqlError.SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql`DELETE FROM mcp_fleet_calls WHERE claimed_at < now() - make_interval(secs => ${seconds})`.pipe(
        Effect.asVoid
      )
  )

/** One per-principal instance running now, as its runner wrote it. */
export interface InstanceRow {
  readonly server: string
  readonly principal: string
  readonly runner: string
  readonly state: string
}

/** `principal`'s credentials for `server` in the token store, if it has any. */
export const readCredentials = (
  server: string,
  principal: string
): Effect.Effect<Readonly<Record<string, string>> | undefined, SqlError.SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ credentials: Record<string, string> }>`SELECT credentials FROM mcp_fleet_credentials
      WHERE server = ${server} AND principal = ${principal}`
    return row?.credentials
  })

/** Writes (or updates) the row of the instance `id` this runner hosts. */
export const writeInstance = (
  id: string,
  row: InstanceRow
): Effect.Effect<void, SqlError.SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql`INSERT INTO mcp_fleet_instances (id, server, principal, runner, state, updated_at)
      VALUES (${id}, ${row.server}, ${row.principal}, ${row.runner}, ${row.state}, now())
      ON CONFLICT (id) DO UPDATE SET runner = EXCLUDED.runner, state = EXCLUDED.state, updated_at = now()`.pipe(
        Effect.asVoid
      )
  )

/** Deletes the row of the instance `id`, when `runner` wrote it (the instance ended there). */
export const deleteInstance = (
  id: string,
  runner: string
): Effect.Effect<void, SqlError.SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`DELETE FROM mcp_fleet_instances WHERE id = ${id} AND runner = ${runner}`.pipe(Effect.asVoid)
  )

/** Every per-principal instance running now, by server and principal. */
export const readInstances: Effect.Effect<ReadonlyArray<InstanceRow>, SqlError.SqlError, SqlClient.SqlClient> = Effect
  .flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<InstanceRow>`SELECT server, principal, runner, state FROM mcp_fleet_instances ORDER BY server, principal`
  )
