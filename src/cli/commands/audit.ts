/**
 * `audit`: the audit log's own tools. `audit verify [file]` checks the hash chain and the
 * checkpoints' signatures of a log (default: the config's `audit` file) and says where it was
 * edited, cut or added to; `audit key` makes an Ed25519 key for the config's `auditKey`.
 *
 * @since 0.2.0
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import * as NodePath from "node:path"
import * as Policy from "../../Policy.js"
import * as CliError from "../CliError.js"
import * as Fleet from "../Fleet.js"
import * as Render from "../Render.js"
import * as Root from "../Root.js"
import * as Settings from "../Settings.js"

/**
 * Verifies the log at `path`: every line, streamed in 1 MiB chunks (a last line without its
 * newline too), through the chain's Verifier.
 *
 * @since 0.2.0
 * @category verify
 */
export const verifyFile = (
  path: string,
  options: Policy.AuditVerifyOptions
): Effect.Effect<Policy.AuditReport, CliError.CliError> =>
  Effect.async<Policy.AuditReport, CliError.CliError>((resume) => {
    const verifier = Policy.makeAuditVerifier(options)
    let carry = ""
    const stream = fs.createReadStream(path, { encoding: "utf8", highWaterMark: 1 << 20 })
    stream.on("data", (chunk) => {
      const lines = (carry + chunk).split("\n")
      carry = lines.pop()!
      for (const line of lines) verifier.push(line)
    })
    stream.once("end", () => {
      if (carry !== "") verifier.push(carry)
      resume(Effect.succeed(verifier.finish()))
    })
    stream.once("error", (error) => resume(Effect.fail(CliError.failure(`cannot read ${path}: ${error.message}`))))
    return Effect.sync(() => stream.destroy())
  })

// The public key checkpoints must carry: --public-key, else the one of the key the fleet signs with.
const trustedKey = (given: Option.Option<string>, keyFile: string | undefined) =>
  Effect.gen(function*() {
    if (Option.isSome(given)) return given.value
    const fromEnv = process.env[Policy.AUDIT_KEY_ENV]
    if (fromEnv === undefined && keyFile === undefined) return undefined
    const text = fromEnv ??
      (yield* Effect.orElseSucceed((yield* FileSystem.FileSystem).readFileString(keyFile!), () => ""))
    const publicKey = Policy.auditPublicKey(text)
    if (Either.isLeft(publicKey)) {
      const source = fromEnv === undefined ? keyFile : Policy.AUDIT_KEY_ENV
      return yield* CliError.failure(`the audit key in ${source} is not usable: ${publicKey.left}`)
    }
    return publicKey.right
  })

const summary = (file: string, report: Policy.AuditReport, trusted: string | undefined): ReadonlyArray<string> =>
  [
    `${Settings.tilde(file)}: ${report.lines} lines, ${report.checkpoints} checkpoints (${report.signed} signed)${
      report.closed ? ", closed" : ""
    }`,
    ...(report.signed > 0 && trusted === undefined
      ? [`signed by ${report.keys.join(", ")}, not checked against a key of yours (--public-key)`]
      : []),
    `head: ${report.head} (keep it elsewhere; --anchor checks it is still there)`,
    ...report.notes.map((note) => `line ${note.line}: ${note.what}`),
    ...report.problems.map((problem) => `line ${problem.line}: ${problem.what}`),
    report.problems.length === 0 ? "ok: no line was edited, inserted, deleted or cut off" : ""
  ].filter((line) => line !== "")

const verify = (
  settings: Settings.Settings,
  given: {
    readonly file: Option.Option<string>
    readonly publicKey: Option.Option<string>
    readonly anchor: Option.Option<string>
    readonly open: boolean
  }
) =>
  Effect.gen(function*() {
    // A named file needs no config; one there still gives the key to check against.
    const read = Effect.map(Fleet.readConfig(settings), (loaded) => loaded.policy)
    const policy: Policy.Config = Option.isSome(given.file)
      ? yield* Effect.orElseSucceed(read, () => ({}))
      : yield* read
    const file = Option.isSome(given.file) ? NodePath.resolve(given.file.value) : policy.audit
    if (file === undefined) {
      return yield* CliError.usage(
        "the config has no audit log (policy.audit); name the file: mcp-fleet audit verify <file>"
      )
    }
    const publicKey = yield* trustedKey(given.publicKey, policy.auditKey)
    const report = yield* verifyFile(file, {
      publicKey,
      anchor: Option.getOrUndefined(given.anchor),
      open: given.open
    })
    if (settings.json) yield* Render.json({ file, ok: report.problems.length === 0, ...report })
    else yield* Render.lines(summary(file, report, publicKey))
    if (report.problems.length > 0) {
      return yield* new CliError.CliError({ reason: `the audit log ${file} was tampered with or damaged`, exitCode: 1 })
    }
  })

/**
 * `mcp-fleet audit verify [file]` and `mcp-fleet audit key`.
 *
 * @since 0.2.0
 * @category commands
 */
export const audit = Command.make("audit", {
  ...Settings.options,
  action: Args.choice([["verify", "verify"], ["key", "key"]], { name: "verify|key" }).pipe(
    Args.withDescription("verify: check a log; key: make a signing key for policy.auditKey")
  ),
  file: Args.text({ name: "file" }).pipe(
    Args.withDescription("The log to verify; default: the config's policy.audit"),
    Args.optional
  ),
  publicKey: Options.text("public-key").pipe(
    Options.withDescription("The public key (base64url) checkpoints must be signed with; default: policy.auditKey's"),
    Options.optional
  ),
  anchor: Options.text("anchor").pipe(
    Options.withDescription("A head printed by an earlier verify (sha256:…), which must still be in the log"),
    Options.optional
  ),
  open: Options.boolean("open").pipe(
    Options.withDescription("The log is still being written: its end need not be a closing checkpoint")
  )
}, (given) =>
  Effect.gen(function*() {
    const settings = yield* Root.settings(given)
    if (given.action === "verify") return yield* verify(settings, given)
    const key = Policy.newAuditKey()
    if (settings.json) return yield* Render.json(key)
    yield* Render.lines([
      `private key: ${key.privateKey}`,
      `public key:  ${key.publicKey}`,
      `Put the private key alone in a file only the fleet can read, named by policy.auditKey (or in ${Policy.AUDIT_KEY_ENV});`,
      "keep the public key where the log's writer cannot change it, for: mcp-fleet audit verify --public-key <it>"
    ])
  })).pipe(Command.withDescription("Verify the audit log's hash chain and signatures; make its signing key"))
