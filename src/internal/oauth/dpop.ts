/**
 * DPoP (RFC 9449, the MCP DPoP extension SEP-1932): a key pair per server, kept with its
 * tokens as a private JWK (Redacted: it is a secret like the tokens), proofs on the token
 * requests by oauth4webapi's handle (its nonce cache, retried on `use_dpop_nonce`), and the
 * credentials of each MCP request made here: `Authorization: DPoP <token>` with a fresh proof
 * for the request's method and URL, carrying `ath` and the resource server's last nonce.
 *
 * The resource side signs synchronously with `@noble/curves` (P-256 for ES256, Ed25519 for
 * EdDSA), so that a request is still sent from the call that makes it (the transport's
 * per-call path has no await, and WebCrypto's `subtle.sign` is async only).
 *
 * @internal
 */
import { ed25519 } from "@noble/curves/ed25519.js"
import { p256 } from "@noble/curves/nist.js"
import * as Redacted from "effect/Redacted"
import type { webcrypto } from "node:crypto"
import * as oauth from "oauth4webapi"
import type { RequestAuth } from "../../StreamableHttp.js"
import { base64url, fromBase64, randomUUID, sha256Base64url, textBase64url } from "../crypto.js"
import type { Credentials, TokenRecord } from "./model.js"

/** The JWS algorithms this client makes proofs with, in order of preference. */
const ALGORITHMS = ["ES256", "EdDSA"] as const

type Algorithm = typeof ALGORITHMS[number]

const PARAMS: Record<Algorithm, webcrypto.EcKeyGenParams | webcrypto.Algorithm> = {
  ES256: { name: "ECDSA", namedCurve: "P-256" },
  EdDSA: { name: "Ed25519" }
}

/**
 * The algorithm to make proofs with at this authorization server, or undefined for no DPoP:
 * `setting` false never, true always (ES256 when the server names none we speak), and
 * undefined when the server advertises `dpop_signing_alg_values_supported`.
 */
export const algorithmFor = (as: oauth.AuthorizationServer, setting: boolean | undefined): Algorithm | undefined => {
  if (setting === false) return undefined
  const offered = as.dpop_signing_alg_values_supported ?? []
  return ALGORITHMS.find((alg) => offered.includes(alg)) ?? (setting === true ? "ES256" : undefined)
}

// The parts of a JWK a key is rebuilt from (no `key_ops` or `ext`, which would bind usages).
const PUBLIC_MEMBERS = ["kty", "crv", "x", "y"] as const

interface PrivateJwk {
  readonly alg: Algorithm
  readonly kty: string
  readonly crv: string
  readonly x: string
  readonly y?: string
  readonly d: string
}

const publicJwk = (jwk: PrivateJwk): Record<string, string> =>
  Object.fromEntries(PUBLIC_MEMBERS.flatMap((name) => (jwk[name] === undefined ? [] : [[name, jwk[name]!]])))

const parse = (key: Redacted.Redacted<string>): PrivateJwk => JSON.parse(Redacted.value(key)) as PrivateJwk

/** A new key pair for `alg`, as its private JWK (the public members included), Redacted. */
export const generateKey = async (alg: Algorithm): Promise<Redacted.Redacted<string>> => {
  const pair = await globalThis.crypto.subtle.generateKey(PARAMS[alg], true, [
    "sign",
    "verify"
  ]) as webcrypto.CryptoKeyPair
  const jwk = await globalThis.crypto.subtle.exportKey("jwk", pair.privateKey)
  return Redacted.make(JSON.stringify({ ...publicJwk(jwk as PrivateJwk), d: jwk.d, alg }))
}

// The handles of the keys in use, by public key (no secret in the map's keys), so that the
// nonce an authorization server gave goes with the next token request too (RFC 9449 §8).
const handles = new Map<string, Promise<oauth.DPoPHandle>>()
const MAX_HANDLES = 64

/** oauth4webapi's handle for the token requests with a stored key: one per key in this process. */
export const handle = (client: oauth.Client, key: Redacted.Redacted<string>): Promise<oauth.DPoPHandle> => {
  const jwk = parse(key)
  const id = `${jwk.x}.${jwk.y ?? ""}`
  const known = handles.get(id)
  if (known !== undefined) return known
  if (handles.size >= MAX_HANDLES) handles.delete(handles.keys().next().value!)
  const made = makeHandle(client, jwk)
  handles.set(id, made)
  made.catch(() => handles.delete(id))
  return made
}

const makeHandle = async (client: oauth.Client, jwk: PrivateJwk): Promise<oauth.DPoPHandle> => {
  const params = PARAMS[jwk.alg]
  const publicKey = await globalThis.crypto.subtle.importKey("jwk", publicJwk(jwk), params, true, ["verify"])
  const privateKey = await globalThis.crypto.subtle.importKey(
    "jwk",
    { ...publicJwk(jwk), d: jwk.d },
    params,
    false,
    ["sign"]
  )
  return oauth.DPoP(client, { publicKey, privateKey })
}

const encoder = new TextEncoder()

/** One server's proofs: its key, and the nonce its resource server gave last. */
export class Proofs {
  /** The resource server's nonce (`DPoP-Nonce`), sent in every proof once given. */
  nonce: string | undefined
  private readonly key: Uint8Array
  private readonly header: string
  private readonly ecdsa: boolean

  constructor(readonly source: Redacted.Redacted<string>) {
    const jwk = parse(source)
    this.key = fromBase64(jwk.d)
    this.header = textBase64url(JSON.stringify({ typ: "dpop+jwt", alg: jwk.alg, jwk: publicJwk(jwk) }))
    this.ecdsa = jwk.alg === "ES256"
  }

  /** A proof for one request; `htu` is the URL without its query and fragment. */
  proof(method: string, url: string, ath: string, nowMs: number): string {
    const target = new URL(url)
    const payload = {
      jti: randomUUID(),
      htm: method,
      htu: `${target.origin}${target.pathname}`,
      iat: Math.floor(nowMs / 1000),
      ath,
      ...(this.nonce === undefined ? {} : { nonce: this.nonce })
    }
    const input = `${this.header}.${textBase64url(JSON.stringify(payload))}`
    const bytes = encoder.encode(input)
    // ES256's JWS signature is r || s (what noble's "compact" format is), over SHA-256 of the input.
    const signature = this.ecdsa ? p256.sign(bytes, this.key, { prehash: true }) : ed25519.sign(bytes, this.key)
    return `${input}.${base64url(signature)}`
  }
}

/**
 * The credentials of each request with a DPoP-bound token: `DPoP <token>` and a fresh proof;
 * every answer's `DPoP-Nonce` is kept, and a 401 `use_dpop_nonce` has the request sent again.
 */
export const requestAuth = (proofs: Proofs, token: Redacted.Redacted<string>, now: () => number): RequestAuth => {
  const value = Redacted.value(token)
  const authorization = `DPoP ${value}`
  const ath = sha256Base64url(value)
  return {
    headers: (method, url) => ({ authorization, dpop: proofs.proof(method, url, ath, now()) }),
    answered: (status, header) => {
      const nonce = header("dpop-nonce")
      if (nonce !== undefined) proofs.nonce = nonce
      return status === 401 && nonce !== undefined && /use_dpop_nonce/.test(header("www-authenticate") ?? "")
    }
  }
}

/**
 * What a request carries for a record: its token, and a DPoP-bound one's proofs. One per
 * server: the proofs of its current key, and so the resource server's nonce, live across
 * its connections.
 */
export const credentials = (now: () => number) => {
  let proofs: Proofs | undefined
  return (record: TokenRecord): Credentials => {
    if (record.tokenType !== "dpop" || record.dpopKey === undefined) {
      return { token: record.accessToken, perRequest: undefined }
    }
    if (proofs === undefined || Redacted.value(proofs.source) !== Redacted.value(record.dpopKey)) {
      proofs = new Proofs(record.dpopKey)
    }
    return { token: record.accessToken, perRequest: requestAuth(proofs, record.accessToken, now) }
  }
}
