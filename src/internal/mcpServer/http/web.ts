/**
 * The endpoint as a web-standard handler, `(Request) => Promise<Response>`, for runtimes and
 * frameworks built on fetch's types: the Request is given to the node:http endpoint as the
 * little of an IncomingMessage it reads (method, url, headers, the body's data events), and
 * what the endpoint writes on its ServerResponse becomes the Response — whole when it ends
 * at once, a streamed body once it writes an event.
 *
 * @internal
 */
import type * as http from "node:http"

type Listener = (value?: unknown) => void

// The Request as the endpoint reads it; its body is read once a listener asks for it.
const incoming = (request: Request): http.IncomingMessage => {
  const url = new URL(request.url)
  const headers: Record<string, string> = {}
  request.headers.forEach((value, key) => {
    headers[key] = value
  })
  // fetch never sends Host itself: the URL says it.
  headers["host"] ??= url.host
  const listeners: Record<string, Array<Listener>> = { data: [], end: [], error: [] }
  const emit = (event: string, value?: unknown) => {
    for (const listener of listeners[event] ?? []) listener(value)
  }
  let reading = false
  const read = () => {
    if (reading) return
    reading = true
    const body = request.body
    if (body === null) return void queueMicrotask(() => emit("end"))
    const reader = body.getReader()
    const pump = (): Promise<void> =>
      reader.read().then(({ done, value }) => {
        if (done) return emit("end")
        emit("data", Buffer.from(value))
        return pump()
      })
    pump().catch((error: unknown) => emit("error", error))
  }
  const message = {
    method: request.method,
    url: url.pathname + url.search,
    headers,
    on: (event: string, listener: Listener) => {
      listeners[event]?.push(listener)
      read()
      return message
    }
  }
  return message as unknown as http.IncomingMessage
}

// A ServerResponse whose answer is handed to `answer` as a Response: whole when it ends
// before anything is written, else as a stream that ends with it. A client that cancels the
// stream is a closed connection.
const outgoing = (answer: (response: Response) => void): http.ServerResponse => {
  let status = 200
  let headers: Record<string, string> = {}
  let stream: ReadableStreamDefaultController<Uint8Array> | undefined
  const closeListeners: Array<() => void> = []
  const close = () => {
    for (const listener of closeListeners.splice(0)) listener()
  }
  const encoder = new TextEncoder()
  const response = {
    headersSent: false,
    writableEnded: false,
    destroyed: false,
    socket: undefined,
    writeHead: (code: number, head: Record<string, string>) => {
      status = code
      headers = head
      response.headersSent = true
      return response
    },
    write: (chunk: string) => {
      if (stream === undefined) {
        answer(
          new Response(
            new ReadableStream<Uint8Array>({
              start: (controller) => void (stream = controller),
              cancel: () => {
                response.destroyed = true
                close()
              }
            }),
            { status, headers }
          )
        )
      }
      stream!.enqueue(encoder.encode(chunk))
      return true
    },
    end: (body?: string) => {
      if (response.writableEnded) return response
      response.writableEnded = true
      if (stream === undefined) answer(new Response(body === undefined ? null : body, { status, headers }))
      else {
        if (body !== undefined) stream.enqueue(encoder.encode(body))
        stream.close()
      }
      close()
      return response
    },
    destroy: () => {
      response.destroyed = true
      if (stream === undefined) answer(new Response(null, { status: 500 }))
      else stream.error(new Error("the answer was cut"))
      close()
      return response
    },
    once: (event: string, listener: () => void) => {
      if (event === "close") closeListeners.push(listener)
      return response
    }
  }
  return response as unknown as http.ServerResponse
}

/** The node:http endpoint `handler` as a web-standard handler. */
export const toWeb = (
  handler: (request: http.IncomingMessage, response: http.ServerResponse) => void
) =>
(request: Request): Promise<Response> => new Promise((resolve) => handler(incoming(request), outgoing(resolve)))
