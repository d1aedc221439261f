/**
 * The file token store: one JSON file per issuer and resource (`tokens-<digest>.json`) and
 * one per issuer for a registered client (`client-<digest>.json`), in a directory of mode
 * 0700, each file of mode 0600 and written whole by rename. A lock file per key
 * (`<name>.lock`, made with O_EXCL) makes a refresh single-flight across the processes
 * sharing the directory; a lock older than {@link STALE_MS} is taken as left by a process
 * that died. `changes` watches the directory: a token file written by any process.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import { watch } from "node:fs"
import * as fs from "node:fs/promises"
import * as NodePath from "node:path"
import { randomHex, sha256Hex } from "../crypto.js"
import { type ClientRecord, OAuthError, type TokenRecord, type TokenStore } from "./model.js"

/** A lock this old is broken: its process died holding it. */
export const STALE_MS = 30_000

const digest = (text: string) => sha256Hex(text).slice(0, 32)

/** The file of a resource's tokens at an issuer. */
export const tokensFile = (issuer: string, resource: string) => `tokens-${digest(`${issuer}\n${resource}`)}.json`

const clientFile = (issuer: string) => `client-${digest(issuer)}.json`

const storeError = (message: string) => new OAuthError({ server: "token store", step: "store", message })

const errorText = (cause: unknown) => (cause instanceof Error ? cause.message : String(cause))

const reveal = (
  value: Redacted.Redacted<string> | undefined
) => (value === undefined ? undefined : Redacted.value(value))

const redact = (value: unknown) => (typeof value === "string" ? Redacted.make(value) : undefined)

const tokensToJson = (record: TokenRecord) => ({
  ...record,
  accessToken: Redacted.value(record.accessToken),
  refreshToken: reveal(record.refreshToken),
  dpopKey: reveal(record.dpopKey)
})

const tokensFromJson = (json: Record<string, unknown>): TokenRecord => ({
  ...(json as unknown as TokenRecord),
  accessToken: Redacted.make(String(json.accessToken)),
  refreshToken: redact(json.refreshToken),
  dpopKey: redact(json.dpopKey)
})

const clientToJson = (record: ClientRecord) => ({ ...record, clientSecret: reveal(record.clientSecret) })

const clientFromJson = (json: Record<string, unknown>): ClientRecord => ({
  ...(json as unknown as ClientRecord),
  clientSecret: redact(json.clientSecret)
})

/** A store in `dir`. */
export const make = (dir: string): TokenStore => {
  const path = (name: string) => NodePath.join(dir, name)

  const read = <A>(name: string, decode: (json: Record<string, unknown>) => A) =>
    Effect.tryPromise({
      try: async () => {
        try {
          return Option.some(decode(JSON.parse(await fs.readFile(path(name), "utf8"))))
        } catch (cause) {
          if ((cause as NodeJS.ErrnoException).code === "ENOENT") return Option.none()
          throw cause
        }
      },
      // The file's text is never quoted: it holds tokens.
      catch: (cause) =>
        storeError(`cannot read ${path(name)}: ${cause instanceof SyntaxError ? "not JSON" : errorText(cause)}`)
    })

  const write = (name: string, value: unknown) =>
    Effect.tryPromise({
      try: async () => {
        await fs.mkdir(dir, { recursive: true, mode: 0o700 })
        const temp = path(`.${name}.${randomHex(6)}.tmp`)
        try {
          await fs.writeFile(temp, JSON.stringify(value, null, 2), { mode: 0o600, flag: "wx" })
          await fs.rename(temp, path(name))
        } catch (cause) {
          await fs.rm(temp, { force: true })
          throw cause
        }
      },
      catch: (cause) => storeError(`cannot write ${path(name)}: ${errorText(cause)}`)
    })

  const remove = (name: string) =>
    Effect.tryPromise({
      try: () => fs.rm(path(name), { force: true }),
      catch: (cause) => storeError(`cannot remove ${path(name)}: ${errorText(cause)}`)
    })

  // Takes the lock file, waiting while another process holds it, breaking a stale one.
  const acquire = (lock: string): Effect.Effect<void, OAuthError> =>
    Effect.tryPromise({
      try: async () => {
        await fs.mkdir(dir, { recursive: true, mode: 0o700 })
        try {
          await (await fs.open(lock, "wx", 0o600)).close()
          return true
        } catch (cause) {
          if ((cause as NodeJS.ErrnoException).code !== "EEXIST") throw cause
          const stat = await fs.stat(lock).catch(() => undefined)
          if (stat !== undefined && Date.now() - stat.mtimeMs > STALE_MS) await fs.rm(lock, { force: true })
          return false
        }
      },
      catch: (cause) => storeError(`cannot lock ${lock}: ${errorText(cause)}`)
    }).pipe(
      Effect.flatMap((taken) => taken ? Effect.void : Effect.zipRight(Effect.sleep(Duration.millis(25)), acquire(lock)))
    )

  // Every token file that appears, changes or goes, in this process or another; nothing when
  // the directory cannot be made or watched (no fleet reacts, the store still works).
  const changes = Stream.async<void>((emit) => {
    let watcher: ReturnType<typeof watch> | undefined
    let closed = false
    fs.mkdir(dir, { recursive: true, mode: 0o700 }).then(() => {
      if (closed) return
      watcher = watch(dir, (_event, name) => {
        if (name !== null && name.startsWith("tokens-") && name.endsWith(".json")) void emit.single(undefined)
      })
      watcher.on("error", () => void emit.end())
    }, () => void emit.end())
    return Effect.sync(() => {
      closed = true
      watcher?.close()
    })
  })

  return {
    changes,
    getTokens: (issuer, resource) => read(tokensFile(issuer, resource), tokensFromJson),
    setTokens: (record) => write(tokensFile(record.issuer, record.resource), tokensToJson(record)),
    removeTokens: (issuer, resource) => remove(tokensFile(issuer, resource)),
    listTokens: Effect.tryPromise({
      try: async () => {
        const names = await fs.readdir(dir).catch((cause: NodeJS.ErrnoException) => {
          if (cause.code === "ENOENT") return []
          throw cause
        })
        return names.filter((name) => name.startsWith("tokens-") && name.endsWith(".json"))
      },
      catch: (cause) => storeError(`cannot list ${dir}: ${errorText(cause)}`)
    }).pipe(
      Effect.flatMap((names) => Effect.forEach(names, (name) => read(name, tokensFromJson))),
      Effect.map((records) => records.flatMap(Option.toArray))
    ),
    getClient: (issuer) => read(clientFile(issuer), clientFromJson),
    setClient: (record) => write(clientFile(record.issuer), clientToJson(record)),
    withLock: (key, effect) => {
      const lock = path(`${digest(key)}.lock`)
      return Effect.acquireUseRelease(
        acquire(lock),
        () => effect,
        () => Effect.promise(() => fs.rm(lock, { force: true }))
      )
    }
  }
}
