/**
 * UTF-8 text from a body's chunks, a character split between two chunks kept for the next:
 * what `node:string_decoder` does, on any runtime. It decodes with one shared `TextDecoder`
 * and no per-call options (whose checks cost more than decoding a small event), so it only
 * finds the last whole character itself. A byte-order mark is kept as text, as StringDecoder
 * keeps it.
 *
 * @internal
 */

const decoder = new TextDecoder("utf-8", { ignoreBOM: true })

/** Where the last whole character of `bytes` ends (`bytes.length` when none is cut off). */
const wholeEnd = (bytes: Uint8Array): number => {
  const length = bytes.length
  let start = length - 1
  while (start >= 0 && start > length - 4 && (bytes[start]! & 0xc0) === 0x80) start--
  if (start < 0) return length
  const lead = bytes[start]!
  const size = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1
  return start + size <= length ? length : start
}

/** A decoder of one stream of chunks. */
export class Utf8Text {
  private pending: Uint8Array | undefined

  /** The text of `chunk`, with what the previous one left, up to its last whole character. */
  write(chunk: Uint8Array): string {
    let bytes = chunk
    if (this.pending !== undefined) {
      bytes = new Uint8Array(this.pending.length + chunk.length)
      bytes.set(this.pending)
      bytes.set(chunk, this.pending.length)
      this.pending = undefined
    }
    const end = wholeEnd(bytes)
    if (end === bytes.length) return decoder.decode(bytes)
    this.pending = bytes.slice(end)
    return end === 0 ? "" : decoder.decode(bytes.subarray(0, end))
  }
}
