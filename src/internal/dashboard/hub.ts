/**
 * The pages listening: each is a Server-Sent Events stream, written from the fiber that
 * publishes (no fiber per page); a page that goes away is dropped at its next write.
 *
 * @internal
 */

const encoder = new TextEncoder()

/** The open streams and what is sent to all of them. */
export interface Hub {
  /** A new page's stream; `first` are the messages it gets before any other. */
  readonly open: (first: ReadonlyArray<readonly [string, unknown]>) => ReadableStream<Uint8Array>
  readonly send: (event: string, data: unknown) => void
  readonly size: () => number
  readonly close: () => void
}

const frame = (event: string, data: unknown) => encoder.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)

export const make = (): Hub => {
  const pages = new Set<ReadableStreamDefaultController<Uint8Array>>()
  const write = (page: ReadableStreamDefaultController<Uint8Array>, bytes: Uint8Array) => {
    try {
      page.enqueue(bytes)
    } catch {
      pages.delete(page)
    }
  }
  return {
    open: (first) => {
      let self: ReadableStreamDefaultController<Uint8Array> | undefined
      return new ReadableStream<Uint8Array>({
        start: (controller) => {
          self = controller
          pages.add(controller)
          for (const [event, data] of first) write(controller, frame(event, data))
        },
        cancel: () => {
          if (self !== undefined) pages.delete(self)
        }
      })
    },
    send: (event, data) => {
      if (pages.size === 0) return
      const bytes = frame(event, data)
      for (const page of pages) write(page, bytes)
    },
    size: () => pages.size,
    close: () => {
      for (const page of pages) {
        try {
          page.close()
        } catch {
          // closed by its reader already
        }
      }
      pages.clear()
    }
  }
}
