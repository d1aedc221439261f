/**
 * OAuth's Node side (part of `mcp-fleet/node`): the token store in files, shared by the
 * processes that use one directory (a lock file per key makes a refresh single-flight across
 * them, and a watch of the directory tells each one of tokens another wrote), and the
 * authorizer of a person at this machine, which listens on a loopback port for the redirect;
 * and the network guard, which keeps discovery off private addresses (SSRF).
 * The services they implement, the memory store and the headless authorizers are `OAuth`'s,
 * in the neutral entry.
 *
 * @since 0.3.0
 */
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as NodePath from "node:path"
import * as FileStore from "./internal/oauth/fileStore.js"
import * as Loopback from "./internal/oauth/loopback.js"
import * as Guard from "./internal/oauth/networkGuard.js"
import * as OAuth from "./OAuth.js"

/**
 * A store in a directory: one file per issuer and resource, mode 0600, written by rename.
 *
 * @since 0.3.0
 * @category constructors
 */
export const makeFileStore = (dir: string): OAuth.TokenStore => FileStore.make(dir)

/**
 * The directory the CLI keeps tokens in: `oauth` in the user config dir.
 *
 * @since 0.3.0
 * @category constructors
 */
export const storeDir = (configDir: string): string => NodePath.join(configDir, "oauth")

/**
 * The TokenStore of `makeFileStore(dir)`.
 *
 * @since 0.3.0
 * @category layers
 */
export const layerFileStore = (dir: string): Layer.Layer<OAuth.TokenStore> =>
  Layer.succeed(OAuth.TokenStore, FileStore.make(dir))

/**
 * The authorizer of a person at this machine: it listens on
 * `http://127.0.0.1:<callbackPort>/callback` (any free port when the server's config gives
 * none), has `show` present the authorization URL (print it, open a browser), and waits up
 * to five minutes for the redirect.
 *
 * @since 0.3.0
 * @category constructors
 */
export const makeLoopback = (show: (server: string, url: URL) => Effect.Effect<void>): OAuth.Authorizer =>
  Loopback.make(show)

/**
 * The network guard on undici: the authorization client of a server that is not on a
 * private, loopback or link-local address refuses to connect to one, checking the address
 * it connects to (resolved once). `lookup` resolves names: the system's by default.
 *
 * @since 0.4.0
 * @category constructors
 */
export const makeNetworkGuard = (lookup?: (host: string) => Promise<ReadonlyArray<string>>): OAuth.NetworkGuard =>
  Guard.make(lookup)

/**
 * A layer with the network guard on undici; the CLI provides it to its fleet.
 *
 * @since 0.4.0
 * @category layers
 */
export const layerNetworkGuard: Layer.Layer<OAuth.NetworkGuard> = Layer.sync(OAuth.NetworkGuard, () => Guard.make())
