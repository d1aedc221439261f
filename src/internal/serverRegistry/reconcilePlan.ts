/**
 * The diff of a reconcile: which servers to start, replace, stop or leave alone, decided
 * from the running servers' spec hashes alone, before anything happens.
 *
 * @internal
 */
import * as ServerSpec from "../../ServerSpec.js"

/**
 * What a reconcile will do.
 */
export interface Plan {
  readonly added: ReadonlyArray<ServerSpec.ServerSpec>
  readonly changed: ReadonlyArray<ServerSpec.ServerSpec>
  readonly unchanged: ReadonlyArray<string>
  readonly removed: ReadonlyArray<string>
  /** Names configured more than once; the last spec of each wins. */
  readonly duplicates: ReadonlyArray<string>
}

/**
 * Compares `desired` with the running servers, given as name → hash of the spec they run.
 */
export const plan = (running: ReadonlyMap<string, string>, desired: ReadonlyArray<ServerSpec.ServerSpec>): Plan => {
  const wanted = new Map<string, ServerSpec.ServerSpec>()
  const duplicates: Array<string> = []
  for (const spec of desired) {
    if (wanted.has(spec.name)) duplicates.push(spec.name)
    wanted.set(spec.name, spec)
  }
  const added: Array<ServerSpec.ServerSpec> = []
  const changed: Array<ServerSpec.ServerSpec> = []
  const unchanged: Array<string> = []
  for (const [name, spec] of wanted) {
    const hash = running.get(name)
    if (hash === undefined) added.push(spec)
    else if (hash === ServerSpec.hash(spec)) unchanged.push(name)
    else changed.push(spec)
  }
  const removed = [...running.keys()].filter((name) => !wanted.has(name))
  return { added, changed, unchanged, removed, duplicates }
}
