/**
 * Keeps the last `capacity` bytes written to it (a process's stderr), cheaply: chunks are
 * kept as they come and dropped from the front once the total exceeds the capacity.
 *
 * @internal
 */
export class ByteTail {
  private chunks: Array<Uint8Array> = []
  private size = 0
  constructor(readonly capacity: number) {}

  /** Appends a chunk, dropping the oldest bytes beyond the capacity. */
  push(chunk: Uint8Array): void {
    if (chunk.length >= this.capacity) {
      this.chunks = [chunk.subarray(chunk.length - this.capacity)]
      this.size = this.capacity
      return
    }
    this.chunks.push(chunk)
    this.size += chunk.length
    while (this.size - this.chunks[0]!.length >= this.capacity) {
      this.size -= this.chunks.shift()!.length
    }
  }

  /** The kept bytes as text, starting at a line boundary when some were dropped. */
  text(): string {
    const all = Buffer.concat(this.chunks, this.size)
    const start = all.length > this.capacity ? all.length - this.capacity : 0
    const text = all.subarray(start).toString("utf8")
    if (start === 0) return text
    const newline = text.indexOf("\n")
    return newline === -1 ? text : text.slice(newline + 1)
  }
}
