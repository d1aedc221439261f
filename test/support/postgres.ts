// PostgreSQL for the cluster tests: the server at MCP_FLEET_PG_URL (default the machine's,
// postgres://postgres@127.0.0.1:5432/test), and a fresh database per test file so files run in
// parallel. When nothing answers, the test fails with a message naming the URL: never a skip.
import pg from "pg"

/** The server's URL: `MCP_FLEET_PG_URL`, else the machine's. */
export const serverUrl = (): string => process.env.MCP_FLEET_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test"

/** A fresh database and how to drop it. */
export interface FreshDatabase {
  readonly url: string
  readonly name: string
  readonly drop: () => Promise<void>
}

const admin = async () => {
  const client = new pg.Client({ connectionString: serverUrl(), connectionTimeoutMillis: 5000 })
  try {
    await client.connect()
  } catch (error) {
    throw new Error(
      `the cluster tests need PostgreSQL at ${serverUrl()} (set MCP_FLEET_PG_URL to another server): ${String(error)}`
    )
  }
  return client
}

/**
 * Creates `mcp_fleet_<random>` on the server; `drop` ends its connections and drops it.
 */
export const freshDatabase = async (): Promise<FreshDatabase> => {
  const name = `mcp_fleet_${Math.random().toString(36).slice(2, 10)}`
  const client = await admin()
  try {
    await client.query(`CREATE DATABASE ${name}`)
  } finally {
    await client.end()
  }
  const url = new URL(serverUrl())
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    name,
    drop: async () => {
      const dropping = await admin()
      try {
        await dropping.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      } finally {
        await dropping.end()
      }
    }
  }
}

/** Runs one query on `url` and returns its rows (for tests that look at the tables). */
export const query = async <A = Record<string, unknown>>(url: string, text: string, values: Array<unknown> = []) => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query(text, values)).rows as Array<A>
  } finally {
    await client.end()
  }
}
