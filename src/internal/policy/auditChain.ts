/**
 * The audit log's hash chain: the format of a chained line and of a checkpoint, their
 * Ed25519 signatures, and the verifier `mcp-fleet audit verify` runs.
 *
 * Each line is a JSON object whose last two fields are `"line":<its line number>` and
 * `"prev":"sha256:<hex>"`, the SHA-256 of the line before it (its UTF-8 bytes, without the
 * newline; 64 zeros for the first line). A checkpoint line (`{"checkpoint":"every"|"close",…}`)
 * is written every {@link CHECKPOINT_EVERY} entries and when the writer closes; with a key it
 * carries `key` (the public key) and ends with `"sig"`, the Ed25519 signature of the line as it
 * is without `sig`, so a signature covers every line before it through the chain.
 *
 * @internal
 */
import { ed25519 } from "@noble/curves/ed25519.js"
import { base64url, fromBase64, sha256Hex, utf8Bytes } from "../crypto.js"

/** The `prev` of a file's first line. */
export const GENESIS = `sha256:${"0".repeat(64)}`

/** Entries between two checkpoints. */
export const CHECKPOINT_EVERY = 1000

/** `sha256:` and the hex SHA-256 of a line's UTF-8 bytes (Node's hash where there is one, see crypto.ts). */
export const lineHash = (line: string): string => `sha256:${sha256Hex(line)}`

/** An entry's JSON (an object) as a chained line, without the newline. */
export const chained = (json: string, line: number, prev: string): string =>
  `${json.slice(0, -1)},"line":${line},"prev":"${prev}"}`

/** An Ed25519 key pair read from its private key (32 bytes, base64, base64url or hex). */
export interface AuditKey {
  readonly secret: Uint8Array
  /** The public key, base64url. */
  readonly publicKey: string
}

/** The key, or why `text` is not one. */
export const parseKey = (text: string): AuditKey | string => {
  const trimmed = text.trim()
  let bytes: Uint8Array
  try {
    bytes = /^[0-9a-fA-F]{64}$/.test(trimmed)
      ? Uint8Array.from(trimmed.match(/../g)!, (pair) => parseInt(pair, 16))
      : fromBase64(trimmed)
  } catch {
    return "it is neither hex nor base64"
  }
  if (bytes.length !== 32) return `it is ${bytes.length} bytes, not the 32 of an Ed25519 private key`
  return { secret: bytes, publicKey: base64url(ed25519.getPublicKey(bytes)) }
}

/** A new private key, base64url, and its public key. */
export const newKey = (): { readonly privateKey: string; readonly publicKey: string } => {
  const secret = ed25519.utils.randomSecretKey()
  return { privateKey: base64url(secret), publicKey: base64url(ed25519.getPublicKey(secret)) }
}

/** A checkpoint line at line number `line`, signed when there is a key. */
export const checkpoint = (
  kind: "every" | "close",
  time: string,
  line: number,
  prev: string,
  key: AuditKey | undefined
): string => {
  const keyField = key === undefined ? "" : `,"key":"${key.publicKey}"`
  const unsigned = `{"checkpoint":"${kind}","time":"${time}"${keyField},"line":${line},"prev":"${prev}"}`
  if (key === undefined) return unsigned
  const sig = base64url(ed25519.sign(utf8Bytes(unsigned), key.secret))
  return `${unsigned.slice(0, -1)},"sig":"${sig}"}`
}

// The chain's fields at the end of a line, and a checkpoint's signature after them. Matched
// from the last `"line":`, which only the key can be (in a JSON string its quotes are escaped):
// a regular expression tried at every offset of a line cost verify seconds per million lines.
const TAIL = /^"line":(\d+),"prev":"(sha256:[0-9a-f]{64})"(?:,"sig":"([A-Za-z0-9_-]+)")?\}$/
const tailOf = (line: string): RegExpExecArray | null => {
  const at = line.lastIndexOf(`"line":`)
  return at === -1 ? null : TAIL.exec(line.slice(at))
}

/** The line number a chained line gives itself, or undefined for a line without the chain. */
export const lineNumberOf = (line: string): number | undefined => {
  const match = tailOf(line)
  return match === null ? undefined : Number(match[1])
}

/** Something wrong at a line. */
export interface Finding {
  readonly line: number
  readonly what: string
}

/** What `verify` found. */
export interface Report {
  readonly lines: number
  readonly checkpoints: number
  readonly signed: number
  /** The last line's hash and number: an anchor to keep elsewhere (`--anchor`). */
  readonly head: string
  /** Whether the last line is a closing checkpoint. */
  readonly closed: boolean
  /** The public keys seen on checkpoints. */
  readonly keys: ReadonlyArray<string>
  readonly problems: ReadonlyArray<Finding>
  readonly notes: ReadonlyArray<Finding>
}

/** What the verifier is told besides the lines. */
export interface VerifyOptions {
  /** The public key (base64url) every checkpoint must be signed with. */
  readonly publicKey?: string | undefined
  /** A line hash recorded earlier, which must still be in the log. */
  readonly anchor?: string | undefined
  /** The log may still be written to: no closing checkpoint is expected. */
  readonly open?: boolean | undefined
  /** The hash of a line; Node's by default where there is one. */
  readonly hash?: ((line: string) => string) | undefined
}

const signatureProblem = (line: string, sig: string, trusted: string | undefined): string | undefined => {
  const key = /"key":"([A-Za-z0-9_-]+)"/.exec(line)?.[1]
  if (key === undefined) return "the checkpoint has a signature but no key"
  if (trusted !== undefined && key !== trusted) return `the checkpoint is signed by another key (${key})`
  const unsigned = `${line.slice(0, line.lastIndexOf(`,"sig":"`))}}`
  let valid: boolean
  try {
    valid = ed25519.verify(fromBase64(sig), utf8Bytes(unsigned), fromBase64(key))
  } catch {
    valid = false
  }
  return valid ? undefined : "the checkpoint's signature does not verify: the checkpoint was edited"
}

// Why the chain breaks before line `at` (physical), from the `prev` and line number it gives.
const breakOf = (at: number, shift: number, prevOk: boolean, skipsOne: boolean): string | undefined => {
  if (shift > 0) return `${shift} line(s) deleted before line ${at}`
  if (shift < 0) {
    const first = at + shift
    return first === at - 1
      ? `line ${first} was inserted`
      : `lines ${first}–${at - 1} were inserted`
  }
  if (prevOk) return undefined
  if (skipsOne) return `line ${at - 1} was inserted (line ${at} follows line ${at - 2})`
  return `line ${at - 1} was edited (its hash is not the one line ${at} names), or line ${at}'s "prev" was`
}

/**
 * Checks a log's lines one at a time (`push`), in constant memory, then `finish`es with what
 * it found: an edit, insertion or deletion breaks the chain at the line after it and shifts
 * the line numbers; a cut-off tail leaves no closing checkpoint (or a cut line); an edited
 * checkpoint fails its signature.
 */
export class Verifier {
  private readonly hash: (line: string) => string
  private readonly problems: Array<Finding> = []
  private readonly notes: Array<Finding> = []
  private readonly keys = new Set<string>()
  private at = 0
  private prevHash = GENESIS
  private beforePrev = GENESIS
  private shift = 0
  private chainedYet = false
  private checkpoints = 0
  private signed = 0
  private lastCheckpoint: { readonly at: number; readonly close: boolean } | undefined
  private anchorAt: number | undefined

  constructor(readonly options: VerifyOptions = {}) {
    this.hash = options.hash ?? lineHash
  }

  /** Checks the next line (without its newline). */
  push(line: string): void {
    const at = ++this.at
    const match = tailOf(line)
    if (match === null) this.unchained(at, line)
    else this.link(at, line, Number(match[1]), match[2]!, match[3])
    this.beforePrev = this.prevHash
    this.prevHash = this.hash(line)
    if (this.prevHash === this.options.anchor) this.anchorAt = at
  }

  private unchained(at: number, line: string): void {
    if (this.chainedYet) this.problems.push({ line: at, what: "not a chained audit line: it was edited or cut" })
    else if (at === 1) {
      this.notes.push({ line: at, what: "lines without the hash chain (an older mcp-fleet) start here" })
    } else if (line === "") this.problems.push({ line: at, what: "an empty line" })
  }

  private link(at: number, line: string, number: number, prev: string, sig: string | undefined): void {
    this.chainedYet = true
    const shift = number - at
    const problem = breakOf(at, shift - this.shift, prev === this.prevHash, at > 2 && prev === this.beforePrev)
    if (problem !== undefined) this.problems.push({ line: at, what: problem })
    this.shift = shift
    if (!line.startsWith(`{"checkpoint":`)) return
    this.checkpoints++
    const trusted = this.options.publicKey
    const wrong = sig === undefined
      ? trusted === undefined ? undefined : "the checkpoint is not signed"
      : signatureProblem(line, sig, trusted)
    if (wrong !== undefined) this.problems.push({ line: at, what: wrong })
    if (sig !== undefined && wrong === undefined) {
      this.signed++
      this.keys.add(/"key":"([A-Za-z0-9_-]+)"/.exec(line)![1]!)
    }
    this.lastCheckpoint = { at, close: line.startsWith(`{"checkpoint":"close"`) }
  }

  /** What was found, once every line was pushed. */
  finish(): Report {
    const problems = [...this.problems]
    const last = this.lastCheckpoint
    const closed = last !== undefined && last.at === this.at && last.close
    if (this.at === 0) problems.push({ line: 0, what: "the log is empty" })
    else if (!closed && this.options.open !== true) {
      problems.push({
        line: this.at,
        what: last === undefined
          ? `the log ends at line ${this.at} with no checkpoint: lines after it may have been cut off (or its writer is still running: --open)`
          : `the log ends at line ${this.at} without a closing checkpoint: lines after line ${last.at} (the last checkpoint) may have been cut off, or its writer stopped without closing (or is still running: --open)`
      })
    }
    if (this.options.anchor !== undefined && this.anchorAt === undefined) {
      problems.push({
        line: this.at,
        what: `the anchor ${this.options.anchor} is not in the log: it was cut off or rewritten`
      })
    }
    if (this.options.publicKey !== undefined && last !== undefined && last.at < this.at) {
      this.notes.push({ line: last.at + 1, what: `lines from here on are after the last signed checkpoint` })
    }
    return {
      lines: this.at,
      checkpoints: this.checkpoints,
      signed: this.signed,
      head: this.prevHash,
      closed,
      keys: [...this.keys],
      problems: problems.sort((a, b) => a.line - b.line),
      notes: this.notes
    }
  }
}
