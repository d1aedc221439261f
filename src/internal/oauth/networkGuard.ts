/**
 * The NetworkGuard on Node (undici): a name is resolved once, the address chosen is checked,
 * and the connection is made to that very address (TLS still verifies the name), so DNS
 * cannot answer a public address to the check and a private one to the connection.
 *
 * @internal
 */
import * as dns from "node:dns"
import * as net from "node:net"
import type { buildConnector } from "undici"
import { loadUndici } from "../undici.js"
import { isPrivateAddress, isPrivateHost, refusal } from "./http.js"
import type { NetworkGuard } from "./model.js"

/** Resolves a host name to its addresses, in the order to try them. */
export type Lookup = (host: string) => Promise<ReadonlyArray<string>>

const systemLookup: Lookup = (host) =>
  dns.promises.lookup(host, { all: true, verbatim: true }).then((found) => found.map((entry) => entry.address))

const bare = (hostname: string) => hostname.replace(/^\[|\]$/g, "")

// A connector that connects to the checked address of the request's host.
const checkedConnector =
  (lookup: Lookup, connect: buildConnector.connector): buildConnector.connector => (options, callback) => {
    const host = bare(options.hostname)
    const addresses = net.isIP(host) !== 0 ? Promise.resolve([host]) : lookup(host)
    addresses.then(
      (found) => {
        const address = found[0]
        if (address === undefined) return callback(new Error(`${host} has no address`), null)
        if (isPrivateAddress(address)) return callback(new Error(refusal(options.hostname)), null)
        connect({
          ...options,
          hostname: address,
          ...(net.isIP(host) === 0 ? { servername: options.servername ?? host } : {})
        }, callback)
      },
      (error: Error) => callback(error, null)
    )
  }

/**
 * A guard on undici (loaded by the first guarded fetch: a command that makes none never loads
 * it); `lookup` resolves names (the system's by default; tests give their own).
 */
export const make = (lookup: Lookup = systemLookup): NetworkGuard => {
  let guarded: Promise<typeof globalThis.fetch> | undefined
  const load = () =>
    guarded ??= loadUndici().then(({ Agent, buildConnector, fetch }) => {
      const dispatcher = new Agent({ connect: checkedConnector(lookup, buildConnector({})) })
      return ((input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) =>
        fetch(input, { ...init, dispatcher })) as unknown as typeof globalThis.fetch
    })
  const guardedFetch: typeof globalThis.fetch = (input, init) => load().then((fetch) => fetch(input, init))
  return {
    fetch: (allowPrivate) => allowPrivate ? (input, init) => globalThis.fetch(input, init) : guardedFetch,
    isPrivate: async (host) => isPrivateHost(host) || (await lookup(bare(host))).some(isPrivateAddress)
  }
}
