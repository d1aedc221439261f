/**
 * What each server of a fleet adds to the client's memory: the growth of the resident set
 * and of the JS heap (after a full collection, when `--expose-gc` allows one) while K more
 * servers start once K are ready (so the code they run is compiled already), divided by K.
 *
 * @module
 */

/** The client's memory now, in bytes. */
export interface Memory {
  readonly rss: number
  readonly heap: number
}

/** The resident set and the JS heap used, after a full collection if `--expose-gc` is on. */
export const memory = (): Memory => {
  ;(globalThis as { gc?: () => void }).gc?.()
  const { heapUsed, rss } = process.memoryUsage()
  return { rss, heap: heapUsed }
}

/** KB per server from `before` to `after` with `k` servers. */
export const perServer = (before: Memory, after: Memory, k: number) => ({
  rssKB: Math.round((after.rss - before.rss) / 1024 / k),
  heapKB: Math.round((after.heap - before.heap) / 1024 / k)
})
