// PostgreSQL for the cluster tests: the server at MCP_FLEET_PG_URL (default the machine's,
// postgres://postgres@127.0.0.1:5432/test), and a fresh database per test file so files run in
// parallel. When nothing answers, the test fails with a message naming the URL: never a skip.
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqlClient from "@effect/sql/SqlClient"
import { afterAll, beforeAll } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"

/** The server's URL: `MCP_FLEET_PG_URL`, else the machine's. */
export const serverUrl = (): string => process.env.MCP_FLEET_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test"

/** A fresh database and how to drop it. */
export interface FreshDatabase {
  readonly url: string
  readonly name: string
  readonly drop: () => Promise<void>
}

/** Runs `text` on the database at `url` and returns its rows. */
export const query = <A extends object = Record<string, unknown>>(url: string, text: string): Promise<Array<A>> =>
  Effect.runPromise(
    Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<A>(text)).pipe(
      Effect.map((rows) => [...rows]),
      Effect.provide(PgClient.layer({ url: Redacted.make(url), connectTimeout: "5 seconds", maxConnections: 1 })),
      Effect.mapError((error) =>
        new Error(
          `the cluster tests need PostgreSQL at ${serverUrl()} (set MCP_FLEET_PG_URL to another server): ${
            String(error.cause ?? error.message)
          }`
        )
      )
    )
  )

/** Creates `mcp_fleet_<random>` on the server; `drop` ends its connections and drops it. */
export const freshDatabase = async (): Promise<FreshDatabase> => {
  const name = `mcp_fleet_${Math.random().toString(36).slice(2, 10)}`
  await query(serverUrl(), `CREATE DATABASE ${name}`)
  const url = new URL(serverUrl())
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    name,
    drop: () => query(serverUrl(), `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).then(() => undefined)
  }
}

/**
 * The fresh database of the test file that calls this at its top level: made before its
 * tests, dropped after them. Its `url` is there from the file's first test on.
 */
export const fileDatabase = (): { readonly url: string } => {
  let db: FreshDatabase | undefined
  beforeAll(async () => {
    db = await freshDatabase()
  })
  afterAll(async () => {
    await db?.drop()
  })
  return {
    get url() {
      if (db === undefined) throw new Error("the file's database is made before its first test")
      return db.url
    }
  }
}
